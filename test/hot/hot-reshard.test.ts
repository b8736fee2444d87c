/**
 * Moving the hot counters to another shard layout (src/hot/maintenance.ts "Re-shard"), on a standalone
 * Redis and on a 3-master Cluster, with the PostgreSQL checkpoints on PGlite:
 * - the upgrade from note 2's one `{hot}` shard of earlier versions (no layout recorded) to 12 shards:
 *   every count survives — those checkpointed and those counted since the last checkpoint — none is
 *   counted twice (also with views the new layout counted before it restored, and after a second
 *   recovery), and no key of the old layout is left but rate-limit marks and budgets, which expire;
 * - a change of the shard count (12 → 16) recovered by two processes at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HotMaintenance } from '../../src/hot/maintenance.js';
import { RedisHotCounters } from '../../src/hot/adapters/redis-hot-counters.js';
import { PostgresHotArchive } from '../../src/hot/adapters/postgres-hot-archive.js';
import { PostgresContentStore } from '../../src/kernel/items/postgres-content-store.js';
import type { HotCounters, ItemCounters } from '../../src/hot/hot-counters.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import type { RedisClient } from '../../src/kernel/redis/client.js';
import type { Sql } from '../../src/kernel/sql/sql.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { noHotMetrics } from '../../src/hot/hot-metrics.js';
import { HOUR_MS, MINUTE_MS } from '../../src/kernel/clock.js';
import { RULES, T0 } from '../contracts/hot-counters.contract.js';
import { fileRedis } from '../support/redis.js';
import { fileCluster } from '../support/redis-cluster.js';
import { openTestPglite } from '../support/pglite.js';

const ITEMS = Array.from({ length: 40 }, (_, i) => `it_${i}`);

/** A Redis to run on: its client and a fresh prefix per test. */
interface Place {
  redis: () => RedisClient;
  nextPrefix: () => string;
}

/** Every key under `pattern` (all masters of a Cluster). */
async function scanKeys(redis: RedisClient, pattern: string): Promise<string[]> {
  const nodes = 'nodes' in redis && typeof redis.nodes === 'function' ? redis.nodes('master') : [redis];
  const out: string[] = [];
  for (const node of nodes as RedisClient[]) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      out.push(...keys);
    } while (cursor !== '0');
  }
  return out;
}

/** Every item's counters and the suspicious totals: what must survive a move, exactly. */
async function state(c: HotCounters) {
  const counters = (await c.counters(ITEMS)).map(({ score: _s, ...rest }: ItemCounters) => rest);
  return { counters, totals: await c.suspiciousTotals() };
}

/** The ranking keeps 10 items per shard: the counters of the others are found only through PostgreSQL. */
const CAP = 10;

function reshardSuite(name: string, place: Place) {
  describe(`hot counters move to a new shard layout (${name})`, () => {
    let sql: Sql;
    beforeAll(async () => {
      sql = await openTestPglite();
      await new PostgresContentStore(sql).upsertItems(
        ITEMS.map((id, i) => ({
          id,
          authorId: 'a',
          title: id,
          text: '',
          url: null,
          tags: [],
          publishedAt: T0 - (i + 1) * MINUTE_MS,
          popularity: 0,
        })),
        T0,
      );
    });
    afterAll(async () => sql?.close());

    const archive = () => new PostgresHotArchive(sql);
    const counters = (prefix: string, shards: number) =>
      new RedisHotCounters(place.redis(), new Keys(prefix, 1, shards), { ...RULES, cap: CAP });
    const maintenance = (c: HotCounters) =>
      new HotMaintenance(
        { counters: c, archive: archive(), metrics: noHotMetrics, log: silentLogger },
        { retentionMs: 0 },
      );
    /** Views of every item by `visitors` visitors (item i: i % 5 + 1 of them), one flagged view each. */
    const views = async (c: HotCounters, tag: string, nowMs: number) => {
      for (const [i, itemId] of ITEMS.entries()) {
        for (let v = 0; v <= i % 5; v++) await c.view({ itemId, visitorId: `${tag}${v}`, nowMs });
        await c.view({ itemId, visitorId: `${tag}bot`, nowMs, flagged: true });
      }
    };

    it("from note 2's one {hot} shard to 12: nothing lost, nothing counted twice, no old key left", async () => {
      const prefix = place.nextPrefix();
      // the earlier version: one {hot} shard, checkpointed once, then more views not yet checkpointed
      const old = counters(prefix, 1);
      const oldM = maintenance(old);
      await oldM.recover(T0); // a fresh store: restored (empty) and sealed, as every start does
      await place.redis().del(new Keys(prefix).hotLayout()); // earlier versions recorded no layout
      await old.register(ITEMS.map((itemId, i) => ({ itemId, publishedAtMs: T0 - (i + 1) * MINUTE_MS })));
      await views(old, 'a', T0);
      await oldM.checkpoint(T0);
      await views(old, 'b', T0 + HOUR_MS);
      await oldM.checkpoint(T0 + HOUR_MS);
      await oldM.rescore(T0 + HOUR_MS); // 30 items leave the ranking: their counters stay
      for (const itemId of ITEMS.slice(0, 5)) await old.view({ itemId, visitorId: 'late', nowMs: T0 + HOUR_MS });
      const before = await state(old);
      expect(before.counters[4]).toMatchObject({ pv: 11, uv: 11, suspicious: { repeat: 0, budget: 0, flagged: 2 } });
      expect((await old.top(100)).length).toBeLessThanOrEqual(CAP + 5); // the others are in no ranking

      // the new version starts: it counts views at once, and restores beside them
      const neu = counters(prefix, 12);
      expect(await neu.priorLayout()).not.toBeNull();
      await neu.register([{ itemId: 'it_0', publishedAtMs: T0 - MINUTE_MS }]);
      await neu.view({ itemId: 'it_0', visitorId: 'c0', nowMs: T0 + 2 * HOUR_MS });
      const r = await maintenance(neu).recover(T0 + 2 * HOUR_MS);
      expect(r.shards).toHaveLength(12);
      const after = await state(neu);
      const expected = structuredClone(before);
      expected.counters[0]!.pv += 1;
      expected.counters[0]!.uv += 1;
      expect(after).toEqual(expected);
      expect(await neu.top(1_000)).toHaveLength(Math.min(ITEMS.length, 12 * CAP));
      expect(await neu.priorLayout()).toBeNull();
      expect(await place.redis().get(new Keys(prefix).hotLayout())).toBe('12');
      // only marks and budgets of the old shard are left, each with its time to live
      const left = await scanKeys(place.redis(), `${prefix}{hot}:*`);
      expect(left.filter((k) => !/:(ratelimit|budget):/.test(k))).toEqual([]);
      for (const k of left) expect(await place.redis().pttl(k)).toBeGreaterThan(0);
      // again (a second process, a restart): nothing moves twice
      await maintenance(counters(prefix, 12)).recover(T0 + 3 * HOUR_MS);
      expect(await state(neu)).toEqual(expected);
      // and the checkpoints follow the new layout
      await maintenance(neu).checkpoint(T0 + 3 * HOUR_MS);
      const rows = await archive().get(ITEMS);
      expect(rows.map((row) => row.pv)).toEqual(expected.counters.map((c) => c.pv));
    }, 60_000);

    it('from 12 shards to 16, two processes recovering at once', async () => {
      const prefix = place.nextPrefix();
      const twelve = counters(prefix, 12);
      await maintenance(twelve).recover(T0);
      await twelve.register(ITEMS.map((itemId, i) => ({ itemId, publishedAtMs: T0 - (i + 1) * MINUTE_MS })));
      await views(twelve, 'x', T0);
      await maintenance(twelve).checkpoint(T0);
      await views(twelve, 'y', T0 + HOUR_MS); // not checkpointed
      const before = await state(twelve);
      const [a, b] = [counters(prefix, 16), counters(prefix, 16)];
      await Promise.all([maintenance(a).recover(T0 + 2 * HOUR_MS), maintenance(b).recover(T0 + 2 * HOUR_MS)]);
      expect(await state(a)).toEqual(before);
      expect(await place.redis().get(new Keys(prefix).hotLayout())).toBe('16');
      const old = await scanKeys(place.redis(), `${prefix}{hot12.*`);
      expect(old.filter((k) => !/:(ratelimit|budget):/.test(k))).toEqual([]);
    }, 60_000);
  });
}

const standalone = fileRedis();
reshardSuite('standalone Redis', { redis: () => standalone.redis, nextPrefix: standalone.nextPrefix });
const cluster = fileCluster();
reshardSuite('Redis Cluster', { redis: () => cluster.redis, nextPrefix: () => cluster.nextPrefix() });
