/**
 * Adapters built the way more than one test file adopts a contract on them (test/support/contract.ts):
 * the hot counters (test/contracts/hot-counters.contract.ts, hot-ranking.contract.ts) and the Redis
 * seen filter (seen-filter.contract.ts) on standalone Redis and on a Cluster.
 */
import type { HotRules } from '../../src/hot/hot-counters.js';
import { MemoryHotCounters } from '../../src/hot/adapters/memory-hot-counters.js';
import { RedisHotCounters } from '../../src/hot/adapters/redis-hot-counters.js';
import { dayStamp } from '../../src/kernel/clock.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import type { BloomGeometry } from '../../src/seen/bloom.js';
import { RedisSeenFilter, type RedisSeenFilterOptions } from '../../src/seen/redis-seen-filter.js';
import type { HotCountersHarness } from '../contracts/hot-counters.contract.js';
import type { SeenFilterHarness } from '../contracts/seen-filter.contract.js';
import type { RedisPlace } from './contract.js';

/** In-process counters; a loss is a new instance (a restarted process). */
export function memoryHotCounters(_place: unknown, rules: HotRules): HotCountersHarness {
  return { counters: new MemoryHotCounters(rules), lose: async () => new MemoryHotCounters(rules) };
}

/** Redis counters with `shards` hot shards under the place's prefix; a loss deletes every key. */
export function redisHotCounters(shards: number): (place: RedisPlace, rules: HotRules) => HotCountersHarness {
  return ({ redis, prefix, flush }, rules) => {
    const counters = new RedisHotCounters(redis, new Keys(prefix, 1, shards), rules);
    return {
      counters,
      lose: async () => {
        await flush();
        return counters;
      },
    };
  };
}

/** "1 shard", "4 shards". */
export function shardsLabel(shards: number): string {
  return `${shards} shard${shards > 1 ? 's' : ''}`;
}

/**
 * The Redis seen filter of a geometry under the place's prefix, with `seenShards` seen shards and
 * `options` beyond the window; its day keys' time to live read with PTTL.
 */
export function redisSeenFilter(
  seenShards = 1,
  options: Omit<RedisSeenFilterOptions, 'days'> = {},
): (place: RedisPlace, g: BloomGeometry) => SeenFilterHarness {
  return ({ redis, prefix, commands }, g) => {
    const keys = new Keys(prefix, seenShards);
    return {
      filter: new RedisSeenFilter(redis, keys, g, { ...options, days: g.days }),
      dayTtlMs: async (reader, now) => {
        const ttl = await redis.pttl(keys.seenDay(reader, dayStamp(now)));
        return ttl < 0 ? null : ttl;
      },
      commands,
    };
  };
}
