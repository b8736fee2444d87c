/**
 * No giant key (issue 20): at the largest day capacity the configuration accepts (16,384 shards), every
 * shard bitmap is at most 1 MiB — a mark on a shard nobody wrote today creates it at that size, and no key
 * in Redis is larger. Before issue 20 the day at the largest capacity (200M) was one 384 MiB key whose
 * creation by a Lua `string.rep` blocked Redis for 17.6 s. What a creation costs the other clients (PINGs
 * beside it, Redis's latency monitor, against bare creations of 128 KiB to 64 MiB keys) is a benchmark:
 * bench/seen-stall.ts.
 *
 * A redis-server of the test's own (the marks allocate ~15 MB; its key space is this test's).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { closeRedis, createRedis, type RedisClient } from '../../src/kernel/redis/client.js';
import { Keys, shardOf } from '../../src/kernel/redis/keys.js';
import { seenWindow } from '../../src/seen/bloom.js';
import { maxShardCapacity } from '../../src/seen/layout.js';
import { RedisSeenFilter } from '../../src/seen/redis-seen-filter.js';
import { seenSettingsLayout } from '../../src/seen/wire.js';
import { dayStamp } from '../../src/kernel/clock.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const T0 = Date.UTC(2026, 2, 6, 12);
const ENV = { FRESHET_SERVICE_KEY: 'stall-service-key-0123456789', FRESHET_SECRET: 'stall-secret-0123456789abcdef' };
/** Most shards a day may have (src/compose/config.ts). */
const MAX_SHARDS = 16_384;

let server: RedisServer;
let redis: RedisClient;
beforeAll(async () => {
  server = await startRedisServer();
  redis = createRedis({ url: server.url });
});
afterAll(async () => {
  await closeRedis(redis);
  await server?.stop();
});

describe('the largest accepted day capacity', () => {
  it('keeps every shard at 1 MiB or less: a mark creates its shard at that size, and no key is larger', async () => {
    // the most a shard holds at the default rate and window, whatever FRESHET_SEEN_SHARD_CAPACITY asks
    const shardCapacity = maxShardCapacity(0.01, 7);
    const capacity = MAX_SHARDS * shardCapacity; // about 10 billion impressions a day
    const env = {
      ...ENV,
      FRESHET_SEEN_CAPACITY_PER_DAY: String(capacity),
      FRESHET_SEEN_SHARD_CAPACITY: '10000000',
    };
    const config = loadConfig(env);
    expect(() => loadConfig({ ...env, FRESHET_SEEN_CAPACITY_PER_DAY: String(capacity + shardCapacity) })).toThrow(
      /the most is 16384/,
    );
    const layout = seenSettingsLayout(config.seen);
    expect(layout.shards).toBe(MAX_SHARDS);
    const bytes = Math.ceil(layout.geometry.bits / 8);
    expect(bytes).toBeLessThanOrEqual(2 ** 20);
    expect(bytes).toBeGreaterThan(0.99 * 2 ** 20);

    const keys = new Keys('stall:');
    const filter = new RedisSeenFilter(redis, keys, layout, { days: 7 });
    await filter.seen('warm', ['x'], T0); // the window's day layouts recorded
    // 14 readers of 14 shards not created yet, one mark each on a day of the window: 14 new keys, each
    // created at its full size by the mark and none larger (how long a creation holds Redis is measured,
    // not asserted: bench/seen-stall.ts — 0.44 ms of Redis CPU at 1 MiB, 176 ms at 64 MiB)
    const days = seenWindow(T0, 7);
    const readers: string[] = [];
    const taken = new Set<number>();
    for (let i = 0; readers.length < 14; i++) {
      if (!taken.has(shardOf(`r${i}`, MAX_SHARDS))) {
        taken.add(shardOf(`r${i}`, MAX_SHARDS));
        readers.push(`r${i}`);
      }
    }
    for (const [i, r] of readers.entries()) await filter.markSeen(r, [`a${i}`, `b${i}`], days[i % 7]!);
    for (const [i, r] of readers.entries()) {
      const key = keys.seenDays(MAX_SHARDS, shardOf(r, MAX_SHARDS)).day(dayStamp(days[i % 7]!));
      expect(await redis.strlen(key)).toBe(bytes);
      expect(await filter.seen(r, [`a${i}`, `b${i}`, `never${i}`], T0)).toEqual([true, true, false]);
    }
    let largest = 0;
    for (const key of await redis.keys('*')) {
      if ((await redis.type(key)) === 'string') largest = Math.max(largest, await redis.strlen(key));
    }
    expect(largest).toBe(bytes);
  });
});
