/**
 * Wiring of note 5's exclusions and note 3's per-reader seen filter, called by container.ts: the
 * PostgreSQL store of engagements and feedback, the hot state (Redis when configured, else in process),
 * the Exclusions service, and the seen filter each feed uses (`FRESHET_FOR_YOU_SEEN`,
 * `FRESHET_DISCOVER_SEEN`: README "Seen strategy").
 */
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Logger as Pino } from 'pino';
import type { Config } from './config.js';
import type { Sql } from './adapters/postgres/sql.js';
import type { FollowingRedis } from './container-following.js';
import type { SeenFilter } from './ports/seen-filter.js';
import type { ReaderSeenFilter, SeenStrategy } from './ports/reader-seen-filter.js';
import { PostgresExclusionStore } from './adapters/postgres/exclusion-store.js';
import { MemoryExclusionCache } from './adapters/memory/exclusion-cache.js';
import { RedisExclusionCache } from './adapters/redis/exclusion-cache.js';
import { MemoryReaderSeenFilter } from './adapters/memory/reader-seen-filter.js';
import { RedisReaderSeenFilter } from './adapters/redis/reader-seen-filter.js';
import { Exclusions } from './services/exclusions.js';

/** What container.ts gets back. */
export interface ExclusionWiring {
  exclusions: Exclusions;
  /** Note 3's per-reader scalable seen filter (whether or not a feed uses it). */
  readerSeen: ReaderSeenFilter;
  /** The seen filter of a strategy: `rolling` → note 1's filters (`rolling`), `per_reader` → `readerSeen`. */
  seenFor(strategy: SeenStrategy): SeenFilter;
  /** Stops the snapshot timer and writes a last snapshot (embedded default); idempotent. */
  close(): Promise<void>;
}

/** How often the in-process per-reader filters are snapshotted to the data folder (ms). */
export const READER_SEEN_SNAPSHOT_MS = 60_000;

/**
 * Wires the exclusions and the per-reader seen filter.
 * @param hot the Redis client and keys shared with the other Redis adapters; null → in process.
 * @param rolling note 1's seen filter already opened by the container.
 */
export async function wireExclusions(config: Config, sql: Sql, hot: FollowingRedis | null, rolling: SeenFilter, log: Pino): Promise<ExclusionWiring> {
  const c = config.exclusions;
  const cacheSettings = { recentViews: c.recentViews, recentViewsTtlMs: c.recentViewsTtlMs, durableTtlMs: c.durableTtlMs };
  const cache = hot ? new RedisExclusionCache(hot.redis, hot.keys, cacheSettings) : new MemoryExclusionCache(cacheSettings);
  const { readerSeen, close } = hot
    ? { readerSeen: new RedisReaderSeenFilter(hot.redis, hot.keys, config.readerSeen), close: async () => {} }
    : await openMemoryReaderSeen(config, log);
  const exclusions = new Exclusions(
    { store: new PostgresExclusionStore(sql), cache, log },
    { penalty: c.penalty, cap: c.cap },
  );
  let closed: Promise<void> | undefined;
  return { exclusions, readerSeen, seenFor: (s) => (s === 'per_reader' ? readerSeen : rolling), close: () => (closed ??= close()) };
}

/**
 * The embedded default's per-reader filters, restored from `<data dir>/reader-seen-filters.bin` and
 * snapshotted there every {@link READER_SEEN_SNAPSHOT_MS} and on close (so a restart, or a crash up to one
 * interval, does not make the discover feed repeat itself).
 */
async function openMemoryReaderSeen(config: Config, log: Pino) {
  mkdirSync(config.dataDir, { recursive: true });
  const path = join(config.dataDir, 'reader-seen-filters.bin');
  const readerSeen = await MemoryReaderSeenFilter.restore(path, config.readerSeen, (reason) => log.warn({ reason }, 'reader seen-filter snapshot skipped'));
  const save = () => readerSeen.snapshot(path).catch((err: unknown) => log.warn({ err, path }, 'reader seen-filter snapshot failed'));
  const timer = setInterval(save, READER_SEEN_SNAPSHOT_MS);
  timer.unref();
  return {
    readerSeen,
    close: async () => {
      clearInterval(timer);
      await save();
    },
  };
}
