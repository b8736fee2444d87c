/**
 * The hot ranking over HTTP on both store pairs: who may record which views, `data.counted`, the
 * rate limit and suspicious traffic (isolated from the ranking, visible in the API and /metrics),
 * `GET /v1/hot` with its range and limit checks and its cached snapshot, and the documented errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS, MINUTE_MS } from '../../src/domain/clock.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';

const svc = { authorization: `Bearer ${SERVICE_KEY}` };

describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const)('hot ranking over HTTP on $name', ({ hot, db }) => {
  let t: TestApp;
  let alice: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp({ hot, db, env: { FRESHET_HOT_VISITOR_BUDGET_PER_MIN: '5' } });
    const items = [item('h1', HOUR_MS), item('h2', 2 * HOUR_MS), item('h3', 3 * HOUR_MS), item('old', 100 * HOUR_MS), item('gone', HOUR_MS)];
    const res = await t.app.inject({ method: 'POST', url: '/v1/items', payload: items, headers: svc });
    expect(res.statusCode).toBe(200);
    alice = { authorization: `Bearer ${await t.token('alice')}` };
  });
  afterAll(async () => t?.close());

  const post = (payload: unknown, headers: Record<string, string>) => t.app.inject({ method: 'POST', url: '/v1/views', payload: payload as object, headers });
  const getHot = (query: string, headers: Record<string, string> = svc) => t.app.inject({ method: 'GET', url: `/v1/hot${query}`, headers });

  it('a reader token counts its own view (visitor = sub); a repeat within the window is not counted', async () => {
    const first = await post({ item_id: 'h1' }, alice);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ code: 0, msg: 'success', data: { item_id: 'h1', visitor_id: 'alice', counted: true, verdict: 'counted', pv: 1, uv: 1 } });
    const again = await post({ item_id: 'h1', visitor_id: 'alice' }, alice);
    expect(again.json().data).toMatchObject({ counted: false, verdict: 'repeat', pv: 1, uv: 1 });
    t.clock.advance(10 * MINUTE_MS);
    expect((await post({ item_id: 'h1' }, alice)).json().data).toMatchObject({ counted: true, pv: 2, uv: 1 });
  });

  it('a reader token may not view as another visitor, flag, date a view, send a batch or set the time (40301)', async () => {
    for (const [payload, extra] of [
      [{ item_id: 'h1', visitor_id: 'bob' }, {}],
      [{ item_id: 'h1', flagged: true }, {}],
      [{ item_id: 'h1', at: T0 }, {}],
      [[{ item_id: 'h1' }], {}],
      [{ item_id: 'h1' }, { 'x-freshet-now': String(T0) }],
    ] as const) {
      const res = await post(payload, { ...alice, ...extra });
      expect(res.statusCode, JSON.stringify(payload)).toBe(403);
      expect(res.json()).toMatchObject({ code: 40301, data: null });
    }
  });

  it('no token → 40101; the service key must name the visitor → 40001', async () => {
    expect((await post({ item_id: 'h1' }, {})).json().code).toBe(40101);
    const res = await post({ item_id: 'h1' }, svc);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(40001);
  });

  it('an unknown or deleted item → 404 with code 40401; bad ids → 40002; bad bodies → 40001', async () => {
    const unknown = await post({ item_id: 'nope', visitor_id: 'v1' }, svc);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 40401, data: null });
    await t.app.inject({ method: 'DELETE', url: '/v1/items/gone', headers: svc });
    expect((await post({ item_id: 'gone', visitor_id: 'v1' }, svc)).json().code).toBe(40401);
    for (const bad of [{ item_id: 'a:b', visitor_id: 'v1' }, { item_id: 'h1', visitor_id: 'no way' }]) {
      const res = await post(bad, svc);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe(40002);
    }
    for (const bad of [{}, { item_id: 'h1', visitor_id: 'v1', colour: 'red' }, [], { item_id: 'h1', visitor_id: 'v1', flagged: 'yes' }]) {
      const res = await post(bad, svc);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect([40001, 40002]).toContain(res.json().code);
    }
  });

  it('the service key records anonymous visitors and batches; a batch with an unknown item writes nothing', async () => {
    const one = await post({ item_id: 'h2', visitor_id: 'anon_1' }, svc);
    expect(one.json().data).toMatchObject({ counted: true, visitor_id: 'anon_1' });
    const rejected = await post([{ item_id: 'h3', visitor_id: 'anon_1' }, { item_id: 'ghost', visitor_id: 'anon_1' }], svc);
    expect(rejected.statusCode).toBe(404);
    const batch = await post(
      [
        { item_id: 'h3', visitor_id: 'anon_1' },
        { item_id: 'h3', visitor_id: 'anon_2' },
        { item_id: 'h3', visitor_id: 'anon_2' },
        { item_id: 'h3', visitor_id: 'anon_3', at: T0 - HOUR_MS },
      ],
      svc,
    );
    expect(batch.statusCode).toBe(200);
    expect(batch.json().data.summary).toEqual({ counted: 3, repeat: 1, budget: 0, flagged: 0, expired: 0, unknown: 0 });
    expect(batch.json().data.results.map((r: { counted: boolean }) => r.counted)).toEqual([true, true, false, true]);
  });

  it('suspicious traffic is isolated from PV/UV/score and visible in the API and /metrics', async () => {
    const flagged = await post({ item_id: 'h2', visitor_id: 'scraper', flagged: true }, svc);
    expect(flagged.json().data).toMatchObject({ counted: false, verdict: 'flagged' });
    // a bot viewing many items in one minute exceeds its budget (5 per minute in this app)
    const verdicts: string[] = [];
    for (let i = 0; i < 8; i++) verdicts.push((await post({ item_id: ['h1', 'h2', 'h3'][i % 3], visitor_id: 'bot_9' }, svc)).json().data.verdict);
    expect(verdicts.filter((v) => v === 'budget')).toHaveLength(3);
    const counters = await t.app.inject({ method: 'GET', url: '/v1/hot/items/h2', headers: svc });
    expect(counters.json().data).toMatchObject({ item: { id: 'h2' }, suspicious: { flagged: 1 } });
    const before = counters.json().data.pv;
    expect((await t.app.inject({ method: 'GET', url: '/v1/hot/items/h2', headers: alice })).statusCode).toBe(403);
    t.clock.advance(2 * MINUTE_MS); // past the snapshot's lifetime
    const page = (await getHot('?range=72h&limit=20')).json().data;
    expect(page.suspicious.flagged).toBeGreaterThanOrEqual(1);
    expect(page.suspicious.budget).toBeGreaterThanOrEqual(3);
    expect(page.suspicious.repeat).toBeGreaterThanOrEqual(2);
    const h2 = page.items.find((i: { id: string }) => i.id === 'h2');
    expect(h2).toMatchObject({ pv: before, suspicious: { flagged: 1 } });
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/freshet_hot_views_total\{verdict="budget"\} 3/);
    expect(metrics).toMatch(/freshet_hot_views_total\{verdict="flagged"\} 1/);
    expect(metrics).toMatch(/freshet_hot_suspicious_views\{kind="budget"\} [1-9]/);
  });

  it('GET /v1/hot: items within range, best first, with pv, uv, score, published_at and when it was computed', async () => {
    t.clock.advance(2 * MINUTE_MS);
    await post({ item_id: 'old', visitor_id: 'v_old' }, svc);
    const res = await getHot('?range=72h&limit=20', alice); // any token may read it
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ range: '72h', limit: 20, refresh_s: 60, params: { alpha: 1, beta: 1.2, base: 2, gamma: 1.5 } });
    expect(data.computed_at_ms).toBe(t.clock.now());
    expect(data.computed_at).toBe(Math.floor(t.clock.now() / 1000));
    const ids = data.items.map((i: { id: string }) => i.id);
    expect(ids).not.toContain('old'); // published 100 h ago
    expect(ids).not.toContain('gone');
    expect(new Set(ids)).toEqual(new Set(['h1', 'h2', 'h3']));
    const scores = data.items.map((i: { score: number }) => i.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const i of data.items) {
      const hours = (data.computed_at_ms / 1000 - i.published_at) / 3600;
      expect(i.score).toBeCloseTo((1 * i.pv + 1.2 * i.uv) / Math.pow(hours + 2, 1.5), 10);
    }
    expect((await getHot('?range=5d')).json().data.items.map((i: { id: string }) => i.id)).toContain('old');
    expect((await getHot('?range=72h&limit=1')).json().data.items).toHaveLength(1);
    expect((await getHot('')).json().data).toMatchObject({ range: '72h', limit: 20 });
  });

  it('serves the same snapshot until it is older than the refresh interval', async () => {
    t.clock.advance(2 * MINUTE_MS);
    const a = (await getHot('?range=72h')).json().data;
    for (let i = 0; i < 3; i++) await post({ item_id: 'h3', visitor_id: `burst_${i}` }, svc);
    t.clock.advance(59_000);
    const b = (await getHot('?range=72h')).json().data;
    expect(b.computed_at_ms).toBe(a.computed_at_ms);
    expect(b.items).toEqual(a.items);
    t.clock.advance(1_000);
    const c = (await getHot('?range=72h')).json().data;
    expect(c.computed_at_ms).toBe(a.computed_at_ms + 60_000);
    const pv = (d: { items: { id: string; pv: number }[] }) => d.items.find((i) => i.id === 'h3')!.pv;
    expect(pv(c)).toBe(pv(a) + 3);
  });

  it.each([
    ['?limit=-1'], ['?limit=0'], ['?limit=101'], ['?limit=2.5'], ['?limit=ten'],
    ['?range=72'], ['?range=0h'], ['?range=31d'], ['?range=721h'], ['?range=3w'], ['?range=-3h'], ['?range=72h&colour=red'],
  ])('GET /v1/hot%s → 400 with code 40001', async (query) => {
    const res = await getHot(query);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 40001, data: null });
  });

  it('GET /v1/hot needs a token (40101)', async () => {
    expect((await getHot('', {})).statusCode).toBe(401);
  });

  it("an edited item's published_at reaches the hot counters; the routes are in the OpenAPI document", async () => {
    const edited = item('h2', 5 * HOUR_MS);
    expect((await t.app.inject({ method: 'POST', url: '/v1/items', payload: [edited], headers: svc })).statusCode).toBe(200);
    const [h2] = await t.f.hotCounters.counters(['h2']);
    expect(h2!.publishedAtMs).toBe(edited.published_at * 1000);
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/views', '/v1/hot', '/v1/hot/items/{id}']));
  });
});
