/**
 * Seen-filter checkpoints on a real 3-master Redis Cluster: every journal, take, acknowledgement and
 * restore script touches one slot (a shard's `{s<N>.<s>}` keys, a reader's `{u:<id>}` keys), so the
 * same loss — every key gone, day layouts included — is restored with 4 seen shards spread over the nodes.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/compose/migrations.js';
import { DAY_MS, ManualClock } from '../../src/kernel/clock.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { Keys, shardOf } from '../../src/kernel/redis/keys.js';
import { DayLayouts } from '../../src/seen/day-layouts.js';
import { fixedLayout } from '../../src/seen/layout.js';
import { sizeWindow } from '../../src/seen/bloom.js';
import { PostgresSeenCheckpoints } from '../../src/seen/postgres-seen-checkpoints.js';
import { RedisReaderSeenFilter } from '../../src/seen/redis-reader-seen-filter.js';
import { RedisSeenFilter } from '../../src/seen/redis-seen-filter.js';
import { SeenCheckpointer } from '../../src/seen/seen-checkpointer.js';
import { openPostgres } from '../../src/kernel/sql/sql.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../support/env.js';
import { deleteByPrefix } from '../support/redis.js';
import { fileCluster } from '../support/redis-cluster.js';

const file = fileCluster();
const T0 = Date.UTC(2026, 2, 6, 12);
const schema = uniqueSchema();
afterAll(async () => {
  const admin = await openPostgres(TEST_DATABASE_URL);
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.close();
});

describe('seen-filter checkpoints on a Redis Cluster', () => {
  it('restore both strategies after every key is lost, 4 shards over 3 nodes', async () => {
    const sql = await openPostgres(TEST_DATABASE_URL, { schema });
    try {
      await migrate(sql);
      const keys = new Keys(file.nextPrefix());
      const layout = fixedLayout(sizeWindow(10_000, 0.01, 7), 4);
      const reader = { initialCapacity: 1_000, errorRate: 0.01, ttlMs: 30 * DAY_MS };
      const cp = new SeenCheckpointer({
        redis: file.redis,
        keys,
        store: new PostgresSeenCheckpoints(sql),
        dayLayouts: new DayLayouts(file.redis, keys, layout, 7),
        reader,
        clock: new ManualClock(T0),
        log: silentLogger,
      });
      expect(await cp.ensureShards(T0)).toBe(4);
      const rolling = new RedisSeenFilter(file.redis, keys, layout, { days: 7, checkpoints: cp });
      const perReader = new RedisReaderSeenFilter(file.redis, keys, reader, { checkpoints: cp });
      const marked = new Map<string, string[]>();
      for (let r = 0; r < 16; r++) {
        const items = Array.from({ length: 12 }, (_, i) => `c${r}_${i}`);
        marked.set(`u${r}`, items);
        await rolling.markSeen(`u${r}`, items, T0 - DAY_MS);
        await perReader.markSeen(`u${r}`, items, T0);
      }
      expect(new Set([...marked.keys()].map((r) => shardOf(r, 4))).size).toBe(4);
      expect(await cp.checkpoint()).toMatchObject({ days: 4, readers: 16 });
      await deleteByPrefix(file.redis, keys.prefix);
      for (const [r, items] of marked) {
        expect(await rolling.seen(r, items, T0), r).toEqual(items.map(() => true));
        expect(await perReader.seen(r, items, T0), r).toEqual(items.map(() => true));
      }
    } finally {
      await sql.close();
    }
  });
});
