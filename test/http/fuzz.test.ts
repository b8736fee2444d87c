/**
 * A bounded fuzz of the whole HTTP API (issues 10.6 and 21.1) on both store pairs — the embedded default
 * (PGlite + in-process stores) and PostgreSQL + Redis: seeded requests generated from the OpenAPI
 * document (test/support/fuzz-requests.ts) — valid and mutated bodies, JSON nested as deep as the body
 * limit allows (whole bodies and single fields), path parameters, query strings, arbitrary headers, good
 * and bad tokens, paths that match no route — sent through `app.inject`. Promise kept: no input causes a
 * 5xx, every answer is a `{code, msg, data}` envelope whose code matches its status, every status is
 * documented for its route, every body matches the documented schema, no message leaks an internal
 * failure, and a refused write leaves every table as it was. A failure prints the request that broke
 * it; the seed makes it replayable. The long run is `npm run fuzz` (bench/fuzz.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp, type TestAppOptions } from '../support/app.js';
import { loadOperations, type Operation } from '../support/openapi.js';
import { fuzzRequests, fuzzSetupFor, runFuzz, statusFigures, type FuzzSetup } from '../support/fuzz-requests.js';

/** Requests per store pair and the seed (change the seed to explore; keep it fixed in the suite). */
const RUNS = 1200;
const SEED = 20_260_306;
const BODY_LIMIT = 16_384;
const DIM = 8;
const SECRET = 'test-secret-0123456789abcdef';

const svc = { authorization: `Bearer ${SERVICE_KEY}` };

/** The app, seeded with three items, two users and one follow, and the setup of its requests. */
async function fuzzApp(opts: TestAppOptions): Promise<{ t: TestApp; ops: Operation[]; setup: FuzzSetup }> {
  const t = await startTestApp({
    ...opts,
    // the rate budgets off (test/http/limits.test.ts tests them): the fuzz reaches the routes, not the limiter
    env: {
      FRESHET_BODY_LIMIT_BYTES: String(BODY_LIMIT),
      FRESHET_EMBEDDING_DIM: String(DIM),
      FRESHET_RATE_READER_OTHER: '0',
      FRESHET_RATE_READER: '0',
    },
  });
  const seed = [
    item('i1', 1000, { author_id: 'a1' }),
    item('i2', 2000, { author_id: 'a2' }),
    item('i3', 3000, { author_id: 'a1' }),
  ];
  expect((await t.app.inject({ method: 'POST', url: '/v1/items', payload: seed, headers: svc })).statusCode).toBe(200);
  for (const u of ['u1', 'u2']) await t.app.inject({ method: 'PUT', url: `/v1/users/${u}`, headers: svc });
  await t.app.inject({ method: 'PUT', url: '/v1/users/u1/following/a1', headers: svc });
  const setup = await fuzzSetupFor(T0, {
    serviceKey: SERVICE_KEY,
    secret: SECRET,
    bodyLimit: BODY_LIMIT,
    embeddingDim: DIM,
    extraTimes: [String(Date.UTC(2016, 8, 20))],
  });

  return { t, ops: await loadOperations(t.app), setup };
}

const PAIRS: [string, TestAppOptions][] = [
  ['the embedded default (PGlite + in-process stores)', { db: 'pglite', hot: 'memory' }],
  ['PostgreSQL + Redis', { db: 'postgres', hot: 'redis' }],
];

describe.each(PAIRS)('HTTP fuzz from the OpenAPI document, on %s', (_name, opts) => {
  let t: TestApp;
  let ops: Operation[];
  let setup: FuzzSetup;
  beforeAll(async () => ({ t, ops, setup } = await fuzzApp(opts)));
  afterAll(async () => t?.close());

  it('JSON nested as deep as the body limit allows, in every body field of every route: a 400 envelope', async () => {
    const reader = setup.tokens.reader!;
    const n = Math.floor((BODY_LIMIT - 200) / 2);
    const deep = `${'['.repeat(n)}${']'.repeat(n)}`; // 8,092 levels: past what JSON.stringify or String() survive
    let sent = 0;
    for (const op of ops.filter((o) => o.body)) {
      const one = (op.body!.type === 'array' ? op.body!.items : op.body) as { properties?: object };
      for (const field of [...Object.keys(one.properties ?? {}), 'unknown_field']) {
        const inner = `{${JSON.stringify(field)}:${deep}}`;
        for (const payload of [deep, op.body!.type === 'array' ? `[${inner}]` : inner]) {
          const res = await t.app.inject({
            method: op.method,
            url: op.path.replace(/\{[^}]+\}/g, 'u1'),
            headers: { authorization: reader, 'content-type': 'application/json' },
            payload,
          });
          sent++;
          expect(res.statusCode, `${op.key} ${field}: ${res.body.slice(0, 200)}`).toBeLessThan(500);
          expect(res.json(), op.key).toMatchObject({ code: expect.any(Number), msg: expect.any(String), data: null });
          expect(res.body).not.toMatch(/Maximum call stack|internal error/);
        }
      }
    }
    expect(sent).toBeGreaterThan(20);
    // the issue's own request, answered in the envelope naming the field
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      headers: { authorization: reader, 'content-type': 'application/json' },
      payload: `{"action":${'['.repeat(5000)}${']'.repeat(5000)},"limit":20}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().msg).toMatch(/^body\/action must be one of "refresh", "load_more" \(got \[\[/);
  });

  it(`${RUNS} seeded requests: no 5xx, 100 % envelopes, as documented, no internal message, refused writes write nothing`, async () => {
    const requests = fuzzRequests(ops, setup, RUNS, SEED);
    const { byStatus, problems, ms, refusedWrites } = await runFuzz(t.app, t.sql, requests);
    console.log(
      `fuzz (${_name}): ${RUNS} requests in ${(ms / 1000).toFixed(1)} s (seed ${SEED}); by status ${statusFigures(byStatus)}; refused writes re-read ${refusedWrites}; problems ${problems.length}`,
    );
    expect(problems.slice(0, 5)).toEqual([]);
    const ok = [...byStatus.entries()].filter(([s]) => s < 300).reduce((n, [, c]) => n + c, 0);
    // 8 %: a numeric query parameter is a hostile number (±Infinity, an exponent form) in 2 draws of 6, and
    // the routes' bodies are checked to their exact length (a given embedding), so fewer draws are valid
    expect(ok, 'enough valid requests reach the stores').toBeGreaterThan(RUNS * 0.08);
    expect(byStatus.get(401), 'and enough are refused at the door').toBeGreaterThan(RUNS * 0.05);
    expect(refusedWrites, 'and enough refused writes are re-read').toBeGreaterThan(RUNS * 0.05);
  });
});
