/**
 * The hot ranking on real data: a bounded slice of the MIND long impressions (the first 15,000 rows)
 * replayed as views over the imported Hacker News posts (README "Real data"
 * for the mapping), through the service API on both store pairs. Checks the honesty promises on real
 * traffic — every row gets a verdict, suspicious views are isolated, the HyperLogLog UV agrees with
 * the exact count of distinct visitors within its error — and that the two store pairs agree exactly.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { parseHn } from '../../src/cli/import-hn.js';
import { replayViews, type ReplayReport } from '../../src/cli/hot/replay-views.js';
import { MIND_COLUMNS } from '../../src/cli/hot/view-log.js';
import { HLL_STANDARD_ERROR } from '../../src/hot/hll.js';
import type { ItemInput } from '../../src/kernel/items/content-store.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { dataFile } from '../support/env.js';

const HN = dataFile('hn/hn_posts_2015-09_to_2016-09_sample.csv.gz');
const MIND = dataFile('mind/mind_impressions_long.csv.gz');
const ROWS = 15_000;
/** The first publication time imported: a month before the replay's week (2016-09-20, item-mapping.ts). */
const REPLAYED_FROM_MS = Date.UTC(2016, 7, 20);

const runs: Record<string, { report: ReplayReport; counters: Map<string, [number, number]> }> = {};

/**
 * The posts of the sample's last month (read once for both store pairs): every item a view can map to
 * (the replay lands on the sample's last week, item-mapping.ts; an unmapped view is counted `unknown`).
 */
let recentPosts: Promise<ItemInput[][]> | undefined;
function readRecentPosts(): Promise<ItemInput[][]> {
  recentPosts ??= (async () => {
    const batches: ItemInput[][] = [];
    for await (const batch of parseHn(HN, { batchSize: 1000 })) {
      const recent = batch.items.filter((i) => i.publishedAt >= REPLAYED_FROM_MS);
      if (recent.length > 0) batches.push(recent);
    }
    return batches;
  })();
  return recentPosts;
}
const apps: TestApp[] = [];
afterAll(async () => Promise.all(apps.map((t) => t.close())));

describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const)('replay of MIND impressions as views on $name', ({ name, hot, db }) => {
  it('replays the slice: every row has a verdict, suspicious views are isolated, rankings are published', async () => {
    const t = await startTestApp({ hot, db });
    apps.push(t);
    for (const batch of await readRecentPosts()) await t.f.content.upsertItems(batch, t.clock.now());
    const report = await replayViews(
      {
        recordViews: (v) => t.f.useCases.recordViews(v),
        hot: t.f.hot,
        maintenance: t.f.hotMaintenance,
        counters: t.f.hotCounters,
        content: t.f.content,
      },
      {
        logPath: MIND,
        columns: MIND_COLUMNS,
        maxRows: ROWS,
        mapping: 'hn',
        hnPath: HN,
        reportEveryMs: 6 * 3_600_000,
        progress: false,
        out: () => {},
      },
    );
    expect(report.rows).toBe(ROWS);
    expect(report.unmappedRows).toBe(0);
    const v = report.views;
    expect(v.counted + v.repeat + v.budget + v.flagged + v.expired + v.unknown).toBe(ROWS);
    expect(v.counted).toBeGreaterThan(ROWS / 2);
    expect(v.repeat).toBeGreaterThan(0); // readers shown the same story again within 10 minutes
    expect(v.budget).toBeGreaterThan(0); // impressions of more than 60 items in one minute
    expect(v.unknown + v.expired).toBe(0);
    // rankings at each report point: best first, only items already published
    expect(report.snapshots.length).toBeGreaterThanOrEqual(3);
    for (const s of report.snapshots) {
      expect(s.entries).toHaveLength(10);
      const scores = s.entries.map((e) => e.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      for (const e of s.entries) expect(e.ageHours).toBeGreaterThanOrEqual(0);
    }
    // everything counted was checkpointed
    const ids = [...new Set(report.snapshots.flatMap((s) => s.entries.map((e) => e.id)))];
    const rows = new Map((await t.f.hotArchive.get(ids)).map((r) => [r.itemId, r.pv]));
    const live = await t.f.hotCounters.counters(ids);
    for (const c of live) expect(rows.get(c.itemId)).toBe(c.pv);
    const all = await t.f.hotCounters.top(10_000);
    const counters = new Map(
      (await t.f.hotCounters.counters(all.map((e) => e.itemId))).map((c) => [
        c.itemId,
        [c.pv, c.uv] as [number, number],
      ]),
    );
    expect([...counters.values()].reduce((s, [pv]) => s + pv, 0)).toBe(v.counted);
    runs[name] = { report, counters };
  }, 180_000);

  it('HyperLogLog UV vs the exact distinct visitors: mean within the standard error, worst item within 4 of them', () => {
    const { uv } = runs[name]!.report;
    expect(uv.items).toBeGreaterThan(100);
    expect(uv.meanRelErr).toBeLessThan(HLL_STANDARD_ERROR);
    expect(uv.large.items).toBeGreaterThan(20);
    expect(uv.large.meanRelErr).toBeLessThan(HLL_STANDARD_ERROR * 1.5);
    expect(uv.large.maxRelErr).toBeLessThan(4 * HLL_STANDARD_ERROR);
  });
});

describe('the two store pairs', () => {
  it('count exactly the same PV and UV for every item (Redis PFCOUNT = the in-process HyperLogLog)', () => {
    const [a, b] = Object.values(runs);
    expect(a && b).toBeTruthy();
    expect(b!.report.views).toEqual(a!.report.views);
    expect(b!.counters).toEqual(a!.counters);
  });
});
