/**
 * The SeenFilter and FeedCache contracts on a real 3-master Redis Cluster (ioredis `Cluster`), and
 * the key layout that makes them Cluster-safe: each reader's day keys share one slot, and with
 * several seen shards different readers land on different slots and nodes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DAY_MS, dayStamp } from '../src/domain/clock.js';
import { RedisSeenFilter } from '../src/adapters/redis/seen-filter.js';
import { RedisFeedCache } from '../src/adapters/redis/feed-cache.js';
import { Keys } from '../src/adapters/redis/keys.js';
import { deleteByPrefix } from './support/redis.js';
import { fileCluster } from './support/redis-cluster.js';
import { seenFilterContract } from './contracts/seen-filter.contract.js';
import { feedCacheContract } from './contracts/feed-cache.contract.js';

const file = fileCluster();

seenFilterContract('redis cluster', async (g) => {
  const prefix = file.nextPrefix();
  const keys = new Keys(prefix, 4);
  return {
    filter: new RedisSeenFilter(file.redis, keys, g, { days: g.days }),
    cleanup: async () => void (await deleteByPrefix(file.redis, prefix)),
    dayTtlMs: async (reader, now) => {
      const ttl = await file.redis.pttl(keys.seenDay(reader, dayStamp(now)));
      return ttl < 0 ? null : ttl;
    },
    commands: () => file.commands(),
  };
});

feedCacheContract('redis cluster', async () => {
  const prefix = file.nextPrefix();
  return {
    cache: new RedisFeedCache(file.redis, new Keys(prefix)),
    cleanup: async () => void (await deleteByPrefix(file.redis, prefix)),
    elapse: (ms) => sleep(ms),
  };
});

describe('seen-filter keys on a Cluster', () => {
  it('keeps each reader\'s day keys (and their versions) in one slot and spreads readers of different shards over nodes', async () => {
    const keys = new Keys(file.nextPrefix(), 4);
    const slotOwner = new Map<number, number>(); // slot → port
    for (const [from, to, master] of await file.redis.cluster('SLOTS')) {
      for (let s = from; s <= to; s++) slotOwner.set(s, master![1]);
    }
    const byShard = new Map<number, { slot: number; port: number }>();
    const now = Date.UTC(2026, 2, 5);
    for (let i = 0; byShard.size < 4 && i < 1000; i++) {
      const reader = `reader_${i}`;
      const dayKeys = Array.from({ length: 7 }, (_, d) => dayStamp(now - d * DAY_MS)).flatMap((day) => [
        keys.seenDay(reader, day),
        keys.seenDayVersion(reader, day),
      ]);
      const slots = new Set<number>();
      for (const key of dayKeys) slots.add((await file.redis.cluster('KEYSLOT', key)) as number);
      expect(slots.size).toBe(1);
      const slot = [...slots][0]!;
      const feedSlots = await Promise.all([keys.feedCache(reader), keys.feedLease(reader)].map((k) => file.redis.cluster('KEYSLOT', k)));
      expect(new Set(feedSlots).size).toBe(1);
      const shard = keys.seenShard(reader);
      const seenBefore = byShard.get(shard);
      if (seenBefore) expect(seenBefore.slot).toBe(slot);
      else byShard.set(shard, { slot, port: slotOwner.get(slot)! });
    }
    expect(byShard.size).toBe(4);
    expect(new Set([...byShard.values()].map((v) => v.slot)).size).toBe(4);
    expect(new Set([...byShard.values()].map((v) => v.port)).size).toBeGreaterThanOrEqual(2);
  });

  it('checks and marks readers of every shard, each through the node owning its slot', async () => {
    const prefix = file.nextPrefix();
    const keys = new Keys(prefix, 4);
    const { sizeWindow } = await import('../src/domain/bloom.js');
    const filter = new RedisSeenFilter(file.redis, keys, sizeWindow(1_000, 0.01, 7), { days: 7 });
    const now = Date.UTC(2026, 2, 5, 12);
    const readers = Array.from({ length: 12 }, (_, i) => `r${i}`);
    for (const r of readers) await filter.markSeen(r, [`${r}-a`, `${r}-b`], now);
    for (const r of readers) {
      expect(await filter.seen(r, [`${r}-a`, `${r}-b`, `${r}-c`], now + DAY_MS)).toEqual([true, true, false]);
    }
    const masters = file.redis.nodes('master');
    const perNode = await Promise.all(masters.map(async (m) => (await m.keys(`${prefix}*`)).length));
    expect(perNode.filter((c) => c > 0).length).toBeGreaterThanOrEqual(2);
    // per shard touched: today's bitmap and its version key
    expect(perNode.reduce((a, b) => a + b, 0)).toBe(2 * new Set(readers.map((r) => keys.seenShard(r))).size);
  });
});
