/**
 * The hot ranking's service-level contract (HotRanking + HotMaintenance over a HotCounters adapter,
 * the PostgreSQL content store and hot archive): resolving items on first view, the range filter and
 * the cached snapshot of `GET /v1/hot`, checkpoint → loss → rebuild, archiving, batches.
 * A test file adopts it through test/support/contract.ts; the factory also hands a migrated, empty SQL store.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/kernel/clock.js';
import { DEFAULT_HOT_PARAMS, hotScore, hoursSincePublish } from '../../src/hot/domain.js';
import type { HotCounters, HotRules } from '../../src/hot/hot-counters.js';
import type { Sql } from '../../src/kernel/sql/sql.js';
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import { PostgresHotArchive } from '../../src/hot/adapters/postgres-hot-archive.js';
import { HotRanking } from '../../src/hot/service.js';
import { HotMaintenance } from '../../src/hot/maintenance.js';
import { noHotMetrics } from '../../src/hot/hot-metrics.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { RULES, T0, expectClose } from './hot-counters.contract.js';

/** A fresh store and an empty, migrated database. */
export interface HotRankingHarness {
  counters: HotCounters;
  sql: Sql;
  /** Simulates losing the counters store (Redis: keys deleted; in-process: a new instance). */
  lose(): Promise<HotCounters>;
}

export type HotRankingFactory = (rules: HotRules) => Promise<HotRankingHarness>;

const REFRESH = 60_000;

interface World {
  h: HotRankingHarness;
  content: PostgresContentStore;
  archive: PostgresHotArchive;
  hot: HotRanking;
  maint: HotMaintenance;
  /** Rewires the services over another counters store (after a loss). */
  rewire(c: HotCounters): void;
}

async function withWorld(factory: HotRankingFactory, rules: Partial<HotRules>, body: (w: World) => Promise<void>) {
  const r = { ...RULES, ...rules };
  const h = await factory(r);
  const content = new PostgresContentStore(h.sql, { ownsSql: false });
  const archive = new PostgresHotArchive(h.sql);
  const w = { h, content, archive } as World;
  w.rewire = (counters) => {
    w.hot = new HotRanking(
      { counters, content, metrics: noHotMetrics, log: silentLogger },
      { params: r.params, cacheRefreshMs: REFRESH, cap: r.cap, retentionMs: r.retentionMs },
    );
    w.maint = new HotMaintenance(
      { counters, archive, metrics: noHotMetrics, log: silentLogger },
      { retentionMs: r.retentionMs },
    );
  };
  w.rewire(h.counters);
  await w.maint.recover(T0); // a fresh deployment: nothing to restore, the shards are sealed
  await body(w);
}

/** Items `id` published `ageMs` before T0. */
async function items(w: World, spec: Record<string, number>): Promise<void> {
  const rows = Object.entries(spec).map(([id, ageMs]) => ({
    id,
    authorId: 'a',
    title: `Item ${id}`,
    text: '',
    url: null,
    tags: [],
    publishedAt: T0 - ageMs,
    popularity: 0,
  }));
  await w.content.upsertItems(rows, T0);
}

/** `n` distinct visitors `<tag>0..n-1` view `itemId` at `nowMs`. */
async function views(w: World, itemId: string, n: number, nowMs = T0, tag = 'v'): Promise<void> {
  for (let i = 0; i < n; i++) await w.hot.recordView({ itemId, visitorId: `${tag}${i}`, nowMs });
}

/** Registers the contract's tests under `describe(\`HotRanking contract: ${name}\`)`. */
export function hotRankingContract(name: string, factory: HotRankingFactory): void {
  describe(`HotRanking contract: ${name}`, () => {
    it('resolves an item on its first view; unknown and deleted items are NOT_FOUND; old items expired', async () => {
      await withWorld(factory, { retentionMs: 30 * DAY_MS }, async (w) => {
        await items(w, { n1: HOUR_MS, gone: HOUR_MS, old: 31 * DAY_MS });
        expect(await w.hot.recordView({ itemId: 'n1', visitorId: 'u1', nowMs: T0 })).toMatchObject({
          verdict: 'counted',
          pv: 1,
          uv: 1,
        });
        await expect(w.hot.recordView({ itemId: 'nope', visitorId: 'u1', nowMs: T0 })).rejects.toMatchObject({
          code: 40401,
        });
        await w.content.deleteItem('gone', T0);
        await expect(w.hot.recordView({ itemId: 'gone', visitorId: 'u1', nowMs: T0 })).rejects.toMatchObject({
          code: 40401,
        });
        expect(await w.hot.recordView({ itemId: 'old', visitorId: 'u1', nowMs: T0 })).toMatchObject({
          verdict: 'expired',
          pv: 0,
        });
        await expect(w.hot.recordView({ itemId: 'n1', visitorId: 'a:b', nowMs: T0 })).rejects.toMatchObject({
          code: 40002,
        });
      });
    });

    it('range filter: only items published within the range of the snapshot time, best first, cut to limit', async () => {
      await withWorld(factory, {}, async (w) => {
        await items(w, { h10: 10 * HOUR_MS, h50: 50 * HOUR_MS, h100: 100 * HOUR_MS, d20: 20 * DAY_MS });
        await views(w, 'h10', 3);
        await views(w, 'h50', 30);
        await views(w, 'h100', 300);
        await views(w, 'd20', 3000);
        const ids = async (rangeMs: number, limit = 20) =>
          (await w.hot.top(rangeMs, limit, T0)).entries.map((e) => e.item.id);
        expect((await ids(72 * HOUR_MS)).sort()).toEqual(['h10', 'h50']);
        expect(await ids(24 * HOUR_MS)).toEqual(['h10']);
        expect((await ids(30 * DAY_MS)).sort()).toEqual(['d20', 'h10', 'h100', 'h50']);
        expect(await ids(30 * DAY_MS, 2)).toHaveLength(2);
        expect(await ids(HOUR_MS)).toEqual([]);
      });
    });

    it("serves a snapshot for the refresh interval; each score is note 2's formula at the snapshot time", async () => {
      await withWorld(factory, {}, async (w) => {
        await items(w, { s1: 5 * HOUR_MS, s2: HOUR_MS });
        await views(w, 's1', 20);
        await views(w, 's2', 4);
        const first = await w.hot.top(72 * HOUR_MS, 10, T0);
        expect(first.computedAtMs).toBe(T0);
        for (const e of first.entries)
          expectClose(e.score, hotScore(e.pv, e.uv, hoursSincePublish(T0, e.item.publishedAt), DEFAULT_HOT_PARAMS));
        expect(first.entries.map((e) => [e.item.id, e.pv])).toEqual([
          ['s1', 20],
          ['s2', 4],
        ]);
        await views(w, 's2', 40, T0 + MINUTE_MS / 2, 'w');
        const cached = await w.hot.top(72 * HOUR_MS, 10, T0 + REFRESH - 1);
        expect(cached.computedAtMs).toBe(T0);
        expect(cached.entries.map((e) => e.pv)).toEqual([20, 4]);
        const fresh = await w.hot.top(72 * HOUR_MS, 10, T0 + REFRESH);
        expect(fresh.computedAtMs).toBe(T0 + REFRESH);
        expect(fresh.entries.map((e) => [e.item.id, e.pv])).toEqual([
          ['s2', 44],
          ['s1', 20],
        ]);
        await w.content.deleteItem('s1', T0);
        await w.hot.itemDeleted('s1');
        expect((await w.hot.top(72 * HOUR_MS, 10, T0 + REFRESH)).entries.map((e) => e.item.id)).toEqual(['s2']);
      });
    });

    it('checkpoint → loss → rebuild: checkpointed counts come back, summed with what was counted since', async () => {
      await withWorld(factory, {}, async (w) => {
        await items(w, { c1: HOUR_MS, c2: 2 * HOUR_MS });
        await views(w, 'c1', 50);
        await views(w, 'c2', 5);
        await w.hot.recordView({ itemId: 'c2', visitorId: 'bot', nowMs: T0, flagged: true });
        expect(await w.maint.checkpoint(T0)).toEqual({ saved: 2, lost: [] });
        const rows = await w.archive.get(['c1', 'c2']);
        expect(rows.map((r) => [r.itemId, r.pv, r.uv, r.suspicious.flagged, r.archivedAtMs])).toEqual([
          ['c1', 50, 50, 0, null],
          ['c2', 5, 5, 1, null],
        ]);
        expect(await w.maint.checkpoint(T0 + 1)).toEqual({ saved: 0, lost: [] }); // nothing new
        await views(w, 'c1', 7, T0 + MINUTE_MS, 'late'); // after the checkpoint: what a loss takes
        const c = await w.h.lose();
        w.rewire(c);
        await views(w, 'c1', 3, T0 + 2 * MINUTE_MS, 'after'); // counted while lost
        const r = await w.maint.recover(T0 + 2 * MINUTE_MS);
        expect(r.restored).toBe(2);
        const [c1, c2] = await c.counters(['c1', 'c2']);
        expect(c1).toMatchObject({ pv: 53, publishedAtMs: T0 - HOUR_MS });
        expect(Math.abs(c1!.uv - 53)).toBeLessThanOrEqual(1);
        expect(c2).toMatchObject({ pv: 5, suspicious: { flagged: 1 } });
        expect((await w.hot.top(72 * HOUR_MS, 10, T0 + 2 * MINUTE_MS)).entries.map((e) => e.item.id)).toEqual([
          'c1',
          'c2',
        ]);
        expect(await w.maint.recover(T0 + 3 * MINUTE_MS)).toEqual({ shards: [], restored: 0 }); // nothing lost now
        await w.maint.checkpoint(T0 + 3 * MINUTE_MS);
        expect((await w.archive.get(['c1']))[0]!.pv).toBe(53);
      });
    });

    it('archives items past the retention: final checkpoint in PostgreSQL, gone from the hot store', async () => {
      await withWorld(factory, { retentionMs: 10 * DAY_MS }, async (w) => {
        await items(w, { young: HOUR_MS, aging: 9 * DAY_MS });
        await views(w, 'young', 2);
        await views(w, 'aging', 6);
        expect(await w.maint.archive(T0)).toBe(0);
        expect(await w.maint.archive(T0 + 2 * DAY_MS)).toBe(1);
        const [aging] = await w.archive.get(['aging']);
        expect(aging).toMatchObject({ pv: 6, uv: 6, archivedAtMs: T0 + 2 * DAY_MS });
        expect(await w.h.counters.counters(['aging'])).toMatchObject([{ publishedAtMs: null, pv: 0, score: null }]);
        expect((await w.hot.top(30 * DAY_MS, 10, T0 + 2 * DAY_MS)).entries.map((e) => e.item.id)).toEqual(['young']);
        expect((await w.hot.recordView({ itemId: 'aging', visitorId: 'x', nowMs: T0 + 2 * DAY_MS })).verdict).toBe(
          'expired',
        );
        const c = await w.h.lose();
        w.rewire(c);
        expect((await w.maint.recover(T0 + 2 * DAY_MS)).restored).toBe(1); // the archived row is not restored
        expect((await c.counters(['aging']))[0]!.pv).toBe(0);
      });
    });

    it('batches: checked whole before anything is written; in order; rate limit applies inside the batch', async () => {
      await withWorld(factory, {}, async (w) => {
        await items(w, { b1: HOUR_MS, b2: HOUR_MS });
        const v = (itemId: string, visitorId: string, nowMs = T0) => ({ itemId, visitorId, nowMs });
        await expect(w.hot.recordViews([v('b1', 'u1'), v('missing', 'u1')])).rejects.toMatchObject({ code: 40401 });
        await expect(w.hot.recordViews([v('b1', 'u1'), v('b2', 'no good')])).rejects.toMatchObject({ code: 40002 });
        expect((await w.h.counters.counters(['b1']))[0]!.pv).toBe(0);
        const results = await w.hot.recordViews([
          v('b1', 'u1'),
          v('b1', 'u1', T0 + 1),
          v('b1', 'u2'),
          v('b2', 'u1'),
          v('b1', 'u1', T0 + RULES.rateWindowMs),
        ]);
        expect(results.map((r) => r.verdict)).toEqual(['counted', 'repeat', 'counted', 'counted', 'counted']);
        expect((await w.h.counters.counters(['b1']))[0]).toMatchObject({ pv: 3, uv: 2, suspicious: { repeat: 1 } });
      });
    });
  });
}
