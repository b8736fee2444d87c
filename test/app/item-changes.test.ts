/**
 * Two Freshet processes over one PostgreSQL schema and one Redis prefix (what `serve --workers 2` runs):
 * a write through one reaches the other's for-you fill pool and item cache through the change channel
 * (src/content/redis-item-changes.ts, wired in src/compose/open.ts), not at the pool's next rebuild —
 * the second process's clock never moves here, so it never rebuilds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFreshet, type Freshet } from '../../src/compose/open.js';
import { buildApp } from '../../src/server/app.js';
import { openPostgres } from '../../src/kernel/sql/sql.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/env.js';
import { until } from '../support/faults.js';

describe('item changes between two processes', () => {
  let a: TestApp;
  let b: Freshet;
  let appB: Awaited<ReturnType<typeof buildApp>>;

  beforeAll(async () => {
    a = await startTestApp({ hot: 'redis', db: 'postgres' });
    const sql = await openPostgres(TEST_DATABASE_URL, { schema: a.schema });
    b = await openFreshet(a.config, { clock: new ManualClock(T0), sql, defaultMetrics: false });
    appB = await buildApp(b);
    await appB.ready();
  });
  afterAll(async () => {
    await appB?.close();
    await a?.close();
  });

  const publish = async (items: unknown[]) => {
    const res = await a.app.inject({
      method: 'POST',
      url: '/v1/items',
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
      payload: items,
    });
    expect(res.statusCode).toBe(200);
  };
  const refreshOnB = async (reader: string): Promise<string[]> => {
    const res = await appB.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      headers: { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-reader': reader },
      payload: { action: 'refresh', limit: 5 },
    });
    expect(res.statusCode).toBe(200);
    return (res.json() as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
  };

  it("a publish through one reaches the other's pool at once, and a delete leaves the other's hydration", async () => {
    await publish([item('old_1', 5 * 3_600_000), item('old_2', 6 * 3_600_000), item('old_3', 7 * 3_600_000)]);
    expect(await refreshOnB('reader_0')).toContain('old_1'); // b's pool is built now, at T0, and not again

    await publish([item('news_1', 60_000, { popularity: 1000 })]);
    let n = 0;
    await until(async () => (await refreshOnB(`reader_${++n}`))[0] === 'news_1', 2_000);
    expect(await b.content.getItems(['news_1'])).toHaveLength(1); // now in b's item cache

    const del = await a.app.inject({
      method: 'DELETE',
      url: '/v1/items/news_1',
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
    });
    expect(del.statusCode).toBe(200);
    await until(async () => (await b.content.getItems(['news_1'])).length === 0, 1_000, 2);
    for (let i = 0; i < 3; i++) expect(await refreshOnB(`after_${i}`)).not.toContain('news_1');
  });
});
