/**
 * Access rules and bad input over HTTP: every client mistake gets a documented 4xx code (README
 * "Error codes"), never a 500, and never a partial write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintReaderToken } from '../../src/kernel/http/tokens.js';
import { SERVICE_KEY, item, startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
const svc = { authorization: `Bearer ${SERVICE_KEY}` };

beforeAll(async () => {
  t = await startTestApp({ env: { FRESHET_BODY_LIMIT_BYTES: '4096' } });
  await t.app.inject({ method: 'POST', url: '/v1/items', payload: [item('a1', 1000), item('a2', 2000)], headers: svc });
});
afterAll(async () => t?.close());

async function forYou(body: unknown, headers: Record<string, string>) {
  return t.app.inject({ method: 'POST', url: '/v1/feeds/for-you', payload: body as object, headers });
}

describe('access', () => {
  it('no token gets no feed (40101)', async () => {
    const res = await forYou({ action: 'refresh', limit: 5 }, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 40101, data: null });
  });

  it('a forged or wrongly signed token is refused (40101)', async () => {
    const forged = await mintReaderToken('another-secret-0123456789', 'alice', 60);
    for (const token of ['garbage', forged, `${SERVICE_KEY}x`]) {
      const res = await forYou({ action: 'refresh', limit: 5 }, { authorization: `Bearer ${token}` });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe(40101);
    }
  });

  it('an expired reader token is refused (40102)', async () => {
    const old = await mintReaderToken('test-secret-0123456789abcdef', 'alice', 60, Date.now() - 3600_000);
    const res = await forYou({ action: 'refresh', limit: 5 }, { authorization: `Bearer ${old}` });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe(40102);
  });

  it("a reader token reads its own feed; the reader is the token's subject", async () => {
    const res = await forYou({ action: 'refresh', limit: 5 }, { authorization: `Bearer ${await t.token('alice')}` });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.items).toHaveLength(2);
    const same = await forYou(
      { action: 'refresh', limit: 5 },
      { authorization: `Bearer ${await t.token('alice')}`, 'x-freshet-reader': 'alice' },
    );
    expect(same.statusCode).toBe(200);
  });

  it('a reader token may not act for another reader, write items, or set the time (40301)', async () => {
    const auth = { authorization: `Bearer ${await t.token('bob')}` };
    const other = await forYou({ action: 'refresh', limit: 5 }, { ...auth, 'x-freshet-reader': 'alice' });
    expect(other.statusCode).toBe(403);
    expect(other.json().code).toBe(40301);
    const write = await t.app.inject({ method: 'POST', url: '/v1/items', payload: [item('b1', 0)], headers: auth });
    expect(write.statusCode).toBe(403);
    const del = await t.app.inject({ method: 'DELETE', url: '/v1/items/a1', headers: auth });
    expect(del.statusCode).toBe(403);
    const now = await forYou({ action: 'refresh', limit: 5 }, { ...auth, 'x-freshet-now': '1' });
    expect(now.statusCode).toBe(403);
    const interests = await t.app.inject({
      method: 'PUT',
      url: '/v1/users/bob/interests',
      payload: { terms: ['x'] },
      headers: auth,
    });
    expect(interests.statusCode).toBe(403);
  });

  it('the service key must name the reader (40001)', async () => {
    const res = await forYou({ action: 'refresh', limit: 5 }, svc);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(40001);
  });
});

describe('bad input', () => {
  const reader = { ...svc, 'x-freshet-reader': 'carol' };
  const cases: [string, unknown, number][] = [
    ['unknown action', { action: 'sideways', limit: 5 }, 40001],
    ['limit 0', { action: 'refresh', limit: 0 }, 40001],
    ['limit 101', { action: 'refresh', limit: 101 }, 40001],
    ['limit as a string', { action: 'refresh', limit: '20' }, 40001],
    ['fractional limit', { action: 'refresh', limit: 2.5 }, 40001],
    ['action of the wrong type', { action: 1, limit: 5 }, 40001],
    ['a reader field in the body', { action: 'refresh', limit: 5, reader: 'mallory' }, 40001],
    ['an array body', [{ action: 'refresh', limit: 5 }], 40001],
  ];
  it.each(cases)('%s (%j) → 400 with code %i', async (_name, body, code) => {
    const res = await forYou(body, reader);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code, data: null });
    expect(res.json().msg).toMatch(/\w/);
  });

  it('malformed JSON → 40003', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: '{"action": "refresh",',
      headers: { ...reader, 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(40003);
  });

  it('a non-JSON content type → 4xx with code 40003', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: 'action=refresh',
      headers: { ...reader, 'content-type': 'text/plain' },
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.json().code).toBe(40003);
  });

  it('an oversize body → 413 with code 41301, nothing written', async () => {
    const big = [item('big_1', 0, { text: 'x'.repeat(5000) })];
    const res = await t.app.inject({ method: 'POST', url: '/v1/items', payload: big, headers: svc });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe(41301);
    expect(await t.f.content.getItems(['big_1'])).toEqual([]);
  });

  it.each(['a:b', 'x{y}', '', 'a'.repeat(65), 'sp ace'])(
    'reader id %j outside [A-Za-z0-9_.-]{1,64} → 40002',
    async (bad) => {
      const res = await forYou({ action: 'refresh', limit: 5 }, { ...svc, 'x-freshet-reader': bad });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe(40002);
    },
  );

  it('a batch with one bad item id writes nothing (40002)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      payload: [item('ok_1', 0), item('bad:id', 0)],
      headers: svc,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(40002);
    expect(await t.f.content.getItems(['ok_1'])).toEqual([]);
  });

  it('a batch with one bad published_at writes nothing (40001)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      payload: [item('ok_2', 0), item('ok_3', 0, { published_at: 'yesterday' })],
      headers: svc,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(40001);
    expect(await t.f.content.getItems(['ok_2', 'ok_3'])).toEqual([]);
  });

  it('a batch naming one id twice, an empty batch, or an unknown field → 40001', async () => {
    for (const payload of [[item('d1', 0), item('d1', 0)], [], [item('d2', 0, { colour: 'red' })]]) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/items', payload, headers: svc });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe(40001);
    }
  });

  it('a bad id in a path → 40002; an unknown item → 40401; an unknown route → 40401', async () => {
    const bad = await t.app.inject({ method: 'DELETE', url: '/v1/items/a%3Ab', headers: svc });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe(40002);
    const missing = await t.app.inject({ method: 'GET', url: '/v1/items/nope', headers: svc });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe(40401);
    const route = await t.app.inject({ method: 'GET', url: '/v1/nothing-here', headers: svc });
    expect(route.statusCode).toBe(404);
    expect(route.json().code).toBe(40401);
  });

  it('X-Freshet-Now that is not epoch ms → 40001', async () => {
    const res = await forYou({ action: 'refresh', limit: 5 }, { ...reader, 'x-freshet-now': 'tomorrow' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(40001);
  });

  it('published_at accepts ISO 8601 and epoch seconds and answers in epoch seconds', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      payload: [
        item('iso_1', 0, { published_at: '2026-03-06T10:00:00Z' }),
        item('sec_1', 0, { published_at: 1772791200 }),
      ],
      headers: svc,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ inserted: 2, updated: 0 });
    const got = await t.app.inject({ method: 'GET', url: '/v1/items/iso_1', headers: svc });
    expect(got.json().data.published_at).toBe(Date.UTC(2026, 2, 6, 10) / 1000);
    const again = await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      payload: [item('iso_1', 0, { published_at: '2026-03-06T10:00:00Z' })],
      headers: svc,
    });
    expect(again.json().data).toEqual({ inserted: 0, updated: 1 });
  });
});

describe('operations', () => {
  it('/healthz, /readyz, /metrics and /docs answer', async () => {
    expect((await t.app.inject({ url: '/healthz' })).json()).toMatchObject({ code: 0, data: { status: 'ok' } });
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().data.stores.postgres).toBe(true);
    await forYou({ action: 'refresh', limit: 1 }, { ...svc, 'x-freshet-reader': 'dave' });
    const metrics = (await t.app.inject({ url: '/metrics' })).body;
    for (const name of [
      'freshet_http_request_duration_seconds',
      'freshet_recall_candidates',
      'freshet_seen_filter_dropped_total',
      'freshet_feed_cache_total',
      'freshet_impression_write_failures_total',
    ]) {
      expect(metrics).toContain(name);
    }
    const docs = await t.app.inject({ url: '/docs/json' });
    expect(docs.statusCode).toBe(200);
    expect(Object.keys(docs.json().paths)).toContain('/v1/feeds/for-you');
  });
});
