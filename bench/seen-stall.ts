/**
 * No stall when a day's shard is created (issue 20): at the largest day capacity the configuration
 * accepts (16,384 shards of 1 MiB, ~10 billion impressions a day), each `markSeen` that lands on a shard
 * nobody has written today creates its bitmap zeroed (one `SETRANGE` inside the mark's script). This
 * measures what that does to everybody else: a second client PINGs every 2 ms while a first one makes
 * marks on new shards, and Redis's own latency monitor (threshold 10 ms) and CPU clock (`INFO cpu`) are
 * read around each mark. Target: no PING over 10 ms, no latency event.
 *
 * Baselines in the same run, on the same server: the PINGs while nothing else runs (the machine's own
 * noise), and a bare `SETRANGE key <n−1> "\0"` creating fresh keys of 128 KiB, 1 MiB (the cap), 8 MiB and
 * 64 MiB — how the creation's cost grows with the key, which is why no shard is over 1 MiB (the 384 MiB
 * single key of before issue 20 blocked Redis for 17.6 s through a Lua `string.rep`).
 *
 * A redis-server of the benchmark's own on a free loopback port (its latency monitor and CPU clock are
 * this run's alone), stopped at the end. Bounded: 60 marks and 20 keys of each size, a few seconds.
 * `npx tsx bench/seen-stall.ts`
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/compose/config.js';
import { closeRedis, createRedis, type RedisClient } from '../src/kernel/redis/client.js';
import { Keys, shardOf } from '../src/kernel/redis/keys.js';
import { seenWindow } from '../src/seen/bloom.js';
import { maxShardCapacity } from '../src/seen/layout.js';
import { RedisSeenFilter } from '../src/seen/redis-seen-filter.js';
import { seenSettingsLayout } from '../src/seen/wire.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { fmtInt, fmtMs, printNotes, printTable, summarize } from './stats.js';
import { printTitle, runIfMain, withCleanup } from './support.js';

const T0 = Date.UTC(2026, 2, 6, 12);
/** Most shards a day may have (src/compose/config.ts). */
const MAX_SHARDS = 16_384;
const MARKS = 60;
const KEYS_PER_SIZE = 20;
const SIZES = [128 * 1024, 2 ** 20, 8 * 2 ** 20, 64 * 2 ** 20];
const PING_EVERY_MS = 2;
const LATENCY_THRESHOLD_MS = 10;

/** What one measured phase did to the PINGs beside it and to Redis. */
interface Phase {
  name: string;
  pings: number[];
  /** Redis CPU (ms) of each operation of the phase (none for the idle phase). */
  cpu: number[];
  /** Latency events Redis recorded (its `LATENCY LATEST` rows). */
  events: number;
  /** Longest event (ms), 0 when none. */
  worstEventMs: number;
}

/** PINGs every 2 ms on `pinger` until `work` settles; the round trip of each (ms). */
async function pingWhile(pinger: RedisClient, work: Promise<unknown>): Promise<number[]> {
  let over = false;
  void work.finally(() => (over = true)).catch(() => {});
  const out: number[] = [];
  while (!over) {
    const t = performance.now();
    await pinger.ping();
    out.push(performance.now() - t);
    await sleep(PING_EVERY_MS);
  }
  return out;
}

/** CPU time (ms) the Redis process has used so far (INFO cpu: user + system). */
async function redisCpuMs(redis: RedisClient): Promise<number> {
  const info = String(await redis.call('INFO', 'cpu'));
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)![1]);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
}

/** Runs `ops` one after the other while PINGing beside them; Redis CPU per op and latency events. */
async function measure(
  name: string,
  redis: RedisClient,
  pinger: RedisClient,
  ops: (() => Promise<unknown>)[],
): Promise<Phase> {
  await redis.call('LATENCY', 'RESET');
  const cpu: number[] = [];
  const work = (async () => {
    for (const op of ops) {
      const before = await redisCpuMs(redis);
      await op();
      cpu.push((await redisCpuMs(redis)) - before);
    }
  })();
  const pings = await pingWhile(pinger, work);
  await work;
  const events = (await redis.call('LATENCY', 'LATEST')) as [string, number, number, number][];
  return { name, pings, cpu, events: events.length, worstEventMs: Math.max(0, ...events.map((e) => e[3])) };
}

/** About `count` PINGs, with nothing else running (the machine's own noise). */
async function idle(redis: RedisClient, pinger: RedisClient, count: number): Promise<Phase> {
  return measure('PINGs alone (baseline)', redis, pinger, [() => sleep(count * PING_EVERY_MS)]).then((p) => ({
    ...p,
    cpu: [],
  }));
}

function row(p: Phase, idleP99: number): string[] {
  const s = summarize(p.pings);
  const c = p.cpu.length > 0 ? summarize(p.cpu) : undefined;
  return [
    p.name,
    fmtInt(s.n),
    fmtMs(s.p50),
    fmtMs(s.p99),
    fmtMs(s.max),
    `×${(s.p99 / idleP99).toFixed(2)}`,
    c ? fmtMs(c.p50) : '',
    c ? fmtMs(c.max) : '',
    `${p.events}${p.events > 0 ? ` (${p.worstEventMs} ms)` : ''}`,
    s.max < LATENCY_THRESHOLD_MS && p.events === 0 ? '✓' : '✗',
  ];
}

export async function run(): Promise<void> {
  printTitle('Seen filter: creating a day shard at the largest capacity, and PINGs beside it');
  await withCleanup(async (cleanup) => {
    const server = await startRedisServer();
    cleanup.add(() => server.stop());
    const redis = createRedis({ url: server.url });
    const pinger = createRedis({ url: server.url });
    cleanup.add(() => closeRedis(redis));
    cleanup.add(() => closeRedis(pinger));

    const shardCapacity = maxShardCapacity(0.01, 7);
    const config = loadConfig({
      FRESHET_SERVICE_KEY: 'bench-service-key-0123456789',
      FRESHET_SECRET: 'bench-secret-0123456789abcdef',
      FRESHET_SEEN_CAPACITY_PER_DAY: String(MAX_SHARDS * shardCapacity),
      FRESHET_SEEN_SHARD_CAPACITY: '10000000',
    });
    const layout = seenSettingsLayout(config.seen);
    const shardBytes = Math.ceil(layout.geometry.bits / 8);
    const keys = new Keys('stall:');
    const filter = new RedisSeenFilter(redis, keys, layout, { days: 7 });
    await filter.seen('warm', ['x'], T0); // scripts loaded, the window's day layouts recorded
    await pinger.ping();
    await redis.call('CONFIG', 'SET', 'latency-monitor-threshold', String(LATENCY_THRESHOLD_MS));

    const days = seenWindow(T0, 7);
    const taken = new Set<number>();
    const readers: string[] = [];
    for (let i = 0; readers.length < MARKS; i++) {
      const shard = shardOf(`r${i}`, MAX_SHARDS);
      if (!taken.has(shard)) {
        taken.add(shard);
        readers.push(`r${i}`);
      }
    }
    const marks = await measure(`markSeen on a new ${fmtInt(shardBytes)}-byte shard`, redis, pinger, [
      ...readers.map((r, i) => () => filter.markSeen(r, [`a${i}`, `b${i}`], days[i % 7]!)),
    ]);
    const baseline = await idle(redis, pinger, marks.pings.length);
    const bare: Phase[] = [];
    for (const size of SIZES) {
      const ops = Array.from(
        { length: KEYS_PER_SIZE },
        (_, i) => () => redis.setrange(`bare:${size}:${i}`, size - 1, '\0'),
      );
      bare.push(await measure(`bare SETRANGE of a new ${fmtInt(size / 1024)} KiB key`, redis, pinger, ops));
      await redis.flushdb('SYNC');
    }
    const idleP99 = summarize(baseline.pings).p99;
    printTable(
      `${fmtInt(MARKS)} marks, ${fmtInt(KEYS_PER_SIZE)} bare creations a size; a PING every ${PING_EVERY_MS} ms beside them`,
      [
        'phase',
        'PINGs',
        'PING p50',
        'p99',
        'max',
        'p99 ÷ alone',
        'Redis CPU/op p50',
        'max',
        `latency events ≥ ${LATENCY_THRESHOLD_MS} ms`,
        'no PING ≥ 10 ms, no event',
      ],
      [baseline, marks, ...bare].map((p) => row(p, idleP99)),
    );
    printNotes(
      `${layout.shards} shards a day of ${(shardBytes / 2 ** 20).toFixed(2)} MiB (capacity ${fmtInt(MAX_SHARDS * shardCapacity)} a day)`,
      'Redis CPU per op includes the page faults of a new key: on a shared VM it moves with the host, compare within a run',
    );
  });
}

runIfMain(import.meta.url, run);
