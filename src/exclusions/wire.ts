/**
 * Wiring of the exclusions (docs/exclusions.md), called by src/compose/open.ts: the PostgreSQL store of engagements and
 * feedback, the hot state (recent views and the cached durable rules: Redis when configured, else in
 * process) and the Exclusions service every feed reads.
 */
import type { Stores } from '../kernel/stores.js';
import { PostgresExclusionStore } from './adapters/postgres-exclusion-store.js';
import { MemoryExclusionCache } from './adapters/memory-exclusion-cache.js';
import { RedisExclusionCache } from './adapters/redis-exclusion-cache.js';
import { Exclusions } from './service.js';
import { PostgresEngagementRetention, PostgresFeedbackRetention } from './adapters/postgres-exclusion-retention.js';
import type { RetentionTask } from '../kernel/sql/retention.js';
import type { Sql } from '../kernel/sql/sql.js';

/** Settings of the exclusions (`FRESHET_RECENT_VIEWS*`, `FRESHET_NOT_INTERESTED_*`, `FRESHET_EXCLUSION_*`); durations in ms. */
export interface ExclusionSettings {
  /** Recent views kept per reader (the exclusions design: last N). */
  recentViews: number;
  recentViewsTtlMs: number;
  /** Score multiplier of a "not interested" item's author for the reader, and how long it lasts. */
  penalty: { weight: number; durationMs: number };
  /** "Show less like this": multiplier per signal, its floor, and how long a signal counts. */
  showLess: { weight: number; floor: number; durationMs: number };
  /** The author cap of the ranked feeds for readers who did not set `max_per_author` (per 20 items). */
  defaultMaxPerAuthor: number;
  /** Most engagements / feedback entries / blocked users loaded per reader. */
  cap: number;
  /** How long the cached durable rules of a reader live in the hot state. */
  durableTtlMs: number;
  /** Redis: JSON bytes of parsed snapshots kept per process (`FRESHET_EXCLUSION_MEMO_MB`; 0: none). */
  memoBytes: number;
}

/**
 * The retention of engagements and feedback (docs/operations.md "Retention"): the rows no read reaches
 * (beyond each reader's newest, see the adapter) are deleted by the app's maintenance worker, on `sql`.
 * `signalLimit`: the engagements the discover embedding reads (`FRESHET_DISCOVER_SIGNALS`).
 */
export function exclusionRetention(s: ExclusionSettings, sql: Sql, signalLimit: number): RetentionTask[] {
  return [
    new PostgresEngagementRetention(sql, { cap: s.cap, signalLimit }),
    new PostgresFeedbackRetention(sql, { cap: s.cap }),
  ];
}

/** Wires the exclusions over the stores. */
export function wireExclusions(s: ExclusionSettings, stores: Stores): Exclusions {
  const cacheSettings = {
    recentViews: s.recentViews,
    recentViewsTtlMs: s.recentViewsTtlMs,
    durableTtlMs: s.durableTtlMs,
    memoBytes: s.memoBytes,
  };
  const cache = stores.redis
    ? new RedisExclusionCache(stores.redis.redis, stores.redis.keys, cacheSettings)
    : new MemoryExclusionCache(cacheSettings);
  return new Exclusions(
    { store: new PostgresExclusionStore(stores.sql), cache, log: stores.log },
    { penalty: s.penalty, showLess: s.showLess, defaultMaxPerAuthor: s.defaultMaxPerAuthor, cap: s.cap },
  );
}
