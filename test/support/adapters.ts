/**
 * Adapters built the way more than one test file adopts a contract on them (test/support/contract.ts):
 * the hot counters (test/contracts/hot-counters.contract.ts, hot-ranking.contract.ts) and the Redis
 * seen filter (seen-filter.contract.ts) on standalone Redis and on a Cluster; and a reader's per-reader
 * seen filter read back from Redis.
 */
import type { HotRules } from '../../src/hot/hot-counters.js';
import { MemoryHotCounters } from '../../src/hot/adapters/memory-hot-counters.js';
import { RedisHotCounters } from '../../src/hot/adapters/redis-hot-counters.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import type { BloomGeometry } from '../../src/seen/bloom.js';
import { fixedLayout } from '../../src/seen/layout.js';
import { RedisSeenFilter, type RedisSeenFilterOptions } from '../../src/seen/redis-seen-filter.js';
import type { HotCountersHarness } from '../contracts/hot-counters.contract.js';
import type { SeenFilterHarness } from '../contracts/seen-filter.contract.js';
import type { RedisPlace } from './contract.js';
import type { RedisClient } from '../../src/kernel/redis/client.js';
import { levelBytes, parseSignature } from '../../src/seen/scalable-bloom.js';

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
 * The Redis seen filter under the place's prefix, each day of `seenShards` shards of the geometry
 * (src/seen/layout.ts `fixedLayout`), with `options` beyond the window; its day keys' time to live
 * read with PTTL.
 */
export function redisSeenFilter(
  seenShards = 1,
  options: Omit<RedisSeenFilterOptions, 'days'> = {},
): (place: RedisPlace, g: BloomGeometry) => SeenFilterHarness {
  return ({ redis, prefix, commands }, g) => {
    const filter = new RedisSeenFilter(redis, new Keys(prefix), fixedLayout(g, seenShards), {
      ...options,
      days: g.days,
    });
    return {
      filter,
      dayTtlMs: async (reader, now) => {
        const ttl = await redis.pttl(await filter.dayKey(reader, now));
        return ttl < 0 ? null : ttl;
      },
      commands,
    };
  };
}

/**
 * A reader's per-reader seen filter as Redis holds it, its open sub-filters concatenated at their
 * offsets (as the in-process filter and the checkpoints hold it), from its one string per sub-filter.
 * Empty when there is none.
 */
export async function redisReaderBitmap(
  redis: RedisClient,
  keys: Keys,
  readerId: string,
  signature: string,
): Promise<Buffer> {
  const g = parseSignature(signature)!;
  const parts: Buffer[] = [];
  for (const l of g.levels) {
    const key = l.level === 0 ? keys.readerSeen(readerId) : keys.readerSeenLevel(readerId, l.level);
    const bytes = await redis.getBuffer(key);
    if (!bytes) break;
    const [from, to] = levelBytes(l);
    const part = Buffer.alloc(to - from);
    bytes.copy(part);
    parts.push(part);
  }
  return Buffer.concat(parts);
}
