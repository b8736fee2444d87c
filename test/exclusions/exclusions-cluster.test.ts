/**
 * Note 3's per-reader seen filter and note 5's exclusion cache on a real 3-master Redis Cluster
 * (ioredis `Cluster`): both contracts, and the key layout that makes them Cluster-safe — every key of
 * one reader in one slot, different readers spread over the nodes.
 */
import { describe, expect, it } from 'vitest';
import { RedisReaderSeenFilter } from '../../src/seen/redis-reader-seen-filter.js';
import { RedisExclusionCache } from '../../src/exclusions/adapters/redis-exclusion-cache.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { fileCluster } from '../support/redis-cluster.js';
import { adopt, redisClusterEngine } from '../support/contract.js';
import { readerSeenFilterContract } from '../contracts/reader-seen-filter.contract.js';
import { exclusionCacheContract } from '../contracts/exclusions.contract.js';

const file = fileCluster();
const engine = redisClusterEngine(file);

adopt(readerSeenFilterContract, engine, ({ redis, keys }, s) => ({
  filter: new RedisReaderSeenFilter(redis, keys, s),
}));
adopt(exclusionCacheContract, engine, ({ redis, keys, commands }, s) => ({
  cache: new RedisExclusionCache(redis, keys, s),
  commands,
}));

describe('per-reader keys on a Cluster', () => {
  it('puts every key of a reader in one slot, and readers on several nodes', async () => {
    const keys = new Keys('fs:');
    const perReader = async (r: string) =>
      new Set(
        await Promise.all(
          [
            keys.readerSeen(r),
            keys.readerSeenMeta(r),
            keys.recentViews(r),
            keys.recentViewsAt(r),
            keys.exclusionCache(r),
            keys.exclusionGeneration(r),
            keys.feedCache(r),
          ].map((k) => file.redis.call('CLUSTER', 'KEYSLOT', k)),
        ),
      );
    for (const r of ['u_1', 'u_2', 'alice']) expect((await perReader(r)).size).toBe(1);
    const slots = await Promise.all(
      Array.from({ length: 30 }, (_, i) => file.redis.call('CLUSTER', 'KEYSLOT', keys.readerSeen(`reader_${i}`))),
    );
    expect(new Set(slots.map((s) => Math.floor(Number(s) / 5462))).size).toBeGreaterThan(1);
  });

  it('a cross-reader batch of views lands on every reader', async () => {
    const cache = new RedisExclusionCache(file.redis, new Keys(file.nextPrefix()), {
      recentViews: 10,
      recentViewsTtlMs: 86_400_000,
      durableTtlMs: 60_000,
    });
    const views = Array.from({ length: 20 }, (_, i) => ({ readerId: `reader_${i}`, itemId: `item_${i}` }));
    await cache.pushViews(views, Date.UTC(2026, 2, 5));
    for (const v of views) expect((await cache.read(v.readerId, Date.UTC(2026, 2, 5))).recentViews).toEqual([v.itemId]);
  });
});
