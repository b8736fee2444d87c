/**
 * The OpenAPI document matches behaviour (issue 14.9): a walk over every operation of `/docs/json`
 * checks that each answers 401 without a token and documents it, documents 413 exactly where a body is
 * read and 414 where the path has parameters, lists `X-Freshet-Now` / `X-Freshet-Reader` exactly on the
 * routes whose handler reads them (a documented header changes the answer, an undocumented one does
 * not), and that every answer seen has a documented status and matches its documented schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TIME_MS } from '../../src/kernel/time-range.js';
import { SERVICE_KEY, item, startTestApp, type TestApp } from '../support/app.js';
import { answerProblem, loadOperations, type Operation } from '../support/openapi.js';

const svc = { authorization: `Bearer ${SERVICE_KEY}` };
const BODY_LIMIT = 16_384;

interface Req {
  url: string;
  payload?: unknown;
  headers: Record<string, string>;
}

let t: TestApp;
let ops: Operation[];
let n = 0;

/** A request each operation answers with 2xx, with the service key (DELETE /v1/items/{id} creates its victim). */
const VALID: Record<string, () => Promise<Req>> = {
  'GET /healthz': async () => ({ url: '/healthz', headers: {} }),
  'GET /readyz': async () => ({ url: '/readyz', headers: {} }),
  'POST /v1/items': async () => ({ url: '/v1/items', payload: [item(`new_${++n}`, 0)], headers: svc }),
  'GET /v1/items/{id}': async () => ({ url: '/v1/items/i1', headers: svc }),
  'DELETE /v1/items/{id}': async () => {
    const id = `victim_${++n}`;
    await t.app.inject({ method: 'POST', url: '/v1/items', payload: [item(id, 0)], headers: svc });
    return { url: `/v1/items/${id}`, headers: svc };
  },
  'POST /v1/feeds/for-you': async () => ({
    url: '/v1/feeds/for-you',
    payload: { action: 'refresh', limit: 5 },
    headers: { ...svc, 'x-freshet-reader': 'u1' },
  }),
  'GET /v1/feeds/for-you/peek': async () => ({
    url: '/v1/feeds/for-you/peek',
    headers: { ...svc, 'x-freshet-reader': 'u1' },
  }),
  'GET /v1/feeds/{feed}/explain': async () => ({
    url: '/v1/feeds/for-you/explain?item_id=i1',
    headers: { ...svc, 'x-freshet-reader': 'u1' },
  }),
  'PUT /v1/users/{id}/interests': async () => ({
    url: '/v1/users/u1/interests',
    payload: { terms: ['rust'] },
    headers: svc,
  }),
  'GET /v1/users/{id}/interests': async () => ({ url: '/v1/users/u1/interests', headers: svc }),
  'PUT /v1/users/{id}/embedding': async () => ({
    url: '/v1/users/u1/embedding',
    payload: { embedding: Array.from({ length: 256 }, (_, k) => (k === 0 ? 1 : 0)) },
    headers: svc,
  }),
  'DELETE /v1/users/{id}/embedding': async () => ({ url: '/v1/users/u1/embedding', headers: svc }),
  'PUT /v1/users/{id}/preferences': async () => ({
    url: '/v1/users/u1/preferences',
    payload: { muted_words: [{ phrase: 'rust' }], max_per_author: 2 },
    headers: svc,
  }),
  'GET /v1/users/{id}/preferences': async () => ({ url: '/v1/users/u1/preferences', headers: svc }),
  'PATCH /v1/users/{id}/preferences': async () => ({
    url: '/v1/users/u1/preferences',
    payload: { add_muted_authors: [{ author_id: 'a2' }], remove_muted_words: ['rust'] },
    headers: svc,
  }),
  'GET /v1/feeds/discover': async () => ({
    url: '/v1/feeds/discover?limit=5',
    headers: { ...svc, 'x-freshet-reader': 'u1' },
  }),
  'POST /v1/engagements': async () => ({
    url: '/v1/engagements',
    payload: { item_id: 'i1', kind: 'like' },
    headers: { ...svc, 'x-freshet-reader': 'u1' },
  }),
  'POST /v1/feedback': async () => ({
    url: '/v1/feedback',
    payload: { item_id: 'i2', kind: 'not_interested' },
    headers: { ...svc, 'x-freshet-reader': 'u1' },
  }),
  'DELETE /v1/feedback/{item_id}': async () => ({
    url: '/v1/feedback/i2?kind=not_interested',
    headers: { ...svc, 'x-freshet-reader': 'u1' },
  }),
  'GET /v1/exclusions': async () => ({ url: '/v1/exclusions', headers: { ...svc, 'x-freshet-reader': 'u1' } }),
  'PUT /v1/users/{id}': async () => ({ url: '/v1/users/u1', headers: svc }),
  'DELETE /v1/users/{id}': async () => {
    const id = `gone_${++n}`;
    await t.app.inject({ method: 'PUT', url: `/v1/users/${id}`, headers: svc });
    return { url: `/v1/users/${id}?items=delete`, headers: svc };
  },
  'GET /v1/users/{id}/export': async () => ({ url: '/v1/users/a1/export', headers: svc }),
  'POST /v1/follows': async () => ({
    url: '/v1/follows',
    payload: { edges: [{ follower_id: 'u1', followee_id: `a${++n}` }] },
    headers: svc,
  }),
  'PUT /v1/users/{id}/following/{author_id}': async () => ({ url: '/v1/users/u1/following/a1', headers: svc }),
  'DELETE /v1/users/{id}/following/{author_id}': async () => ({ url: '/v1/users/u1/following/a2', headers: svc }),
  'PUT /v1/users/{id}/blocks/{author_id}': async () => ({ url: '/v1/users/u1/blocks/a2', headers: svc }),
  'DELETE /v1/users/{id}/blocks/{author_id}': async () => ({ url: '/v1/users/u1/blocks/a2', headers: svc }),
  'GET /v1/users/{id}/following': async () => ({ url: '/v1/users/u1/following?limit=5', headers: svc }),
  'GET /v1/users/{id}/followers': async () => ({ url: '/v1/users/u1/followers?limit=5', headers: svc }),
  'GET /v1/users/{id}/blocks': async () => ({ url: '/v1/users/u1/blocks?limit=5', headers: svc }),
  'GET /v1/feeds/following': async () => ({
    url: '/v1/feeds/following?limit=5',
    headers: { ...svc, 'x-freshet-reader': 'u1' },
  }),
  'POST /v1/views': async () => ({ url: '/v1/views', payload: { item_id: 'i1', visitor_id: `v${++n}` }, headers: svc }),
  'GET /v1/hot': async () => ({ url: '/v1/hot?limit=5', headers: svc }),
  'GET /v1/hot/items/{id}': async () => ({ url: '/v1/hot/items/i1', headers: svc }),
  'DELETE /v1/engagements/{item_id}': async () => ({
    url: '/v1/engagements/i1?kind=like',
    headers: { ...svc, 'x-freshet-reader': 'u1' },
  }),
  'GET /v1/feeds/notifications': async () => ({
    url: '/v1/feeds/notifications?limit=5',
    headers: { ...svc, 'x-freshet-reader': 'a1' },
  }),
  'POST /v1/notifications': async () => ({
    url: '/v1/notifications',
    payload: { recipient_id: 'a1', type: 'mention', actor_id: `m${++n}`, item_id: 'i1' },
    headers: svc,
  }),
  'PUT /v1/users/{id}/markers/notifications': async () => ({
    url: '/v1/users/a1/markers/notifications',
    payload: { last_read_id: '0' },
    headers: svc,
  }),
  'GET /v1/users/{id}/markers': async () => ({ url: '/v1/users/a1/markers', headers: svc }),
  'PUT /v1/users/{id}/markers/following': async () => ({
    url: '/v1/users/a1/markers/following',
    payload: { last_read_id: '0' },
    headers: svc,
  }),
};

beforeAll(async () => {
  t = await startTestApp({ env: { FRESHET_BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
  await t.app.inject({
    method: 'POST',
    url: '/v1/items',
    payload: [item('i1', 1000, { author_id: 'a1' }), item('i2', 2000, { author_id: 'a2' })],
    headers: svc,
  });
  ops = await loadOperations(t.app);
});
afterAll(async () => t?.close());

/** Sends `r` as `op`, asserts the answer keeps the document's promises, and returns it. */
async function call(op: Operation, r: Req, note: string) {
  const res = await t.app.inject({ method: op.method, url: r.url, payload: r.payload as string, headers: r.headers });
  expect(
    answerProblem(op, res.statusCode, res.body, res.headers['content-type'] as string | undefined),
    `${op.key} ${note}`,
  ).toBeNull();
  return res;
}

const v1 = () => ops.filter((op) => op.path.startsWith('/v1/'));
const headersOf = (op: Operation) => op.params.filter((p) => p.in === 'header').map((p) => p.name);

describe('the OpenAPI document', () => {
  it('lists every route this walk knows, and nothing else', () => {
    expect(ops.map((op) => op.key).sort()).toEqual(Object.keys(VALID).sort());
  });

  it('each operation answers its valid request with a documented 2xx', async () => {
    for (const op of ops) {
      const res = await call(op, await VALID[op.key]!(), 'valid request');
      expect(res.statusCode, `${op.key}: ${res.body}`).toBeLessThan(300);
    }
  });

  it('each /v1 operation answers 401 (40101) without a token, and documents it', async () => {
    for (const op of v1()) {
      expect(op.responses, op.key).toHaveProperty('401');
      const { headers: _dropped, ...r } = await VALID[op.key]!();
      const res = await call(op, { ...r, headers: {} }, 'no token');
      expect(res.statusCode, op.key).toBe(401);
    }
  });

  it('documents 413 exactly where a body is read, and answers it there', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(BODY_LIMIT) });
    for (const op of v1()) {
      const r = await VALID[op.key]!();
      const res = await call(
        op,
        { ...r, payload: big, headers: { ...r.headers, 'content-type': 'application/json' } },
        'oversized body',
      );
      expect(res.statusCode === 413, op.key).toBe('413' in op.responses);
      expect('413' in op.responses, op.key).toBe(op.method !== 'GET');
    }
  });

  it('documents 414 exactly where the path has parameters, and answers it there', async () => {
    for (const op of v1().filter((o) => o.path.includes('{'))) {
      expect(op.responses, op.key).toHaveProperty('414');
      const r = await VALID[op.key]!();
      const name = op.params.find((p) => p.in === 'path')!.name;
      const segments = op.path.split('/');
      const at = segments.indexOf(`{${name}}`);
      const url = r.url
        .split('?')[0]!
        .split('/')
        .map((s, i) => (i === at ? 'a'.repeat(101) : s))
        .join('/');
      expect((await call(op, { ...r, url }, 'a 101-character path parameter')).statusCode, op.key).toBe(414);
    }
  });

  it('lists X-Freshet-Now exactly on the routes that read it: there an out-of-range value is 40001, elsewhere it changes nothing', async () => {
    for (const op of v1()) {
      const documented = headersOf(op).includes('x-freshet-now');
      const r = await VALID[op.key]!();
      const res = await call(
        op,
        { ...r, headers: { ...r.headers, 'x-freshet-now': String(MAX_TIME_MS + 1) } },
        'X-Freshet-Now out of range',
      );
      if (documented)
        expect(res.json(), op.key).toMatchObject({ code: 40001, msg: expect.stringContaining('X-Freshet-Now') });
      else expect(res.statusCode, `${op.key} ignores X-Freshet-Now: ${res.body}`).toBeLessThan(300);
    }
  });

  it('lists X-Freshet-Reader exactly on the routes that read it: there a reader token naming another reader is 403, elsewhere it changes nothing', async () => {
    const reader = { authorization: `Bearer ${await t.token('u1')}` };
    for (const op of v1()) {
      const documented = headersOf(op).includes('x-freshet-reader');
      const r = await VALID[op.key]!();
      const { 'x-freshet-reader': _named, authorization: _auth, ...rest } = r.headers;
      const plain = await call(op, { ...r, headers: { ...rest, ...reader } }, 'reader token');
      const other = await call(
        op,
        { ...r, headers: { ...rest, ...reader, 'x-freshet-reader': 'somebody_else' } },
        'reader token naming another reader',
      );
      if (documented) {
        expect(plain.statusCode, `${op.key}: ${plain.body}`).toBeLessThan(300);
        expect(other.json(), op.key).toMatchObject({ code: 40301 });
      } else {
        expect(other.statusCode, `${op.key} ignores X-Freshet-Reader`).toBe(plain.statusCode);
      }
    }
  });

  it('lists no header but those two', () => {
    for (const op of ops)
      for (const h of headersOf(op)) expect(['x-freshet-now', 'x-freshet-reader'], op.key).toContain(h);
  });

  it('documents score: null in GET /v1/hot/items/:id, and a never-viewed item answers it', async () => {
    const op = ops.find((o) => o.key === 'GET /v1/hot/items/{id}')!;
    const score = JSON.stringify(op.responses['200']);
    expect(score).toMatch(/"score":\{[^}]*"nullable":true|"score":\{"anyOf":\[[^\]]*null/);
    await t.app.inject({ method: 'POST', url: '/v1/items', payload: [item('unseen', 0)], headers: svc });
    const res = await call(op, { url: '/v1/hot/items/unseen', headers: svc }, 'a never-viewed item');
    expect(res.json().data).toMatchObject({ pv: 0, uv: 0, score: null });
  });
});

describe('/readyz documents its 503', () => {
  let down: TestApp;
  beforeAll(async () => {
    down = await startTestApp({ env: { FRESHET_REDIS_URL: 'redis://127.0.0.1:1' } }); // nothing listens on port 1
  });
  afterAll(async () => down?.close());

  it('answers 503 / 50301 naming the store, in the documented shape', async () => {
    const op = (await loadOperations(down.app)).find((o) => o.key === 'GET /readyz')!;
    const res = await down.app.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(
      answerProblem(op, res.statusCode, res.body, res.headers['content-type'] as string, { storeDown: true }),
    ).toBeNull();
    expect(res.json()).toMatchObject({
      code: 50301,
      msg: expect.stringContaining('redis'),
      data: { status: 'unavailable', stores: { redis: false } },
    });
  });
});
