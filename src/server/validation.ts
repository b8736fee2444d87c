/**
 * Request validation at the edge: the Ajv compilers (query strings coerced by their schema, bodies,
 * params and headers strict) and the messages a person can act on.
 *
 * Compilers: Fastify lets the validator differ per part of the request (`httpPart`). A query string
 * is all text, so `?limit=20` is coerced to the schema's integer and range-checked there (fastify/demo
 * does the same); a JSON body keeps its types, so `{"limit": "20"}` stays a mistake. Every number a
 * query string is coerced to must be finite ({@link finiteQuery}): Ajv turns `1e400` into Infinity and
 * then skips its range keywords, so `?limit=1e400` passed `maximum: 100`.
 *
 * Messages: Ajv reports a failed `anyOf` as every branch's error plus "must match a schema in anyOf";
 * {@link describeValidation} picks the branch the value was meant for (the one whose type matches)
 * and says, for the one failing field: where it is (`body/0/url`, `query parameter limit`), what was
 * wrong with the value, and what is allowed (the allowed values of an enum, the range of a number,
 * the schema's own description of a pattern). Errors carry `schema`/`parentSchema`/`data` because the
 * compilers run Ajv with `verbose`.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';
import { ID_PATTERN, ID_RULE } from '../kernel/ids.js';
import type { ErrorName } from '../kernel/errors.js';
import { preview } from '../kernel/preview.js';

/** Ajv options of every part: one error (allErrors invites a DoS), no silent changes to the input. */
const STRICT = {
  allErrors: false,
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: true,
  verbose: true,
} as const;

/** What Fastify hands a validator builder for one part of one route. */
interface RouteValidation {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
}
type BuildValidator = (route: RouteValidation) => unknown;

/**
 * The `schemaController` of the app: query strings coerced by their schema, everything else strict.
 * Both compilers come from `@fastify/ajv-compiler`, Fastify's own (formats included).
 */
export function schemaController(): NonNullable<FastifyServerOptions['schemaController']> {
  const factory = AjvCompiler();
  const buildValidator = (externalSchemas: Record<string, never>) => {
    const strict = factory(externalSchemas, { customOptions: STRICT }) as unknown as BuildValidator;
    const coerced = factory(externalSchemas, {
      customOptions: { ...STRICT, coerceTypes: true },
    }) as unknown as BuildValidator;
    return (route: RouteValidation) =>
      route.httpPart === 'querystring' ? finiteQuery(coerced(route) as AjvValidate, route.schema) : strict(route);
  };
  return {
    compilersFactory: {
      buildValidator: buildValidator as unknown as NonNullable<
        NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
      >['buildValidator'],
    },
  };
}

/** A compiled Ajv validator as Fastify calls it: `errors` set when it returns false. */
type AjvValidate = ((data: unknown, ctx?: unknown) => boolean) & { errors?: SchemaError[] | null; schemaEnv?: unknown };

/**
 * Wraps the coerced validator of a query string so that no number it hands a route is infinite. Ajv's
 * coercion reads `"1e400"`, `"Infinity"` or `"-1e400"` as ±Infinity, and its `minimum` / `maximum` code
 * runs only for finite numbers (it counts on the type check, which the coercion has passed), so an
 * infinite `limit` reached the routes (a whole catalog in one page; a 500 on hot). Here, after Ajv, a
 * non-finite number is refused as the bound it breaks (the parameter's range, with the text sent), or as
 * not a finite number when the schema states no bound: one place, so no route can forget it.
 */
export function finiteQuery(validate: AjvValidate, schema: unknown): AjvValidate {
  const properties = (schema as { properties?: Record<string, Record<string, unknown>> } | null)?.properties ?? {};
  const wrapped: AjvValidate = (data, ctx) => {
    const sent = data !== null && typeof data === 'object' ? { ...(data as Record<string, unknown>) } : {};
    if (!validate(data, ctx)) {
      wrapped.errors = validate.errors ?? null;
      return false;
    }
    wrapped.errors = null;
    if (data === null || typeof data !== 'object') return true;
    for (const [name, value] of Object.entries(data as Record<string, unknown>)) {
      const bad = (Array.isArray(value) ? value : [value]).find((v) => typeof v === 'number' && !Number.isFinite(v));
      if (bad === undefined) continue;
      wrapped.errors = [infiniteError(name, bad as number, sent[name], properties[name])];
      return false;
    }
    return true;
  };
  if (validate.schemaEnv !== undefined) wrapped.schemaEnv = validate.schemaEnv;
  return wrapped;
}

/** The Ajv-shaped error for an infinite number coerced from query parameter `name` (see {@link finiteQuery}). */
function infiniteError(
  name: string,
  value: number,
  sent: unknown,
  parent: Record<string, unknown> | undefined,
): SchemaError {
  const keyword = value > 0 ? 'maximum' : 'minimum';
  const instancePath = `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  if (parent && typeof parent[keyword] === 'number')
    return {
      keyword,
      instancePath,
      schemaPath: `#/properties/${name}/${keyword}`,
      params: {},
      parentSchema: parent,
      data: sent,
    };
  return {
    keyword: 'finite',
    instancePath,
    schemaPath: `#/properties/${name}`,
    params: {},
    message: `must be a finite number (got ${preview(sent)})`,
    data: sent,
  };
}

/** The parts of an Ajv error (with `verbose`) this module reads. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
  schema?: unknown;
  parentSchema?: Record<string, unknown>;
  data?: unknown;
}

/** What a failed validation is answered with. */
export interface ValidationAnswer {
  name: Extract<ErrorName, 'INVALID_INPUT' | 'INVALID_ID'>;
  msg: string;
}

/**
 * The answer to a failed validation of `context` (`body`, `querystring`, `params`, `headers`):
 * INVALID_ID when the failing value is an id, else INVALID_INPUT; the message names the field, the
 * problem and what is allowed.
 */
export function describeValidation(errors: readonly SchemaError[], context: string | undefined): ValidationAnswer {
  const d = decisive(errors);
  if (!d) return { name: 'INVALID_INPUT', msg: `${context ?? 'input'} is not valid` };
  const isIdPattern = d.kind === 'error' && d.e.keyword === 'pattern' && d.e.schema === ID_PATTERN;
  return {
    name: isIdPattern ? 'INVALID_ID' : 'INVALID_INPUT',
    msg: d.kind === 'error' ? sentence(d.e, context) : summary(d, context),
  };
}

/** A failure the message is about: an Ajv error, or an `anyOf` over constants / types, summarised. */
type Decisive =
  | { kind: 'error'; e: SchemaError }
  | { kind: 'values'; instancePath: string; values: unknown[]; data: unknown }
  | { kind: 'types'; instancePath: string; types: string[]; data: unknown };

/**
 * The error that explains the failure. Ajv stops at the first failing keyword (allErrors off), so the
 * last error is the outermost failure; when it is an `anyOf`, the branch errors before it are grouped
 * by branch and the branch meant for the value (not failing on its type at the same place) explains it.
 */
function decisive(errors: readonly SchemaError[]): Decisive | undefined {
  const last = errors[errors.length - 1];
  if (!last) return undefined;
  if (last.keyword !== 'anyOf' && last.keyword !== 'oneOf') return { kind: 'error', e: errors[0]! };
  const branches = Array.isArray(last.schema) ? (last.schema as Record<string, unknown>[]) : [];
  const byBranch = new Map<number, SchemaError[]>();
  for (const err of errors.slice(0, -1)) {
    const m = err.schemaPath.startsWith(`${last.schemaPath}/`)
      ? /^(\d+)/.exec(err.schemaPath.slice(last.schemaPath.length + 1))
      : null;
    if (!m) continue;
    const i = Number(m[1]);
    byBranch.set(i, [...(byBranch.get(i) ?? []), err]);
  }
  if (branches.length > 0 && branches.every((b) => 'const' in b)) {
    return { kind: 'values', instancePath: last.instancePath, values: branches.map((b) => b.const), data: last.data };
  }
  const mismatch = (errs: SchemaError[]) =>
    errs.length === 1 && errs[0]!.keyword === 'type' && errs[0]!.instancePath === last.instancePath;
  for (const [, errs] of [...byBranch.entries()].sort((a, b) => a[0] - b[0]))
    if (!mismatch(errs)) return decisive(errs);
  const types = branches
    .map((b) => (typeof b.type === 'string' ? b.type : 'other'))
    .filter((t, i, all) => all.indexOf(t) === i);
  return { kind: 'types', instancePath: last.instancePath, types, data: last.data };
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  object: 'an object',
  array: 'an array',
  boolean: 'true or false',
  null: 'null',
};

/** How the client names the place: `body/0/url`, `query parameter limit`, `path parameter id`, `header x-freshet-now`. */
export function fieldName(context: string | undefined, instancePath: string): string {
  const parts = instancePath.split('/').slice(1).map(unescapePointer);
  switch (context) {
    case 'querystring':
      return parts.length ? `query parameter ${parts.join('/')}` : 'query string';
    case 'params':
      return parts.length ? `path parameter ${parts.join('/')}` : 'path';
    case 'headers':
      return parts.length ? `header ${parts.join('/')}` : 'headers';
    default:
      return [context ?? 'body', ...parts].join('/');
  }
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The message for an `anyOf` over constants (an enum) or over types. */
function summary(d: Exclude<Decisive, { kind: 'error' }>, context: string | undefined): string {
  const field = fieldName(context, d.instancePath);
  if (d.kind === 'values') return `${field} must be one of ${d.values.map(show).join(', ')} (got ${show(d.data)})`;
  return `${field} must be ${d.types.map((t) => TYPE_WORDS[t] ?? t).join(' or ')} (got ${kindOf(d.data)})`;
}

/** The message for one decisive Ajv error. */
function sentence(e: SchemaError, context: string | undefined): string {
  const field = fieldName(context, e.instancePath);
  const p = e.params;
  const parent = e.parentSchema ?? {};
  switch (e.keyword) {
    case 'required':
      return `${fieldName(context, `${e.instancePath}/${textOf(p.missingProperty)}`)} is required${fieldsOf(parent)}`;
    case 'additionalProperties':
      return `${fieldName(context, `${e.instancePath}/${textOf(p.additionalProperty)}`)} is not a known field${fieldsOf(parent, 'allowed')}`;
    case 'type':
      return `${field} must be ${typeWords(p.type)} (got ${kindOf(e.data)})`;
    case 'const':
      return `${field} must be ${show(p.allowedValue)} (got ${show(e.data)})`;
    case 'enum':
      return `${field} must be one of ${(p.allowedValues as unknown[]).map(show).join(', ')} (got ${show(e.data)})`;
    case 'pattern':
      return `${field} has the wrong form (got ${show(e.data)}); expected ${describePattern(parent, textOf(p.pattern))}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${field} must be ${numberRange(parent)} (got ${show(e.data)})`;
    case 'minLength':
    case 'maxLength':
      return `${field} must be ${sizeRange(parent, 'minLength', 'maxLength', 'characters')} (got ${typeof e.data === 'string' ? e.data.length : '?'})`;
    case 'minItems':
    case 'maxItems':
      return `${field} must hold ${sizeRange(parent, 'minItems', 'maxItems', 'entries')} (got ${Array.isArray(e.data) ? e.data.length : '?'})`;
    default:
      return `${field} ${e.message ?? 'is not valid'}`;
  }
}

function typeWords(type: unknown): string {
  const types: unknown[] = Array.isArray(type) ? type : textOf(type).split(',');
  return types.map((t) => TYPE_WORDS[textOf(t)] ?? textOf(t)).join(' or ');
}

function fieldsOf(schema: Record<string, unknown>, word = 'fields'): string {
  const props = schema.properties && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];
  return props.length ? ` (${word}: ${props.join(', ')})` : '';
}

function describePattern(schema: Record<string, unknown>, pattern: string): string {
  if (pattern === ID_PATTERN) return `an id: ${ID_RULE}`;
  return typeof schema.description === 'string' ? schema.description : `text matching ${pattern}`;
}

function numberRange(schema: Record<string, unknown>): string {
  const what = schema.type === 'integer' ? 'an integer' : 'a number';
  const lo = schema.minimum ?? schema.exclusiveMinimum;
  const hi = schema.maximum ?? schema.exclusiveMaximum;
  const loWord = schema.exclusiveMinimum !== undefined ? 'above' : 'from';
  if (lo !== undefined && hi !== undefined) return `${what} ${loWord} ${preview(lo)} to ${preview(hi)}`;
  if (lo !== undefined) return `${what} ${schema.exclusiveMinimum !== undefined ? '>' : '≥'} ${preview(lo)}`;
  return `${what} ${schema.exclusiveMaximum !== undefined ? '<' : '≤'} ${preview(hi)}`;
}

function sizeRange(schema: Record<string, unknown>, minKey: string, maxKey: string, unit: string): string {
  const lo = schema[minKey] as number | undefined;
  const hi = schema[maxKey] as number | undefined;
  if (lo !== undefined && hi !== undefined) return `${lo} to ${hi} ${unit}`;
  if (lo !== undefined) return `at least ${lo} ${unit}`;
  return `at most ${preview(hi)} ${unit}`;
}

/** A value as shown in a message: the kernel's one safe preview (never throws, bounded depth and length). */
const show = (value: unknown): string => preview(value);

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number' && Number.isInteger(value)) return `the integer ${value}`;
  return `${typeof value === 'string' ? 'the string' : typeof value === 'number' ? 'the number' : typeof value === 'boolean' ? '' : typeof value} ${show(value)}`.trim();
}

/** A string as it is, anything else as its preview: what Ajv puts in `params` is ours, but never trusted to be text. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : preview(value);
}
