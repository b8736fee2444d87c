/**
 * The hot ranking over HTTP on both store pairs: who may record which views, `data.counted`, the
 * rate limit and suspicious traffic (isolated from the ranking, visible in the API and /metrics),
 * `GET /v1/hot` with its range and limit checks and its cached snapshot, and the documented errors.
 * Calls go through `freshet-engine/client` (on `app.inject`); malformed bodies and queries, and requests with
 * no token, are sent raw (the client cannot express them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FreshetClient } from '../../src/client/index.js';
import { HOUR_MS, MINUTE_MS } from '../../src/kernel/clock.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';
import { failure } from '../support/client.js';

const key = { authorization: `Bearer ${SERVICE_KEY}` };

describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const)('hot ranking over HTTP on $name', ({ hot, db }) => {
  let t: TestApp;
  /** The service key (at the server's clock unless a call sets `now`). */
  let svc: FreshetClient;
  /** alice's reader token. */
  let alice: FreshetClient;

  beforeAll(async () => {
    t = await startTestApp({ hot, db, env: { FRESHET_HOT_VISITOR_BUDGET_PER_MIN: '5' } });
    svc = t.client();
    alice = t.client({ token: await t.token('alice') });
    const items = [
      item('h1', HOUR_MS),
      item('h2', 2 * HOUR_MS),
      item('h3', 3 * HOUR_MS),
      item('old', 100 * HOUR_MS),
      item('gone', HOUR_MS),
    ];
    expect(await svc.items.publish(items)).toMatchObject({ inserted: 5 });
  });
  afterAll(async () => t?.close());

  /** A raw `POST /v1/views` (bodies the client's types refuse, requests with no token). */
  const rawView = (payload: unknown, headers: Record<string, string>) =>
    t.app.inject({ method: 'POST', url: '/v1/views', payload: payload as object, headers });
  /** A raw `GET /v1/hot` (queries the client's types refuse, requests with no token). */
  const rawHot = (query: string, headers: Record<string, string> = key) =>
    t.app.inject({ method: 'GET', url: `/v1/hot${query}`, headers });
  const ids = (d: { items: { id: string }[] }) => d.items.map((i) => i.id);

  it('a reader token counts its own view (visitor = sub); a repeat within the window is not counted', async () => {
    expect(await alice.views.record({ item_id: 'h1' })).toMatchObject({
      item_id: 'h1',
      visitor_id: 'alice',
      counted: true,
      verdict: 'counted',
      pv: 1,
      uv: 1,
    });
    expect(await alice.views.record({ item_id: 'h1', visitor_id: 'alice' })).toMatchObject({
      counted: false,
      verdict: 'repeat',
      pv: 1,
      uv: 1,
    });
    t.clock.advance(10 * MINUTE_MS);
    expect(await alice.views.record({ item_id: 'h1' })).toMatchObject({ counted: true, pv: 2, uv: 1 });
  });

  it('a reader token may not view as another visitor, flag, date a view, send a batch or set the time (40301)', async () => {
    const aliceAtT0 = t.client({ token: await t.token('alice'), now: T0 });
    for (const [what, call] of [
      ['another visitor', () => alice.views.record({ item_id: 'h1', visitor_id: 'bob' })],
      ['flagged', () => alice.views.record({ item_id: 'h1', flagged: true })],
      ['at', () => alice.views.record({ item_id: 'h1', at: T0 })],
      ['a batch', () => alice.views.recordBatch([{ item_id: 'h1' }])],
      ['X-Freshet-Now', () => aliceAtT0.views.record({ item_id: 'h1' })],
    ] as const) {
      expect(await failure(call()), what).toMatchObject({ status: 403, code: 40301, data: null });
    }
  });

  it('no token → 40101; the service key must name the visitor → 40001', async () => {
    expect((await rawView({ item_id: 'h1' }, {})).json().code).toBe(40101);
    expect(await failure(svc.views.record({ item_id: 'h1' }))).toMatchObject({ status: 400, code: 40001 });
  });

  it('an unknown or deleted item → 404 with code 40401; bad ids → 40002; bad bodies → 40001', async () => {
    expect(await failure(svc.views.record({ item_id: 'nope', visitor_id: 'v1' }))).toMatchObject({
      status: 404,
      code: 40401,
      data: null,
    });
    await svc.items.delete('gone');
    expect((await failure(svc.views.record({ item_id: 'gone', visitor_id: 'v1' }))).code).toBe(40401);
    for (const bad of [
      { item_id: 'a:b', visitor_id: 'v1' },
      { item_id: 'h1', visitor_id: 'no way' },
    ]) {
      expect(await failure(svc.views.record(bad)), JSON.stringify(bad)).toMatchObject({ status: 400, code: 40002 });
    }
    for (const bad of [
      {},
      { item_id: 'h1', visitor_id: 'v1', colour: 'red' },
      [],
      { item_id: 'h1', visitor_id: 'v1', flagged: 'yes' },
    ]) {
      const res = await rawView(bad, key);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect([40001, 40002]).toContain(res.json().code);
    }
  });

  it('the service key records anonymous visitors and batches; a batch with an unknown item writes nothing', async () => {
    expect(await svc.views.record({ item_id: 'h2', visitor_id: 'anon_1' })).toMatchObject({
      counted: true,
      visitor_id: 'anon_1',
    });
    expect(
      (
        await failure(
          svc.views.recordBatch([
            { item_id: 'h3', visitor_id: 'anon_1' },
            { item_id: 'ghost', visitor_id: 'anon_1' },
          ]),
        )
      ).status,
    ).toBe(404);
    const batch = await svc.views.recordBatch([
      { item_id: 'h3', visitor_id: 'anon_1' },
      { item_id: 'h3', visitor_id: 'anon_2' },
      { item_id: 'h3', visitor_id: 'anon_2' },
      { item_id: 'h3', visitor_id: 'anon_3', at: T0 - HOUR_MS },
    ]);
    expect(batch.summary).toEqual({ counted: 3, repeat: 1, budget: 0, flagged: 0, expired: 0, unknown: 0 });
    expect(batch.results.map((r) => r.counted)).toEqual([true, true, false, true]);
  });

  it('suspicious traffic is isolated from PV/UV/score and visible in the API and /metrics', async () => {
    expect(await svc.views.record({ item_id: 'h2', visitor_id: 'scraper', flagged: true })).toMatchObject({
      counted: false,
      verdict: 'flagged',
    });
    // a bot viewing many items in one minute exceeds its budget (5 per minute in this app)
    const verdicts: string[] = [];
    for (let i = 0; i < 8; i++)
      verdicts.push((await svc.views.record({ item_id: ['h1', 'h2', 'h3'][i % 3]!, visitor_id: 'bot_9' })).verdict);
    expect(verdicts.filter((v) => v === 'budget')).toHaveLength(3);
    const counters = await svc.hot.item('h2');
    expect(counters).toMatchObject({ item: { id: 'h2' }, suspicious: { flagged: 1 } });
    const before = counters.pv;
    expect((await failure(alice.hot.item('h2'))).status).toBe(403);
    t.clock.advance(2 * MINUTE_MS); // past the snapshot's lifetime
    const page = await svc.hot.top({ range: '72h', limit: 20 });
    expect(page.suspicious.flagged).toBeGreaterThanOrEqual(1);
    expect(page.suspicious.budget).toBeGreaterThanOrEqual(3);
    expect(page.suspicious.repeat).toBeGreaterThanOrEqual(2);
    const h2 = page.items.find((i) => i.id === 'h2');
    expect(h2).toMatchObject({ pv: before, suspicious: { flagged: 1 } });
    const metrics = await svc.metrics();
    expect(metrics).toMatch(/freshet_hot_views_total\{verdict="budget"\} 3/);
    expect(metrics).toMatch(/freshet_hot_views_total\{verdict="flagged"\} 1/);
    expect(metrics).toMatch(/freshet_hot_suspicious_views\{kind="budget"\} [1-9]/);
  });

  it('GET /v1/hot: items within range, best first, with pv, uv, score, published_at and when it was computed', async () => {
    t.clock.advance(2 * MINUTE_MS);
    await svc.views.record({ item_id: 'old', visitor_id: 'v_old' });
    const data = await alice.hot.top({ range: '72h', limit: 20 }); // any token may read it
    expect(data).toMatchObject({
      range: '72h',
      limit: 20,
      refresh_s: 60,
      params: { alpha: 1, beta: 1.2, base: 2, gamma: 1.5 },
    });
    expect(data.computed_at_ms).toBe(t.clock.now());
    expect(data.computed_at).toBe(Math.floor(t.clock.now() / 1000));
    expect(ids(data)).not.toContain('old'); // published 100 h ago
    expect(ids(data)).not.toContain('gone');
    expect(new Set(ids(data))).toEqual(new Set(['h1', 'h2', 'h3']));
    const scores = data.items.map((i) => i.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const i of data.items) {
      const hours = (data.computed_at_ms / 1000 - i.published_at) / 3600;
      expect(i.score).toBeCloseTo((1 * i.pv + 1.2 * i.uv) / (hours + 2) ** 1.5, 10);
    }
    expect(ids(await svc.hot.top({ range: '5d' }))).toContain('old');
    expect((await svc.hot.top({ range: '72h', limit: 1 })).items).toHaveLength(1);
    expect(await svc.hot.top()).toMatchObject({ range: '72h', limit: 20 });
  });

  it('serves the same snapshot until it is older than the refresh interval', async () => {
    t.clock.advance(2 * MINUTE_MS);
    const a = await svc.hot.top({ range: '72h' });
    for (let i = 0; i < 3; i++) await svc.views.record({ item_id: 'h3', visitor_id: `burst_${i}` });
    t.clock.advance(59_000);
    const b = await svc.hot.top({ range: '72h' });
    expect(b.computed_at_ms).toBe(a.computed_at_ms);
    expect(b.items).toEqual(a.items);
    t.clock.advance(1_000);
    const c = await svc.hot.top({ range: '72h' });
    expect(c.computed_at_ms).toBe(a.computed_at_ms + 60_000);
    const pv = (d: { items: { id: string; pv: number }[] }) => d.items.find((i) => i.id === 'h3')!.pv;
    expect(pv(c)).toBe(pv(a) + 3);
  });

  it.each([
    ['?limit=-1'],
    ['?limit=0'],
    ['?limit=101'],
    ['?limit=2.5'],
    ['?limit=ten'],
    ['?range=72'],
    ['?range=0h'],
    ['?range=31d'],
    ['?range=721h'],
    ['?range=3w'],
    ['?range=-3h'],
    ['?range=72h&colour=red'],
  ])('GET /v1/hot%s → 400 with code 40001', async (query) => {
    const res = await rawHot(query);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 40001, data: null });
  });

  it('GET /v1/hot at a past X-Freshet-Now ranks the items published in [now − range, now] of that time, none from its future', async () => {
    const past = Date.UTC(2016, 8, 20, 12); // a replay of 2016 data
    await svc.items.publish([item('p16a', T0 - past + HOUR_MS), item('p16b', T0 - past + 2 * HOUR_MS)], { now: past });
    const views = [
      { item_id: 'p16a', visitor_id: 'r1', at: past },
      { item_id: 'p16a', visitor_id: 'r2', at: past },
      { item_id: 'p16b', visitor_id: 'r1', at: past },
    ];
    expect((await svc.views.recordBatch(views)).summary.counted).toBe(3);
    const at = (now: number, range = '72h') => svc.hot.top({ range, now });
    const then = await at(past + MINUTE_MS);
    expect(ids(then)).toEqual(['p16a', 'p16b']); // the 2026 items lie in its future
    expect(then.computed_at_ms).toBe(past + MINUTE_MS);
    // the range is a window of the request's time: [past − 1.5 h, past − 0.5 h] holds only p16a (published 1 h before `past`)
    expect(ids(await at(past - 0.5 * HOUR_MS, '1h'))).toEqual(['p16a']);
    expect(ids(await at(past - 1.5 * HOUR_MS, '1h'))).toEqual(['p16b']);
    // and today's ranking does not show 2016
    expect(await svc.views.record({ item_id: 'h3', visitor_id: 'today_1' })).toMatchObject({ item_id: 'h3' });
    t.clock.advance(2 * MINUTE_MS);
    const today = ids(await at(t.clock.now(), '30d'));
    expect(today).not.toContain('p16a');
    expect(today.length).toBeGreaterThan(0);
  });

  it('GET /v1/hot needs a token (40101)', async () => {
    expect((await rawHot('', {})).statusCode).toBe(401);
  });

  it("an edited item's published_at reaches the hot counters; the routes are in the OpenAPI document", async () => {
    const edited = item('h2', 5 * HOUR_MS);
    expect(await svc.items.publish([edited])).toMatchObject({ updated: 1 });
    const [h2] = await t.f.hotCounters.counters(['h2']);
    expect(h2!.publishedAtMs).toBe(edited.published_at * 1000);
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/views', '/v1/hot', '/v1/hot/items/{id}']));
  });
});

/**
 * A replay of 2016 data on a running server keeps its ranking through the wall-clock archive pass with
 * `FRESHET_HOT_RETENTION_DAYS=0`, and loses it with the default retention (docs/hot.md "Retention").
 */
describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const)('a replay of 2016 on a running server, through the archive pass, on $name (issue 14.2)', ({ hot, db }) => {
  const past = Date.UTC(2016, 8, 20, 12); // the MIND replay's virtual days, ~10 years before the test clock
  const svc = { authorization: `Bearer ${SERVICE_KEY}` };

  /** Publishes two 2016 items, records three views of them at `past`, then runs what a server's workers run at the wall clock. */
  async function replayThenMaintain(t: TestApp): Promise<void> {
    const published = await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      headers: svc,
      payload: [item('p16a', T0 - past + HOUR_MS), item('p16b', T0 - past + 2 * HOUR_MS)],
    });
    expect(published.statusCode, published.body).toBe(200);
    const views = [
      { item_id: 'p16a', visitor_id: 'r1', at: past },
      { item_id: 'p16a', visitor_id: 'r2', at: past },
      { item_id: 'p16b', visitor_id: 'r1', at: past },
    ];
    const res = await t.app.inject({ method: 'POST', url: '/v1/views', payload: views, headers: svc });
    expect(res.json().data.summary.counted).toBe(3);
    await t.f.hotMaintenance.archive(t.clock.now()); // the checkpoint worker's pass: checkpoint, then archive
    await t.f.hotMaintenance.rescore(t.clock.now());
  }
  const hotAt = async (t: TestApp, now: number) =>
    (await t.app.inject({ method: 'GET', url: '/v1/hot?range=72h', headers: { ...svc, 'x-freshet-now': String(now) } }))
      .json()
      .data.items.map((i: { id: string; pv: number }) => `${i.id}:${i.pv}`);
  const viewToday = async (t: TestApp) =>
    (
      await t.app.inject({
        method: 'POST',
        url: '/v1/views',
        payload: { item_id: 'p16b', visitor_id: 'today_1' },
        headers: svc,
      })
    ).json().data.verdict;

  it('FRESHET_HOT_RETENTION_DAYS=0 keeps every item: GET /v1/hot at a 2016 X-Freshet-Now still ranks the replayed items', async () => {
    const t = await startTestApp({ hot, db, env: { FRESHET_HOT_RETENTION_DAYS: '0' } });
    try {
      await replayThenMaintain(t);
      expect(await hotAt(t, past + MINUTE_MS)).toEqual(['p16a:2', 'p16b:1']);
      expect(await viewToday(t)).toBe('counted'); // no item is past a retention of 0
    } finally {
      await t.close();
    }
  });

  it('the default retention (90 days) archives them at the wall clock: the 2016 ranking is empty and views are expired', async () => {
    const t = await startTestApp({ hot, db });
    try {
      await replayThenMaintain(t);
      expect(await hotAt(t, past + MINUTE_MS)).toEqual([]);
      expect(await viewToday(t)).toBe('expired');
    } finally {
      await t.close();
    }
  });
});
