/**
 * The hostile-client fuzz of the whole HTTP API, shared by the bounded test (test/http/fuzz.test.ts)
 * and the long run (`npm run fuzz`, bench/fuzz.ts); free of vitest so the benchmark can import it.
 *
 * Requests are generated from the served OpenAPI document (test/support/openapi.ts): valid and mutated
 * bodies, path parameters, query strings and headers, with and without (good, foreign, expired, garbage)
 * tokens, plus what a hostile client sends (issue 21.1): JSON nested up to the body limit (`[[[…]]]`,
 * `{"a":{"a":…}}`, as the whole body or as one field of a valid one), arbitrary extra headers, and
 * paths that match no route, numbers a query string turns into ±Infinity or reads in exponent form
 * ({@link HOSTILE_NUMBERS}), and texts NFKD expands up to 18 times ({@link EXPANDING_TEXTS}: titles, texts,
 * tags and muted phrases of U+FDFA). {@link runFuzz} sends them through `app.inject` and judges every answer:
 * no 5xx, an envelope whose code matches its status, a documented status and body, no internal message,
 * and — after every refused write — the stores' truth unchanged ({@link stateDigest}).
 */
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../src/kernel/sql/sql.js';
import { mintReaderToken } from '../../src/kernel/http/tokens.js';
import { answerProblem, type JsonSchema, type Operation } from './openapi.js';
import { mutatedValueOf, valuesOf, type ArbContext } from './schema-arbitrary.js';

/** One generated request, with what is needed to judge its answer. */
export interface FuzzRequest {
  op?: Operation;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

/** What the generator draws from: the app's body limit, ids that exist, the bearer values by name. */
export interface FuzzSetup {
  ctx: ArbContext;
  bodyLimit: number;
  /** Authorization header values: `none` (absent), `service`, `reader`, `other`, `expired`, `forged`, … */
  tokens: Record<string, string>;
  /** Request times to try in `X-Freshet-Now` (epoch ms as text). */
  times: readonly string[];
}

const BAD_SEGMENTS = [
  '.',
  '..',
  '%zz',
  '%',
  '%00',
  '%2F',
  'a%3Ab',
  '%7Bx%7D',
  '%C3%A9',
  'a'.repeat(65),
  'a'.repeat(101),
  '%20',
  'a..b',
];

/** What a client writes for a number in a query string that is no plain integer: ±Infinity once coerced, exponents, hex. */
export const HOSTILE_NUMBERS = [
  '1e400',
  '-1e400',
  'Infinity',
  '-Infinity',
  'NaN',
  '1e308',
  '1e2',
  '1e1',
  '2e1',
  '1e-3',
  '0x10',
  '9007199254740993',
  ' 5',
  '-0',
] as const;

/**
 * Texts whose NFKD form is many times longer (U+FDFA: 18 letters; U+FB03 ﬃ: 3; U+0390: 3 with marks): the
 * muted-word fold and the embedder must stay bounded whatever they are (src/kernel/items/fold.ts).
 */
function expandingText(maxChars: number): fc.Arbitrary<string> {
  const units = ['\uFDFA', '\uFB03', '\u0390', '\u1E9B\u0323', '\uFDFA spam '];
  return fc
    .tuple(fc.constantFrom(...units), fc.constantFrom(1, 10, 100, 1000, 10_000))
    .map(([u, n]) => u.repeat(Math.max(1, Math.min(n, Math.floor(maxChars / u.length)))));
}

/** Overrides of the texts a muted word or the embedder reads: expanding texts some of the time. */
function expandingTexts(): Record<string, fc.Arbitrary<unknown>> {
  return {
    title: fc.oneof(fc.string({ maxLength: 40 }), expandingText(1000)),
    text: fc.oneof(fc.string({ maxLength: 200 }), expandingText(100_000)),
    phrase: fc.oneof(fc.constantFrom('spam', 'Café'), expandingText(100)),
  };
}

/** The nesting shapes of a deep value: opening, closing. */
const NESTINGS: readonly [string, string][] = [
  ['[', ']'],
  ['{"a":', '}'],
  ['[{"k":', '}]'],
  ['{"kind":[', ']}'],
];

/** The fixed part of a fuzz run: the seeded ids u1, u2 (readers), a1, a2 (authors), i1–i3 (items). */
export const FUZZ_IDS = ['i1', 'i2', 'i3', 'u1', 'u2', 'a1', 'a2'];

/**
 * The setup of a fuzz run against an app whose virtual now is `nowMs` (ms): publish times within 30 days of
 * it or far out, view times, the tokens a client may send (none, the service key, u1's and u2's reader
 * tokens signed with `secret`, expired, forged, a 100-year one, garbage, Basic) and `X-Freshet-Now` values.
 * `extraTimes`: more `X-Freshet-Now` values to try.
 */
export async function fuzzSetupFor(
  nowMs: number,
  o: { serviceKey: string; secret: string; bodyLimit: number; embeddingDim: number; extraTimes?: readonly string[] },
): Promise<FuzzSetup> {
  const DAY = 86_400_000;
  const near = fc.nat(30 * DAY).map((d) => nowMs - d);
  const token = (sub: string, ttlSec: number, at?: number, secret = o.secret) =>
    mintReaderToken(secret, sub, ttlSec, at).then((t) => `Bearer ${t}`);
  return {
    bodyLimit: o.bodyLimit,
    ctx: {
      ids: FUZZ_IDS,
      embeddingDim: o.embeddingDim,
      byName: {
        published_at: fc.oneof(
          near.map((ms) => Math.floor(ms / 1000)),
          near.map((ms) => new Date(ms).toISOString()),
          fc.constantFrom(nowMs, 1e15, -1, '2101-01-01T00:00:00Z'),
        ),
        at: fc.oneof(near, fc.constantFrom(0, 1e15, nowMs + 2 * DAY)),
        expires_at: fc.oneof(
          near.map((ms) => Math.floor(ms / 1000) + 40 * 86_400),
          fc.constantFrom(1e306, 4102444801, Number.MAX_VALUE, null),
        ),
        ...expandingTexts(),
      },
    },
    tokens: {
      none: '',
      service: `Bearer ${o.serviceKey}`,
      reader: await token('u1', 3600),
      other: await token('u2', 3600),
      expired: await token('u1', 60, Date.now() - 3_600_000),
      forged: await token('u1', 60, undefined, 'another-secret-0123456789abcdef'),
      century: await token('u1', 100 * 365 * 86_400),
      garbage: 'Bearer x.y.z',
      basic: 'Basic dTE6cGFzcw==',
    },
    times: [
      String(nowMs),
      ...(o.extraTimes ?? []),
      '4398046511104',
      '999999999999999',
      '1234567890123456',
      'now',
      '',
      '-5',
      String(nowMs + 2 * DAY),
    ],
  };
}

/** A JSON text nested up to the most that fits in `maxChars` (a leaf at the bottom). */
export function deepJson(maxChars: number): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.constantFrom(...NESTINGS),
      fc.constantFrom('1', '"x"', 'null', '[]', '{}', 'true'),
      fc.double({ min: 0, max: 1, noNaN: true }),
    )
    .map(([[open, close], leaf, share]) => {
      const most = Math.max(1, Math.floor((maxChars - leaf.length) / (open.length + close.length)));
      // most of them at the deepest that fits (past what a recursive formatter survives), the rest anywhere below
      const depth = share > 0.25 ? most : Math.max(1, Math.floor(share * 4 * most));
      return open.repeat(depth) + leaf + close.repeat(depth);
    });
}

const SENTINEL = '\u0001DEEP\u0001';

/**
 * A valid body with one field replaced by a deep value, kept within `limit` characters. Fields whose
 * schema lists allowed values (an enum: the messages quote what was sent) are picked most of the time.
 */
function withDeepField(schema: JsonSchema, body: fc.Arbitrary<unknown>, limit: number): fc.Arbitrary<string> {
  const one = (schema.type === 'array' ? schema.items : schema) as JsonSchema | undefined;
  const props = (one?.properties ?? {}) as Record<string, JsonSchema>;
  const quoted = Object.keys(props).filter((k) => 'anyOf' in props[k]! || 'enum' in props[k]! || 'const' in props[k]!);
  return fc.tuple(body, fc.nat(), fc.boolean(), deepJson(limit - 600)).map(([v, pick, preferQuoted, deep]) => {
    const target = Array.isArray(v) ? v[0] : v;
    if (target === null || typeof target !== 'object') return deep;
    const keys = preferQuoted && quoted.length > 0 ? quoted : Object.keys(target);
    const key = keys.length > 0 ? keys[pick % keys.length]! : 'kind';
    (target as Record<string, unknown>)[key] = SENTINEL;
    const text = JSON.stringify(v).replace(JSON.stringify(SENTINEL), deep);
    return text.length <= limit ? text : deep;
  });
}

/** Headers a hostile client adds: arbitrary names and printable values, and our own headers with junk. */
function extraHeaders(limit: number): fc.Arbitrary<Record<string, string>> {
  const name = fc.oneof(
    fc.constantFrom('x-freshet-reader', 'x-freshet-now', 'last-event-id', 'accept', 'x-forwarded-for', 'origin'),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
  );
  const value = fc.oneof(
    fc.stringMatching(/^[\x20-\x7e]{0,80}$/).map((s) => s.trim()),
    deepJson(Math.min(limit, 4000)),
  );
  return fc.dictionary(name, value, { maxKeys: 3 });
}

function rawBodies(limit: number): string[] {
  return [
    '',
    '{',
    'null',
    '[]',
    '"text"',
    '0',
    '{"__proto__":{"admin":true}}',
    '{"a":{"constructor":{"prototype":{"x":1}}}}',
    'action=refresh',
    '\u0000',
    'x'.repeat(limit + 10),
  ];
}

/** A path segment: an existing id most of the time, else something a client should not send. */
function segment(ids: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...ids) },
    { weight: 2, arbitrary: fc.constantFrom(...BAD_SEGMENTS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map(encodeURIComponent) },
  );
}

/** Requests of one operation. */
function requestFor(op: Operation, s: FuzzSetup): fc.Arbitrary<FuzzRequest> {
  const { ctx, bodyLimit } = s;
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const query = fc.tuple(
    fc.tuple(
      ...queryParams.map((p) =>
        fc.option(
          fc.oneof(
            { weight: 3, arbitrary: valuesOf(p.schema, ctx).map(String) },
            { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
            // a number the coercion reads as ±Infinity, or in exponent form
            ...(p.schema.type === 'integer' || p.schema.type === 'number'
              ? [{ weight: 2, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS) }]
              : []),
          ),
          { freq: 2 },
        ),
      ),
    ),
    fc.option(fc.constantFrom('colour=red', 'limit=1&limit=2', 'cursor=%zz', 'a[b]=1', `a=${'['.repeat(500)}`), {
      freq: 6,
    }),
  );
  const body = op.body
    ? fc.oneof(
        { weight: 6, arbitrary: valuesOf(op.body, ctx).map((v) => JSON.stringify(v)) },
        { weight: 3, arbitrary: mutatedValueOf(op.body, ctx).map((v) => JSON.stringify(v) ?? 'null') },
        { weight: 1, arbitrary: fc.constantFrom(...rawBodies(bodyLimit)) },
        { weight: 1, arbitrary: deepJson(bodyLimit) },
        { weight: 2, arbitrary: withDeepField(op.body, valuesOf(op.body, ctx), bodyLimit) },
      )
    : fc.option(fc.oneof(fc.constantFrom('{}', '{', 'x'.repeat(bodyLimit + 10)), deepJson(bodyLimit)), { freq: 8 });
  const headers = fc.record({
    auth: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('service', 'reader') },
      { weight: 2, arbitrary: fc.constantFrom(...Object.keys(s.tokens).filter((k) => k !== 'service')) },
    ),
    reader: fc.option(fc.oneof(fc.constantFrom('u1', 'u2'), fc.constantFrom('..', 'a:b', '', 'x'.repeat(70))), {
      freq: 2,
    }),
    now: fc.option(fc.constantFrom(...s.times), { freq: 3 }),
    contentType: fc.oneof(
      { weight: 8, arbitrary: fc.constant('application/json') },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/json; charset=utf-16',
          'none',
        ),
      },
    ),
    extra: fc.option(extraHeaders(bodyLimit), { freq: 4 }),
  });
  return fc
    .record({ segs: fc.tuple(...pathParams.map(() => segment(ctx.ids))), query, body, headers })
    .map(({ segs, query: [values, extra], body: payload, headers: h }) => {
      let path = op.path;
      pathParams.forEach((p, i) => (path = path.replace(`{${p.name}}`, segs[i]!)));
      const qs = queryParams.flatMap((p, i) =>
        values[i] == null ? [] : [`${p.name}=${encodeURIComponent(values[i]!)}`],
      );
      if (extra) qs.push(extra);
      const out: Record<string, string> = { ...(h.extra ?? {}) };
      if (s.tokens[h.auth]) out.authorization = s.tokens[h.auth]!;
      if (h.reader !== null) out['x-freshet-reader'] = h.reader;
      if (h.now !== null) out['x-freshet-now'] = h.now;
      if (payload != null && h.contentType !== 'none') out['content-type'] = h.contentType;
      return {
        op,
        method: op.method,
        url: qs.length ? `${path}?${qs.join('&')}` : path,
        headers: out,
        payload: payload ?? undefined,
      };
    });
}

/** Requests that match no operation: unknown paths under /v1, traversal under /docs, other methods. */
function stray(tokens: Record<string, string>): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(
      fc.constantFrom('GET', 'POST', 'PUT', 'DELETE') as fc.Arbitrary<FuzzRequest['method']>,
      fc.constantFrom('/v1/', '/', '/docs/static/', '/v1/items/x/'),
      fc.oneof(
        fc.constantFrom('..', '../../package.json', '%2e%2e/%2e%2e/package.json', 'nothing', '%zz', 'a'.repeat(120)),
        fc.string({ maxLength: 20 }).map(encodeURIComponent),
      ),
    )
    .map(([method, prefix, rest]) => ({
      method,
      url: `${prefix}${rest}`,
      headers: (tokens.service ? { authorization: tokens.service } : {}) as Record<string, string>,
    }));
}

/** `count` seeded requests over every operation of `ops` (and 5 % strays). */
export function fuzzRequests(ops: readonly Operation[], s: FuzzSetup, count: number, seed: number): FuzzRequest[] {
  const arbitrary = fc.oneof(
    { weight: 19, arbitrary: fc.oneof(...ops.map((op) => requestFor(op, s))) },
    { weight: 1, arbitrary: stray(s.tokens) },
  );
  return fc.sample(arbitrary, { seed, numRuns: count });
}

/** Words that only an internal failure puts in a message (a leaked exception, a store's own text). */
const INTERNAL_WORDS =
  /Maximum call stack|internal error|TypeError|RangeError|ReferenceError|Cannot read prop|is not a function|\[object Object\]|ECONNREFUSED|violates .* constraint|syntax error at|relation "/i;

/**
 * The truth of every table a client's write reaches, as one digest per table (its row count and the sum of its rows' 64-bit hashes: order-free):
 * a refused write must leave each unchanged.
 */
export async function stateDigest(sql: Sql): Promise<Record<string, string>> {
  const tables = [
    'items',
    'item_embeddings',
    'follows',
    'blocks',
    'engagements',
    'feedback',
    'reader_interests',
    'reader_signals',
    'interactions',
    'reader_embeddings',
  ];
  const row = await sql.query<Record<string, string | null>>(
    `SELECT ${tables.map((t) => `(SELECT count(*) || ':' || coalesce(sum(hashtextextended(x::text, 0)), 0) FROM ${t} x) AS ${t}`).join(', ')}`,
  );
  return Object.fromEntries(tables.map((t) => [t, row[0]?.[t] ?? '']));
}

/** What a run found. */
export interface FuzzResult {
  byStatus: Map<number, number>;
  problems: string[];
  ms: number;
  /** Refused writes whose state was re-read. */
  refusedWrites: number;
}

/**
 * Sends `requests` one at a time through `app.inject` and judges each answer (see the module doc);
 * `sql`: the app's store, re-read before and after every write (POST/PUT/DELETE) that is refused.
 */
export async function runFuzz(app: FastifyInstance, sql: Sql, requests: readonly FuzzRequest[]): Promise<FuzzResult> {
  const byStatus = new Map<number, number>();
  const problems: string[] = [];
  let refusedWrites = 0;
  const started = performance.now();
  for (const r of requests) {
    const write = r.method !== 'GET';
    const before = write ? await stateDigest(sql) : null;
    const res = await app.inject({ method: r.method, url: r.url, headers: r.headers, payload: r.payload });
    byStatus.set(res.statusCode, (byStatus.get(res.statusCode) ?? 0) + 1);
    const shown = `\n    request: ${r.method} ${r.url.slice(0, 200)} ${JSON.stringify(r.headers).slice(0, 300)} ${(r.payload ?? '').slice(0, 200)}`;
    const path = new URL(r.url, 'http://x').pathname;
    // the documentation pages themselves, and the site root's redirect to the explorer (a path of `..`
    // segments can resolve to `/`): not API answers
    const docs =
      (r.url.startsWith('/docs') && res.statusCode < 400) ||
      (path === '/' && res.statusCode === 302 && res.headers.location === '/ui/');
    // `.` and `..` segments are resolved by the client (here light-my-request): the answer is another route's
    const op = path === r.url.split('?')[0] ? r.op : undefined;
    const problem = docs
      ? null
      : answerProblem(op, res.statusCode, res.body, res.headers['content-type'] as string | undefined);
    if (problem) problems.push(`${problem}${shown}`);
    else if (!docs && INTERNAL_WORDS.test(res.body))
      problems.push(`an internal message: ${res.body.slice(0, 200)}${shown}`);
    if (before && res.statusCode >= 400) {
      refusedWrites++;
      const after = await stateDigest(sql);
      const changed = Object.keys(before).filter((t) => before[t] !== after[t]);
      if (changed.length > 0)
        problems.push(
          `a refused write (${res.statusCode}) changed ${changed.join(', ')}: ${res.body.slice(0, 150)}${shown}`,
        );
    }
  }
  return { byStatus, problems, ms: performance.now() - started, refusedWrites };
}

/** `200: 812, 400: 733, …` */
export function statusFigures(byStatus: ReadonlyMap<number, number>): string {
  return [...byStatus.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, c]) => `${s}: ${c}`)
    .join(', ');
}
