/**
 * Plumbing shared by the benchmarks: where the loopback services are, unique key prefixes and
 * schemas, cleanup that runs on success, failure and Ctrl-C, the "run me when I am the entry file"
 * switch, an environment header, seeded random data, helpers that fill seen filters and Redis day
 * bitmaps quickly, and the server-side time of Redis commands (`INFO commandstats`).
 *
 * Benchmarks target loopback only: Redis at FRESHET_BENCH_REDIS_URL (default
 * redis://127.0.0.1:6379/0) and PostgreSQL at FRESHET_BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test). Every key they write lives under a fresh `fsb:` prefix
 * and every table under a fresh `b_…` schema, both dropped when the benchmark ends.
 */
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createRedis, type RedisClient } from '../src/kernel/redis/client.js';
import { openPostgres } from '../src/kernel/sql/sql.js';
import { DAY_MS, dayStamp } from '../src/kernel/clock.js';
import type { Keys } from '../src/kernel/redis/keys.js';
import { seenWindow } from '../src/seen/bloom.js';
import { shardKeys, type SeenLayout } from '../src/seen/layout.js';
import type { SeenFilter } from '../src/kernel/seen-filter.js';
import { fmtMs, timeLoop, type LoopOptions, type Summary } from './stats.js';
export { prng } from '../src/kernel/prng.js';

/** Redis the benchmarks use (standalone, loopback). */
export const BENCH_REDIS_URL = process.env.FRESHET_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
/** PostgreSQL server the benchmarks use (loopback). */
export const BENCH_DATABASE_URL = process.env.FRESHET_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The service key of a benchmark's own server (`FRESHET_SERVICE_KEY`). */
export const BENCH_SERVICE_KEY = 'bench-service-key-0123456789';
/** The token secret of a benchmark's own server (`FRESHET_SECRET`). */
export const BENCH_SECRET = 'bench-secret-0123456789abcdef';

/** Keys the benchmarks create directly (not through an adapter) expire by themselves after this. */
export const SCRATCH_TTL_MS = 15 * 60 * 1000;

/** A fresh Redis key prefix such as `fsb:seen:3f9a1c2b:`. */
export function uniquePrefix(tag: string): string {
  return `fsb:${tag}:${randomBytes(4).toString('hex')}:`;
}

/** A fresh PostgreSQL schema name such as `b_3f9a1c2b`. */
export function uniqueSchema(): string {
  return `b_${randomBytes(4).toString('hex')}`;
}

/** A Redis client on the bench URL (same options as Freshet's own). */
export function openRedis(): RedisClient {
  return createRedis({ url: BENCH_REDIS_URL });
}

/** Deletes every key under `prefix` (SCAN + DEL, so other users of the server are not blocked). */
export async function dropPrefix(redis: RedisClient, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}

/** Drops a bench schema on the bench PostgreSQL server. */
export async function dropSchema(schema: string): Promise<void> {
  const admin = await openPostgres(BENCH_DATABASE_URL);
  try {
    await admin.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await admin.close();
  }
}

/**
 * Undo actions run last-in first-out by {@link Cleanup.run} (once), whether the benchmark
 * finished, threw, or was interrupted (see {@link runIfMain}).
 */
export class Cleanup {
  private readonly steps: (() => Promise<unknown> | unknown)[] = [];
  private running?: Promise<void>;

  /** Registers an undo step. */
  add(step: () => Promise<unknown> | unknown): void {
    this.steps.push(step);
  }

  /** Runs every step (newest first); a failing step is reported and the others still run. */
  run(): Promise<void> {
    return (this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step();
        } catch (err) {
          console.error(`cleanup step failed: ${(err as Error).message}`);
        }
      }
    })());
  }
}

/** The cleanups of benchmarks now running, so Ctrl-C can still undo what they wrote. */
const active = new Set<Cleanup>();

/** Runs `body` with a fresh {@link Cleanup}, which runs when `body` settles. */
export async function withCleanup<T>(body: (cleanup: Cleanup) => Promise<T>): Promise<T> {
  const cleanup = new Cleanup();
  active.add(cleanup);
  try {
    return await body(cleanup);
  } finally {
    await cleanup.run();
    active.delete(cleanup);
  }
}

let signalsInstalled = false;

/** On SIGINT/SIGTERM: run the active cleanups, then exit 130. */
function installSignalCleanup(): void {
  if (signalsInstalled) return;
  signalsInstalled = true;
  const onSignal = () => {
    console.error('\ninterrupted: cleaning up');
    void Promise.all([...active].map((c) => c.run())).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
}

/**
 * Runs `main` when the module at `moduleUrl` is the entry file (`npx tsx bench/x.ts`), prints the
 * environment first, and exits when it is done (open handles never keep a benchmark alive).
 */
export function runIfMain(moduleUrl: string, main: () => Promise<void>): void {
  if (isEntry(moduleUrl)) void runMain(main);
}

/** Whether the module at `moduleUrl` is the file node was started with. */
export function isEntry(moduleUrl: string): boolean {
  const entry = process.argv[1];
  return !!entry && realpathSync(entry) === realpathSync(fileURLToPath(moduleUrl));
}

/** Prints the environment, runs `main`, exits 0 (or 1 with the error). */
export async function runMain(main: () => Promise<void>): Promise<void> {
  installSignalCleanup();
  try {
    await printEnvironment();
    await main();
    process.exit(0);
  } catch (err) {
    console.error(err);
    process.exit(1);
  }
}

/** One header line per run: date, CPU, memory, Node, Redis and PostgreSQL versions. */
export async function printEnvironment(): Promise<void> {
  const cpu = cpus();
  const redis = openRedis();
  let redisVersion = '?';
  let pgVersion = '?';
  try {
    const info = await redis.info('server');
    redisVersion = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
  } finally {
    redis.disconnect();
  }
  try {
    const pg = await openPostgres(BENCH_DATABASE_URL);
    const rows = await pg.query<{ v: string }>(`SELECT current_setting('server_version') AS v`);
    pgVersion = rows[0]?.v ?? '?';
    await pg.close();
  } catch {
    pgVersion = 'unreachable';
  }
  console.log(
    `${new Date().toISOString()} · ${cpu.length} × ${cpu[0]?.model.trim() ?? '?'} · ` +
      `${(totalmem() / 2 ** 30).toFixed(1)} GiB · Node ${process.versions.node} · ` +
      `Redis ${redisVersion} (${BENCH_REDIS_URL}) · PostgreSQL ${pgVersion}`,
  );
}

/** Prints a benchmark's title. */
export function printTitle(title: string): void {
  console.log(`\n=== ${title} ===`);
}

/**
 * A bitmap of `bits` bits (Redis bit order) where each bit is 1 with probability `ones`: what a
 * Bloom filter looks like to a never-inserted member. At capacity, with k = (m/n)·ln 2, half the
 * bits are set, so `ones` = 0.5 stands in for a full day.
 */
export function randomBitmap(bits: number, ones: number): Buffer {
  const bytes = Math.ceil(bits / 8);
  if (ones === 0.5) return randomBytes(bytes);
  const buf = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) {
    let b = 0;
    for (let j = 0; j < 8; j++) if (Math.random() < ones) b |= 0x80 >>> j;
    buf[i] = b;
  }
  return buf;
}

/** `SET key bitmap PX` {@link SCRATCH_TTL_MS} for each pair, in one pipeline. */
export async function putBitmaps(redis: RedisClient, bitmaps: ReadonlyMap<string, Uint8Array>): Promise<void> {
  const pipe = redis.pipeline();
  for (const [key, bitmap] of bitmaps)
    pipe.set(key, Buffer.from(bitmap.buffer, bitmap.byteOffset, bitmap.byteLength), 'PX', SCRATCH_TTL_MS);
  const results = (await pipe.exec()) ?? [];
  for (const [err] of results) if (err) throw err;
}

/**
 * Every shard of a rolling seen layout, every day of the window ending at `nowMs`, at capacity (half
 * the bits set at random): what the feed benches read for any reader. A Cluster client writes each
 * key to its node (one SET per key).
 */
export async function fillLayoutAtCapacity(
  redis: RedisClient,
  keys: Keys,
  layout: SeenLayout,
  nowMs: number,
): Promise<void> {
  const g = layout.geometry;
  const days = seenWindow(nowMs, g.days).map(dayStamp);
  const bitmaps = new Map<string, Uint8Array>();
  for (let s = 0; s < layout.shards; s++) {
    for (const day of days) bitmaps.set(shardKeys(keys, layout, s).day(day), randomBitmap(g.bits, 0.5));
  }
  await putBitmaps(redis, bitmaps);
}

/** `list[i mod n]` for any integer i (loop indices are negative during warm-up). */
export function cyclic<T>(list: readonly T[], i: number): T {
  return list[((i % list.length) + list.length) % list.length]!;
}

/** `[0, n)` mapped through `f`. */
export function range<T>(n: number, f: (i: number) => T): T[] {
  return Array.from({ length: n }, (_, i) => f(i));
}

/** What {@link fillDays} writes. */
export interface FillPlan {
  /** Days to fill, counting back from `nowMs` (day 0 = the day of `nowMs`). */
  days: number;
  /** Distinct members added to each day. */
  perDay: number;
  /** The time whose day is day 0 (epoch ms). */
  nowMs: number;
  /** Members per `markSeen` call. */
  batch: number;
  /** First item number (so a second fill adds members distinct from the first). */
  offset?: number;
  /**
   * Readers the members of a day are spread over (default 1): a layout of several shards hashes
   * readers to shards, so a fill meant for every shard needs many readers.
   */
  readers?: number;
}

/**
 * Adds `perDay` distinct members to each of `days` day filters through `markSeen`: reader
 * `fill<d>` (or `fill<d>_<r>` over `readers` readers, a batch each in turn), items `x<offset + i>`,
 * so members never collide across days, fills or probes (probes use readers that do not start with
 * `fill`).
 */
export async function fillDays(filter: SeenFilter, plan: FillPlan): Promise<void> {
  const offset = plan.offset ?? 0;
  const readers = plan.readers ?? 1;
  for (let d = 0; d < plan.days; d++) {
    const dayMs = plan.nowMs - d * DAY_MS;
    for (let from = 0, b = 0; from < plan.perDay; from += plan.batch, b++) {
      const n = Math.min(plan.batch, plan.perDay - from);
      await filter.markSeen(
        readers === 1 ? `fill${d}` : `fill${d}_${b % readers}`,
        range(n, (i) => `x${offset + from + i}`),
        dayMs,
      );
    }
  }
}

/** Calls and total microseconds Redis has spent in `command` (INFO commandstats; server-wide). */
export async function commandStats(redis: RedisClient, command: string): Promise<{ calls: number; usec: number }> {
  const info = await redis.info('commandstats');
  const m = new RegExp(`^cmdstat_${command.toLowerCase()}:calls=(\\d+),usec=(\\d+)`, 'm').exec(info);
  return { calls: Number(m?.[1] ?? 0), usec: Number(m?.[2] ?? 0) };
}

/** What Redis itself spent per call of a command during a measured loop. */
export interface ServerTime {
  /** Mean server-side time per call (ms), from INFO commandstats. */
  perCallMs: number;
  /** Calls by other clients of the same server during the loop (0 = the figure is ours alone). */
  foreignCalls: number;
}

/**
 * Runs `loop` (which makes `expectedCalls()` calls of `command`, read after it ends) and reports
 * the server's own time per call of `command` meanwhile. The counters are server-wide, so calls
 * made by other clients are counted and reported as `foreignCalls`.
 */
export async function withServerTime<T>(
  redis: RedisClient,
  command: string,
  loop: () => Promise<T>,
  expectedCalls: (result: T) => number,
): Promise<{ result: T; server: ServerTime }> {
  const before = await commandStats(redis, command);
  const result = await loop();
  const after = await commandStats(redis, command);
  const calls = after.calls - before.calls;
  return {
    result,
    server: {
      perCallMs: calls > 0 ? (after.usec - before.usec) / calls / 1000 : NaN,
      foreignCalls: calls - expectedCalls(result),
    },
  };
}

/** A latency summary and what Redis itself spent per iteration meanwhile. */
export interface ServerTimed {
  summary: Summary;
  server: ServerTime;
  callsPerIteration: number;
}

/**
 * {@link timeLoop} of `fn`, which sends `callsPerIteration` calls of `command` each time, with the
 * server-side time of those calls (warm-up calls are counted as expected calls too).
 */
export async function timeLoopOnServer(
  redis: RedisClient,
  command: string,
  callsPerIteration: number,
  opts: LoopOptions,
  fn: (i: number) => unknown,
): Promise<ServerTimed> {
  const expected = (s: Summary) => (s.n + (opts.warmup ?? 0)) * callsPerIteration;
  const { result, server } = await withServerTime(redis, command, () => timeLoop(fn, opts), expected);
  return { summary: result, server, callsPerIteration };
}

/**
 * Redis-side ms per iteration of a {@link timeLoopOnServer} loop; prefixed `~` when other clients
 * ran the same command meanwhile (the figure then mixes in their calls).
 */
export function fmtServer(t: ServerTimed): string {
  const ms = fmtMs(t.server.perCallMs * t.callsPerIteration);
  return t.server.foreignCalls > 0 ? `~${ms}` : ms;
}
