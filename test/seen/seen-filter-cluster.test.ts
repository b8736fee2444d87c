/**
 * The SeenFilter and FeedCache contracts on a real 3-master Redis Cluster (ioredis `Cluster`), and
 * the key layout that makes them Cluster-safe: each reader's day keys share one slot, and with
 * several seen shards different readers land on different slots and nodes.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS, dayStamp } from '../../src/kernel/clock.js';
import { RedisSeenFilter } from '../../src/seen/redis-seen-filter.js';
import { RedisFeedCache } from '../../src/for-you/adapters/redis-feed-cache.js';
import { Keys, shardOf } from '../../src/kernel/redis/keys.js';
import { fixedLayout } from '../../src/seen/layout.js';
import { fileCluster } from '../support/redis-cluster.js';
import { adopt, redisClusterEngine } from '../support/contract.js';
import { redisSeenFilter } from '../support/adapters.js';
import { seenFilterContract } from '../contracts/seen-filter.contract.js';
import { feedCacheContract } from '../contracts/feed-cache.contract.js';

const file = fileCluster();
const engine = redisClusterEngine(file);

adopt(seenFilterContract, engine, redisSeenFilter(4));
adopt(feedCacheContract, engine, ({ redis, keys, elapse }) => ({ cache: new RedisFeedCache(redis, keys), elapse }));

describe('seen-filter keys on a Cluster', () => {
  it("keeps each reader's day keys (and their versions) in one slot and spreads readers of different shards over nodes", async () => {
    const keys = new Keys(file.nextPrefix());
    const slotOwner = new Map<number, number>(); // slot → port
    for (const [from, to, master] of await file.redis.cluster('SLOTS')) {
      for (let s = from; s <= to; s++) slotOwner.set(s, master![1]);
    }
    const byShard = new Map<number, { slot: number; port: number }>();
    const now = Date.UTC(2026, 2, 5);
    for (let i = 0; byShard.size < 4 && i < 1000; i++) {
      const reader = `reader_${i}`;
      const sk = keys.seenDays(4, shardOf(reader, 4));
      const dayKeys = Array.from({ length: 7 }, (_, d) => dayStamp(now - d * DAY_MS)).flatMap((day) => [
        sk.day(day),
        sk.version(day),
      ]);
      const slots = new Set<number>();
      for (const key of dayKeys) slots.add((await file.redis.cluster('KEYSLOT', key)) as number);
      expect(slots.size).toBe(1);
      const slot = [...slots][0]!;
      const feedSlots = await Promise.all(
        [keys.feedCache(reader), keys.feedLease(reader)].map((k) => file.redis.cluster('KEYSLOT', k)),
      );
      expect(new Set(feedSlots).size).toBe(1);
      const shard = shardOf(reader, 4);
      const seenBefore = byShard.get(shard);
      if (seenBefore) expect(seenBefore.slot).toBe(slot);
      else byShard.set(shard, { slot, port: slotOwner.get(slot)! });
    }
    expect(byShard.size).toBe(4);
    expect(new Set([...byShard.values()].map((v) => v.slot)).size).toBe(4);
    expect(new Set([...byShard.values()].map((v) => v.port)).size).toBe(3); // 4 shards reach all 3 masters
  });

  it('checks and marks readers of every shard, each through the node owning its slot', async () => {
    const prefix = file.nextPrefix();
    const keys = new Keys(prefix);
    const { sizeWindow } = await import('../../src/seen/bloom.js');
    const filter = new RedisSeenFilter(file.redis, keys, fixedLayout(sizeWindow(1_000, 0.01, 7), 4), { days: 7 });
    const now = Date.UTC(2026, 2, 5, 12);
    const readers = Array.from({ length: 12 }, (_, i) => `r${i}`);
    for (const r of readers) await filter.markSeen(r, [`${r}-a`, `${r}-b`], now);
    for (const r of readers) {
      expect(await filter.seen(r, [`${r}-a`, `${r}-b`, `${r}-c`], now + DAY_MS)).toEqual([true, true, false]);
    }
    const masters = file.redis.nodes('master');
    const dayKeys = await Promise.all(
      masters.map(async (m) => (await m.keys(`${prefix}*`)).filter((k) => !k.includes('{seen-layout}')).length),
    );
    expect(dayKeys.filter((c) => c > 0).length).toBe(3);
    // per shard touched: today's bitmap and its version key
    expect(dayKeys.reduce((a, b) => a + b, 0)).toBe(2 * new Set(readers.map((r) => shardOf(r, 4))).size);
    // and the layout of each day of the window, one key each, all on one slot
    const layouts = (await Promise.all(masters.map((m) => m.keys(`${prefix}bf:{seen-layout}:*`)))).flat();
    expect(layouts).toHaveLength(7);
  });
});

describe('shard hash tags spread over the masters (src/kernel/redis/keys.ts shardTag)', () => {
  /** Writes `keys` through the Cluster client, then asks each master which it holds: key → master port. */
  async function holders(keys: readonly string[]): Promise<Map<string, number>> {
    await Promise.all(keys.map((k) => file.redis.set(k, '1', 'PX', 60_000)));
    const out = new Map<string, number>();
    for (const master of file.redis.nodes('master')) {
      // a master answers MOVED for a key of another master's slot
      for (const k of keys) if ((await master.exists(k).catch(() => 0)) === 1) out.set(k, master.options.port!);
    }
    expect(out.size).toBe(keys.length);
    return out;
  }
  const day = '20260306';

  for (const n of [3, 4, 16]) {
    it(`${n} shards of the seen filters and of the hot ranking land on all 3 masters`, async () => {
      const keys = new Keys(file.nextPrefix(), n, n);
      const seen = Array.from({ length: n }, (_, s) => keys.seenDays(n, s).day(day));
      const hot = Array.from({ length: n }, (_, s) => keys.hot(s).score());
      const [seenAt, hotAt] = [await holders(seen), await holders(hot)];
      console.log(
        `${n} shards: seen on ports ${seen.map((k) => seenAt.get(k)).join(', ')}; hot on ${hot.map((k) => hotAt.get(k)).join(', ')}`,
      );
      expect(new Set(seenAt.values()).size).toBe(3);
      expect(new Set(hotAt.values()).size).toBe(3);
    });
  }

  it('the single-tag families (seen filters, hot ranking, fan-out queue) sit on three different masters', async () => {
    const keys = new Keys(file.nextPrefix());
    // the seen filter of a one-shard day layout
    const single = [keys.seenDays(1, 0).day(day), keys.hot(0).score(), `${keys.fanoutQueuePrefix()}:fanout:meta`];
    const at = await holders(single);
    expect(new Set(at.values()).size).toBe(3);
    expect(keys.hot(0).score()).toMatch(/\{hot\}:hot:score$/); // one hot shard keeps note 2's keys
  });
});
