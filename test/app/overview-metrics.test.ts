/**
 * The Overview's numbers move in `/metrics` on the embedded stores and on PostgreSQL + Redis: a publish
 * raises the catalog and the publishes; a feed read raises the readers active, the seen filter's fill
 * and its false-positive rate; a view raises the views and the readers active; two hours later the
 * hour window has forgotten them and the day window has not. The store sizes are reported. A stalled
 * store reading answers a scrape with its last value within the wait, not after the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CachedReading } from '../../src/kernel/cached-reading.js';
import { SERVICE_KEY, item, startTestApp, type TestApp, type TestAppOptions } from '../support/app.js';

const svc = { authorization: `Bearer ${SERVICE_KEY}` };

/** The value of one sample (`name` with its labels exactly as printed), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

describe.each<[string, TestAppOptions]>([
  ['the embedded stores', { db: 'pglite' }],
  ['PostgreSQL + Redis', { db: 'postgres', hot: 'redis' }],
])('the Overview metrics move on %s', (name, opts) => {
  let t: TestApp;
  // every scrape reads the stores again (the default serves a reading for 10 s)
  beforeAll(async () => {
    t = await startTestApp({ ...opts, env: { FRESHET_METRICS_STORE_READ_S: '0' } });
  });
  afterAll(async () => t?.close());

  const scrape = async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body;

  it('a publish raises the catalog and the publishes; the store sizes are reported', async () => {
    const before = await scrape();
    expect(sample(before, 'freshet_catalog_items')).toBe(0);
    expect(sample(before, 'freshet_items_published_total')).toBe(0);
    const engine = opts.db === 'postgres' ? 'postgres' : 'pglite';
    expect(sample(before, `freshet_database_size_bytes{engine="${engine}"}`)).toBeGreaterThan(1_000_000);
    const redisBytes = sample(before, 'freshet_redis_used_memory_bytes');
    if (opts.hot === 'redis') expect(redisBytes).toBeGreaterThan(100_000);
    else expect(redisBytes).toBeUndefined();

    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      headers: svc,
      payload: [item('o1', 60_000), item('o2', 120_000), item('o3', 180_000)],
    });
    expect(res.statusCode).toBe(200);
    const after = await scrape();
    expect(sample(after, 'freshet_catalog_items')).toBe(3);
    expect(sample(after, 'freshet_items_published_total')).toBe(3);
    await t.app.inject({ method: 'DELETE', url: '/v1/items/o3', headers: svc });
    expect(sample(await scrape(), 'freshet_catalog_items')).toBe(2);
  });

  it('a feed read and a view raise the readers active, the seen fill and the views; the hour forgets, the day keeps', async () => {
    const before = await scrape();
    expect(sample(before, 'freshet_readers_active{window="1h"}')).toBe(0);
    expect(sample(before, 'freshet_seen_filter_fill_ratio')).toBe(0);
    const feed = await t.app.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      headers: { ...svc, 'x-freshet-reader': 'ov_reader' },
      payload: { action: 'refresh', limit: 5 },
    });
    expect(feed.statusCode, feed.body).toBe(200);
    // the mark is not awaited by the request (Redis: one pipeline): poll the next scrapes
    await expect
      .poll(async () => sample(await scrape(), 'freshet_readers_active{window="1h"}'), { timeout: 10_000 })
      .toBe(1);
    const read = await scrape();
    const fill = sample(read, 'freshet_seen_filter_fill_ratio')!;
    expect(fill).toBeGreaterThan(0);
    expect(fill).toBeLessThan(0.01);
    expect(sample(read, 'freshet_seen_filter_false_positive_rate')).toBeGreaterThan(0);

    // an operator's explain for another reader writes nothing: that reader is not counted active
    const why = await t.app.inject({
      method: 'GET',
      url: '/v1/feeds/for-you/explain?item_id=o1',
      headers: { ...svc, 'x-freshet-reader': 'ov_explained' },
    });
    expect(why.statusCode, why.body).toBe(200);
    const views = await t.app.inject({
      method: 'POST',
      url: '/v1/views',
      headers: svc,
      payload: [{ item_id: 'o1', visitor_id: 'ov_visitor' }],
    });
    expect(views.statusCode, views.body).toBe(200);
    await expect
      .poll(async () => sample(await scrape(), 'freshet_readers_active{window="24h"}'), { timeout: 10_000 })
      .toBe(2);
    const viewed = await scrape();
    expect(sample(viewed, 'freshet_readers_active{window="1h"}')).toBe(2);
    expect(sample(viewed, 'freshet_hot_views_total{verdict="counted"}')).toBe(1);

    t.clock.advance(2 * 3_600_000);
    const later = await scrape();
    expect(sample(later, 'freshet_readers_active{window="1h"}'), name).toBe(0);
    expect(sample(later, 'freshet_readers_active{window="24h"}'), name).toBe(2);
  });
});

describe('a store reading for /metrics', () => {
  it('answers within its wait with the last value while the store stalls, and reads again once stale', async () => {
    let now = 0;
    let stalled = false;
    let reads = 0;
    const r = new CachedReading(
      () => {
        reads++;
        return stalled ? new Promise<number>(() => {}) : Promise.resolve(reads);
      },
      { maxAgeMs: 1000, waitMs: 50, now: () => now },
    );
    expect(await r.get()).toBe(1);
    expect(await r.get()).toBe(1); // fresh: not read again
    now = 1000;
    stalled = true;
    const started = performance.now();
    expect(await r.get()).toBe(1); // the last value, after the wait
    expect(performance.now() - started).toBeLessThan(1000);
    expect(reads).toBe(2);
    expect(await r.get()).toBe(1); // the stalled read is not started again meanwhile
    expect(reads).toBe(2);
  });
});
