/**
 * The served OpenAPI document as test data: its operations (method, path, parameters by place, body
 * schema, documented responses) and a check of an answer against what the document promises for it —
 * the status is documented, the body is an envelope `{code, msg, data}` whose code matches the status
 * (src/kernel/errors.ts), and the body validates against the documented schema of that status.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyInstance } from 'fastify';
import { ErrorCodes } from '../../src/kernel/errors.js';

export type JsonSchema = Record<string, unknown>;

export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** OpenAPI path, e.g. `/v1/items/{id}`. */
  path: string;
  /** `GET /v1/items/{id}`. */
  key: string;
  params: Param[];
  body?: JsonSchema;
  /** Documented response schemas by status. */
  responses: Record<string, JsonSchema | undefined>;
}

/** Every operation of the document served at `/docs/json`. */
export async function loadOperations(app: FastifyInstance): Promise<Operation[]> {
  const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json() as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(methods)) {
      const responses: Record<string, JsonSchema | undefined> = {};
      for (const [status, r] of Object.entries(
        (op.responses ?? {}) as Record<string, { content?: Record<string, { schema?: JsonSchema }> }>,
      )) {
        responses[status] = r.content?.['application/json']?.schema;
      }
      const body = (op.requestBody as { content?: Record<string, { schema?: JsonSchema }> } | undefined)?.content?.[
        'application/json'
      ]?.schema;
      const method = m.toUpperCase() as Operation['method'];
      ops.push({ method, path, key: `${method} ${path}`, params: (op.parameters ?? []) as Param[], body, responses });
    }
  }
  return ops;
}

type Validate = ((data: unknown) => boolean) & { errors?: unknown };
const build = AjvCompiler()({}, { customOptions: { strict: false, allErrors: true } }) as unknown as (route: {
  schema: JsonSchema;
}) => Validate;
const validators = new Map<JsonSchema, Validate>();

/**
 * What is wrong with an answer of `op`, or null when it keeps the document's promises. A 404 "no route"
 * is not the route's answer (a mutated path matched no route) and is checked as an envelope only.
 * `storeDown`: a store was made unreachable on purpose, so 503 is expected.
 */
export function answerProblem(
  op: Operation | undefined,
  status: number,
  body: string,
  contentType: string | undefined,
  opts: { storeDown?: boolean } = {},
): string | null {
  if (status >= 500 && !(status === 503 && opts.storeDown))
    return `a ${status} (no input may cause a 5xx): ${body.slice(0, 200)}`;
  if (!/^application\/json/.test(contentType ?? ''))
    return `content-type ${contentType} is not JSON: ${body.slice(0, 100)}`;
  let json: { code?: unknown; msg?: unknown; data?: unknown };
  try {
    json = JSON.parse(body);
  } catch {
    return `not JSON: ${body.slice(0, 100)}`;
  }
  if (typeof json.code !== 'number' || typeof json.msg !== 'string' || !('data' in json))
    return `not an envelope: ${body.slice(0, 200)}`;
  if (status < 300) {
    if (json.code !== 0 || json.msg !== 'success') return `a ${status} with code ${json.code}`;
  } else {
    const entry = Object.entries(ErrorCodes).find(([, c]) => c.code === json.code);
    if (!entry) return `code ${json.code} is not in src/kernel/errors.ts`;
    if (entry[1].status !== status)
      return `code ${json.code} (${entry[0]}) answered with ${status}, catalogued as ${entry[1].status}`;
    if (json.msg.length === 0) return 'an error without a message';
  }
  if (!op) return null;
  if (status === 404 && /^no route /.test(json.msg)) return null; // the request matched no route at all
  if (!(String(status) in op.responses))
    return `${op.key} answered ${status}, which its document does not list (${Object.keys(op.responses).join(', ')}): ${json.msg}`;
  const schema = op.responses[String(status)];
  if (schema) {
    let v = validators.get(schema);
    if (!v) validators.set(schema, (v = build({ schema })));
    if (!v(json))
      return `${op.key} ${status} body does not match its documented schema: ${JSON.stringify(v.errors).slice(0, 300)}`;
  }
  return null;
}
