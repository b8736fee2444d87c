/**
 * Wiring of the seen filters every feed shares: the for-you design's rolling daily filters and the discover design's
 * per-reader scalable filters — on Redis when configured, checkpointed to PostgreSQL every
 * `checkpointMs` and on close and restored after a Redis loss (seen-checkpointer.ts), else in process
 * (the embedded default), where each is restored from a snapshot in the data folder on start and
 * snapshotted every {@link SEEN_SNAPSHOT_MS} and on close. Either way a restart, a crash or a lost
 * Redis forgets at most one interval of impressions.
 */
import { waitAtMost } from '../kernel/wait.js';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { seenLayout, type SeenLayout } from './layout.js';
import { DayLayouts } from './day-layouts.js';
import type { SeenFilter } from '../kernel/seen-filter.js';
import type { ReaderSeenFilter, ReaderSeenSettings, SeenStrategy } from '../kernel/reader-seen-filter.js';
import { MemorySeenFilter } from './memory-seen-filter.js';
import { RedisSeenFilter } from './redis-seen-filter.js';
import { MemoryReaderSeenFilter } from './memory-reader-seen-filter.js';
import { RedisReaderSeenFilter } from './redis-reader-seen-filter.js';
import type { RedisHandle, Stores } from '../kernel/stores.js';
import { SeenCheckpointer } from './seen-checkpointer.js';
import { PostgresSeenCheckpoints } from './postgres-seen-checkpoints.js';
import type { DayFill } from './day-fill.js';

/** Settings of the for-you design's rolling filters (`FRESHET_SEEN_*`); `cacheBytes`: the Redis adapter's past-day cache. */
export interface SeenSettings {
  /** Daily filters in the window (the for-you design: 7). */
  days: number;
  /** Impressions per day the filters are sized for (over all shards). */
  capacityPerDay: number;
  /** False-positive rate of the whole window's check. */
  windowRate: number;
  /**
   * Shard keys per day to spread a day over a Cluster's slots (`FRESHET_SEEN_SHARDS`, default 16; fewer
   * when a shard would hold under 10,000 impressions), more when the capacity needs them
   * (layout.ts `shardCount`).
   */
  shards: number;
  /** Most impressions one shard of one day is sized for (`FRESHET_SEEN_SHARD_CAPACITY`). */
  shardCapacity: number;
  cacheBytes: number;
  /**
   * How often the Redis seen filters are checkpointed to PostgreSQL, ms (`FRESHET_SEEN_CHECKPOINT_S`,
   * default 60 s; 0 = never: a Redis loss then forgets every impression). The bound on what a loss of
   * Redis can make a reader see again. Unused by the embedded default (it snapshots to files).
   */
  checkpointMs?: number;
}

/** Default {@link SeenSettings.checkpointMs}: 60 s. */
export const DEFAULT_SEEN_CHECKPOINT_MS = 60_000;

/** How often the in-process seen filters are snapshotted to the data folder (ms). */
export const SEEN_SNAPSHOT_MS = 60_000;

/** The seen filters of one instance. */
export interface SeenWiring {
  /** The for-you design's rolling daily filters. */
  rolling: SeenFilter;
  /** The discover design's per-reader scalable filter (whether or not a feed uses it). */
  readerSeen: ReaderSeenFilter;
  /** The filter of a strategy: `rolling` → the for-you design's, `per_reader` → the discover design's. */
  seenFor(strategy: SeenStrategy): SeenFilter;
  /** The PostgreSQL checkpoints of the Redis filters (null: embedded default, or checkpoints off). */
  checkpointer: SeenCheckpointer | null;
  /** How full the rolling filter's day of `nowMs` is (src/seen/day-fill.ts). @throws the store's error. */
  dayFill(nowMs: number): Promise<DayFill>;
  /**
   * Stops the snapshot or checkpoint timer and writes a last snapshot (embedded default) or
   * checkpoint (Redis); idempotent.
   */
  close(): Promise<void>;
}

/**
 * Longest the start waits for the restore of an empty Redis (ms); past it, or when Redis or PostgreSQL
 * fails, the process starts anyway: a check of a shard still without its epoch restores it first.
 */
export const START_RESTORE_WAIT_MS = 5_000;

/** Restores every shard Redis lost, waiting at most {@link START_RESTORE_WAIT_MS}; never throws. */
async function startRestore(checkpointer: SeenCheckpointer, stores: Stores): Promise<void> {
  const restore = checkpointer.ensureShards(stores.clock.now()).then(
    (n) => (n > 0 ? stores.log.info({ shards: n }, 'seen filters restored from their checkpoints') : undefined),
    (err: unknown) =>
      stores.log.warn({ err }, 'seen-filter restore at start failed (each shard is restored at its first check)'),
  );
  await waitAtMost(restore, START_RESTORE_WAIT_MS);
}

/** The layout these settings give a new day of the rolling filters (layout.ts). */
export function seenSettingsLayout(s: SeenSettings): SeenLayout {
  return seenLayout({ ...s, minShards: s.shards });
}

/**
 * Opens both seen filters over the stores: on Redis with their PostgreSQL checkpoints (every shard
 * Redis has lost is restored before this returns, and the checkpoint timer starts), else in process
 * (restoring the snapshots).
 * A Redis or PostgreSQL that fails (or is slow) at start does not stop it: see {@link START_RESTORE_WAIT_MS}.
 */
export async function wireSeen(
  s: SeenSettings,
  readerSettings: ReaderSeenSettings,
  stores: Stores,
): Promise<SeenWiring> {
  const layout = seenSettingsLayout(s);
  return stores.redis
    ? wireRedisSeen(s, layout, readerSettings, stores, stores.redis)
    : wireMemorySeen(s, layout, readerSettings, stores);
}

/** Both filters on Redis, with their PostgreSQL checkpoints (restored at start, then on a timer). */
async function wireRedisSeen(
  s: SeenSettings,
  layout: SeenLayout,
  readerSettings: ReaderSeenSettings,
  stores: Stores,
  hot: RedisHandle,
): Promise<SeenWiring> {
  const { redis, keys } = hot;
  const checkpointMs = s.checkpointMs ?? DEFAULT_SEEN_CHECKPOINT_MS;
  const dayLayouts = new DayLayouts(redis, keys, layout, s.days);
  // checkpoints and restores move whole bitmaps: the job clients, never cut by the request deadline
  const checkpointer =
    checkpointMs > 0
      ? new SeenCheckpointer({
          redis: hot.jobs ?? redis,
          keys,
          dayLayouts,
          reader: readerSettings,
          store: new PostgresSeenCheckpoints(stores.sqlJobs ?? stores.sql),
          clock: stores.clock,
          log: stores.log,
          registry: stores.registry,
        })
      : null;
  const checkpoints = checkpointer ?? undefined;
  const rolling = new RedisSeenFilter(redis, keys, layout, {
    days: s.days,
    cacheBytes: s.cacheBytes,
    checkpoints,
    dayLayouts,
  });
  const readerSeen = new RedisReaderSeenFilter(redis, keys, readerSettings, { checkpoints });
  if (checkpointer) {
    await startRestore(checkpointer, stores);
    checkpointer.start(checkpointMs);
  }
  return {
    rolling,
    readerSeen,
    checkpointer,
    dayFill: (nowMs) => rolling.dayFill(nowMs),
    seenFor: (st) => (st === 'per_reader' ? readerSeen : rolling),
    close: async () => checkpointer?.close(),
  };
}

/** Both filters in process, restored from their snapshots in the data folder and snapshotted every minute and on close. */
async function wireMemorySeen(
  s: SeenSettings,
  layout: SeenLayout,
  readerSettings: ReaderSeenSettings,
  stores: Stores,
): Promise<SeenWiring> {
  mkdirSync(stores.dataDir, { recursive: true });
  const rollingPath = join(stores.dataDir, 'seen-filters.bin');
  const readerPath = join(stores.dataDir, 'reader-seen-filters.bin');
  const rolling = await MemorySeenFilter.restore(rollingPath, layout, { days: s.days }, (reason) =>
    stores.log.warn({ reason }, 'seen-filter snapshot skipped'),
  );
  const readerSeen = await MemoryReaderSeenFilter.restore(readerPath, readerSettings, (reason) =>
    stores.log.warn({ reason }, 'reader seen-filter snapshot skipped'),
  );
  const saveBoth = async () => {
    await rolling
      .snapshot(rollingPath)
      .catch((err: unknown) => stores.log.warn({ err, path: rollingPath }, 'seen-filter snapshot failed'));
    await readerSeen
      .snapshot(readerPath)
      .catch((err: unknown) => stores.log.warn({ err, path: readerPath }, 'reader seen-filter snapshot failed'));
  };
  // One snapshot at a time: the periodic one and the one on close write the same temp files.
  let saving: Promise<void> = Promise.resolve();
  const save = () => (saving = saving.then(saveBoth));
  // Periodic snapshots bound what a crash (no graceful close) forgets to one interval of impressions.
  const timer = setInterval(() => void save(), SEEN_SNAPSHOT_MS);
  timer.unref();
  let closed: Promise<void> | undefined;
  return {
    rolling,
    readerSeen,
    checkpointer: null,
    dayFill: (nowMs) => rolling.dayFill(nowMs),
    seenFor: (st) => (st === 'per_reader' ? readerSeen : rolling),
    close: () =>
      (closed ??= (async () => {
        clearInterval(timer);
        await save();
      })()),
  };
}
