/**
 * No giant key, no stall (issue 20): at the largest day capacity the configuration accepts, every
 * shard bitmap is at most 1 MiB, and the marks that create them (one new shard-day key each) never hold
 * Redis up: a second client PINGing every 2 ms meanwhile never waits over 10 ms, and Redis's own latency
 * monitor records no event of 10 ms or more. Before issue 20 the day at the largest capacity (200M) was
 * one 384 MiB key whose creation by a Lua `string.rep` blocked Redis for 17.6 s.
 *
 * A redis-server of the test's own (the marks allocate ~15 MB; its latency monitor is this test's).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.js';
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
/** Most shards a day may have (src/app/config.ts). */
const MAX_SHARDS = 16_384;

let server: RedisServer;
let redis: RedisClient;
let pinger: RedisClient;
beforeAll(async () => {
  server = await startRedisServer();
  redis = createRedis({ url: server.url });
  pinger = createRedis({ url: server.url });
});
afterAll(async () => {
  await closeRedis(redis);
  await closeRedis(pinger);
  await server?.stop();
});

/** PINGs every 2 ms until `done` resolves; the round trip of each (ms). */
async function pingWhile(done: Promise<unknown>): Promise<number[]> {
  let over = false;
  void done.finally(() => (over = true));
  const out: number[] = [];
  while (!over) {
    const t = performance.now();
    await pinger.ping();
    out.push(performance.now() - t);
    await sleep(2);
  }
  return out;
}

/** CPU time (ms) the Redis process has used so far (INFO cpu: user + system, from getrusage). */
async function redisCpuMs(): Promise<number> {
  const info = String(await redis.call('INFO', 'cpu'));
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)![1]);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
}

describe('the largest accepted day capacity', () => {
  it('keeps every shard at 1 MiB or less and creates each without a Redis stall over 10 ms', async () => {
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
    // the scripts loaded and the window's day layouts recorded first: what is measured is the bitmaps
    await filter.seen('warm', ['x'], T0);
    await pinger.ping(); // connected before it measures
    await redis.call('CONFIG', 'SET', 'latency-monitor-threshold', '10');
    const days = seenWindow(T0, 7);
    const taken = new Set<number>();
    const figures: string[] = [];
    // The PINGs, Redis's latency monitor and its CPU clock see the machine too (other processes can hold
    // the CPU from Redis for more than 10 ms on a busy machine, and a shared core runs Redis's own work
    // slower — the CPU of a mark, its 1 MiB shard's pages faulted in included, measured 3.7–5.9 ms on one
    // VM where PINGs meanwhile waited at most 4 ms): a stall of ours shows in every attempt, noise in
    // some, so the test passes on the first clean attempt of at most 5 — every PING under 10 ms, no
    // latency event, and each mark under 10 ms of Redis CPU (issue 20: no stall over 10 ms).
    let clean = false;
    for (let attempt = 0; attempt < 5 && !clean; attempt++) {
      // 14 readers of 14 shards not created yet, one mark each on a day of the window: 14 new keys
      const readers: string[] = [];
      for (let i = 0; readers.length < 14; i++) {
        const r = `a${attempt}r${i}`;
        if (!taken.has(shardOf(r, MAX_SHARDS))) {
          taken.add(shardOf(r, MAX_SHARDS));
          readers.push(r);
        }
      }
      await redis.call('LATENCY', 'RESET');
      const cpu: number[] = [];
      const marks = (async () => {
        for (const [i, r] of readers.entries()) {
          const before = await redisCpuMs();
          await filter.markSeen(r, [`a${i}`, `b${i}`], days[i % 7]!);
          cpu.push((await redisCpuMs()) - before);
        }
      })();
      const pings = await pingWhile(marks);
      await marks;
      for (const [i, r] of readers.entries()) {
        const key = keys.seenDays(MAX_SHARDS, shardOf(r, MAX_SHARDS)).day(dayStamp(days[i % 7]!));
        expect(await redis.strlen(key)).toBe(bytes);
      }
      const events = (await redis.call('LATENCY', 'LATEST')) as unknown[];
      const slowest = Math.max(...pings);
      figures.push(
        `attempt ${attempt + 1}: ${pings.length} PINGs, slowest ${slowest.toFixed(2)} ms; Redis CPU per mark ` +
          `max ${Math.max(...cpu).toFixed(2)} ms; latency events ${JSON.stringify(events)}`,
      );
      clean = pings.length >= 3 && slowest < 10 && events.length === 0 && Math.max(...cpu) < 10;
    }
    console.log(
      `largest capacity ${capacity.toLocaleString('en-US')}/day: ${layout.shards} shards of ${(bytes / 2 ** 20).toFixed(2)} MiB\n  ${figures.join('\n  ')}`,
    );
    expect(clean, figures.join('; ')).toBe(true);
  });
});
