/**
 * fast-check arbitraries from the JSON schemas of the OpenAPI document, for the HTTP fuzz test:
 * values that follow a schema (ids drawn mostly from ids that exist, so valid requests reach the
 * stores), and the mutations a careless or hostile client sends (wrong types, dropped and unknown
 * fields, any JSON at all).
 */
import fc from 'fast-check';
import { ID_PATTERN, isId } from '../../src/kernel/ids.js';
import type { JsonSchema } from './openapi.js';

/** What the generated values may refer to. */
export interface ArbContext {
  /** Ids that exist (items, users), drawn most of the time where a schema wants an id. */
  ids: readonly string[];
  /** `FRESHET_EMBEDDING_DIM` of the app, so some embeddings have the right length. */
  embeddingDim: number;
  /** Overrides by property name (times near the app's clock, where random numbers would always be out of range). */
  byName: Record<string, fc.Arbitrary<unknown>>;
}

const INT32_MAX = 2 ** 31 - 1;

/** Values that follow `schema` (as far as this subset of JSON Schema goes: what our TypeBox schemas use). */
export function valuesOf(schema: JsonSchema, ctx: ArbContext, name?: string): fc.Arbitrary<unknown> {
  const override = name === undefined ? undefined : ctx.byName[name];
  if (override) return fc.oneof({ weight: 4, arbitrary: override }, { weight: 1, arbitrary: plain(schema, ctx) });
  return plain(schema, ctx);
}

function plain(schema: JsonSchema, ctx: ArbContext): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as unknown[]));
  const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (branches) return fc.oneof(...branches.map((b) => plain(b, ctx)));
  switch (schema.type) {
    case 'string':
      return stringOf(schema, ctx);
    case 'integer': {
      const lo = Math.max(Number(schema.minimum ?? -1000), -INT32_MAX);
      const hi = Math.min(Number(schema.maximum ?? 1_000_000), INT32_MAX);
      return fc.integer({ min: lo, max: Math.max(lo, hi) });
    }
    case 'number':
      return fc.double({
        min: Number(schema.minimum ?? -1e6),
        max: Number(schema.maximum ?? 1e12),
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return arrayOf(schema, ctx);
    case 'object':
      return objectOf(schema, ctx);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringOf(schema: JsonSchema, ctx: ArbContext): fc.Arbitrary<string> {
  const min = Number(schema.minLength ?? 0);
  const max = Math.min(Number(schema.maxLength ?? 24), 64);
  if (schema.pattern === ID_PATTERN) {
    return fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...ctx.ids) },
      { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_.-]{1,64}$/).filter(isId) },
    );
  }
  if (typeof schema.pattern === 'string') {
    try {
      const re = new RegExp(schema.pattern);
      return fc.stringMatching(re).filter((s) => s.length >= min && s.length <= Number(schema.maxLength ?? Infinity));
    } catch {
      // a pattern fast-check cannot generate from: plain strings (the validator refuses most of them)
    }
  }
  return fc.string({ minLength: min, maxLength: Math.max(min, max) });
}

function arrayOf(schema: JsonSchema, ctx: ArbContext): fc.Arbitrary<unknown[]> {
  const items = (schema.items ?? {}) as JsonSchema;
  const min = Number(schema.minItems ?? 0);
  const max = Math.max(min, Math.min(Number(schema.maxItems ?? 4), 4));
  const small = fc.array(plain(items, ctx), { minLength: min, maxLength: max });
  if (items.type === 'number' && Number(schema.maxItems ?? 0) >= ctx.embeddingDim) {
    const exact = fc.array(fc.double({ min: -1, max: 1, noNaN: true }), {
      minLength: ctx.embeddingDim,
      maxLength: ctx.embeddingDim,
    });
    return fc.oneof(exact, small);
  }
  return small;
}

function objectOf(schema: JsonSchema, ctx: ArbContext): fc.Arbitrary<Record<string, unknown>> {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const shape = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, valuesOf(s, ctx, k)]));
  return fc.record(shape, { requiredKeys: (schema.required ?? []) as string[] }) as fc.Arbitrary<
    Record<string, unknown>
  >;
}

/**
 * A value of `schema`, then maybe broken: any JSON instead, a required field dropped, an unknown field
 * added, or one field replaced by any JSON.
 */
export function mutatedValueOf(schema: JsonSchema, ctx: ArbContext): fc.Arbitrary<unknown> {
  return fc
    .tuple(valuesOf(schema, ctx), fc.nat(3), fc.jsonValue({ maxDepth: 2 }), fc.string({ maxLength: 12 }))
    .map(([v, kind, junk, key]) => {
      if (kind === 0 || v === null || typeof v !== 'object') return junk;
      const target = (Array.isArray(v) ? v[0] : v) as Record<string, unknown> | undefined;
      if (!target || typeof target !== 'object') return junk;
      const keys = Object.keys(target);
      if (kind === 1 && keys.length > 0) delete target[keys[key.length % keys.length]!];
      else if (kind === 2) target[key || 'extra'] = junk;
      else if (keys.length > 0) target[keys[key.length % keys.length]!] = junk;
      return v;
    });
}
