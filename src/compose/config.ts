/**
 * Configuration from the environment: every variable, its default (the seed notes' values where
 * they give one) and its range. The "Configuration" table of docs/operations.md mirrors this file.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { DAY_MS, HOUR_MS } from '../kernel/clock.js';
import { configError, intVar, numVar, parseEnv } from './env.js';
import { gaussHorizonMs, type GaussDecay } from '../for-you/decay.js';
import { DEFAULT_FUTURE_SKEW_MS } from '../kernel/time-range.js';
import type { ReaderSeenSettings, SeenStrategy } from '../kernel/reader-seen-filter.js';
import { DEFAULT_HOT_PARAMS, HOT_PARAM_RANGES, assertHotParams, type HotParams } from '../hot/domain.js';
import type { SeenSettings } from '../seen/wire.js';
import { shardCount } from '../seen/layout.js';
import type { ForYouSettings } from '../for-you/wire.js';
import type { HotSettings } from '../hot/wire.js';
import type { ExclusionSettings } from '../exclusions/wire.js';
import type { NotificationWiring } from '../notifications/wire.js';
import type { FollowingSettings } from '../following/wire.js';
import type { DiscoverSettings } from '../discover/wire.js';
import type { ItemCacheSettings } from '../content/cached-content-store.js';
import type { EdgeSettings } from '../kernel/http/edge-settings.js';
import type { LearnSettings } from '../learn/wire.js';
import { LEARN_ENV, learnSettings } from './config-learn.js';

// the service key and token secret of the data folder (src/compose/secrets.ts), read with the configuration
export { ensureSecrets, readSecrets, secretsPath } from './secrets.js';

const int = intVar;
/** Rolling seen-filter shards a day is spread over by default (`FRESHET_SEEN_SHARDS`; src/seen/layout.ts). */
const DEFAULT_SEEN_SHARDS = 16;
/** Most shards a day of the rolling seen filter may have (one per Cluster slot). */
const MAX_SEEN_SHARDS = 16_384;
const num = numVar;

const EnvSchema = z.object({
  ...LEARN_ENV,
  PORT: int(0, 65535, 8080),
  HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // 0 = one worker per core (PostgreSQL + Redis deployments; the embedded default always serves from one process)
  FRESHET_WORKERS: int(0, 256, 0),
  FRESHET_DATA_DIR: z.string().default('./.freshet'),
  FRESHET_DATABASE_URL: z.string().optional(),
  FRESHET_REDIS_URL: z.string().optional(),
  FRESHET_REDIS_CLUSTER_NODES: z.string().optional(),
  FRESHET_SERVICE_KEY: z.string().min(16).optional(),
  FRESHET_SECRET: z.string().min(16).optional(),
  FRESHET_REDIS_TIMEOUT_MS: int(10, 600_000, 1000),
  FRESHET_SQL_TIMEOUT_MS: int(10, 600_000, 1000),
  FRESHET_JOB_TIMEOUT_MS: int(1000, 86_400_000, 300_000),
  FRESHET_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{0,32}$/)
    .default('fs:'),
  FRESHET_BODY_LIMIT_BYTES: int(1024, 64 * 1024 * 1024, 1024 * 1024),
  FRESHET_TOKEN_TTL_S: int(60, 365 * 86400, 86400),
  // the HTTP edge's limits on slow and greedy clients (src/server/limits.ts, docs/operations.md "Limits")
  FRESHET_TOKEN_MAX_TTL_S: int(60, 10 * 365 * 86400, 365 * 86400),
  FRESHET_REQUEST_TIMEOUT_S: num(0.1, 3600, 30),
  FRESHET_HEADERS_TIMEOUT_S: num(0.1, 3600, 10),
  FRESHET_RATE_WINDOW_S: int(1, 3600, 10),
  FRESHET_RATE_READER: int(0, 1_000_000, 30),
  FRESHET_RATE_READER_OTHER: int(0, 1_000_000, 60),
  FRESHET_RATE_SERVICE: int(0, 100_000_000, 0),
  FRESHET_READER_CONCURRENCY: int(0, 1000, 2),
  FRESHET_METRICS_ACCESS: z.enum(['auto', 'open', 'service']).default('auto'),
  FRESHET_DOCS_ACCESS: z.enum(['open', 'service']).default('open'),
  FRESHET_FUTURE_SKEW_S: int(0, 366 * 86400, DEFAULT_FUTURE_SKEW_MS / 1000),
  FRESHET_SHUTDOWN_GRACE_S: num(0.1, 600, 10),
  // 0 = no item cache: every hydration reads the database (docs/operations.md "Item cache")
  FRESHET_ITEM_CACHE_SIZE: int(0, 10_000_000, 20_000),
  FRESHET_ITEM_CACHE_TTL_S: int(1, 86_400, 60),
  FRESHET_RECALL_LIMIT: int(1, 5000, 500),
  FRESHET_DECAY_SCALE_HOURS: num(0.01, 24 * 365, 48),
  FRESHET_DECAY_OFFSET_HOURS: num(0, 24 * 365, 6),
  FRESHET_DECAY: num(0.001, 0.999, 0.5),
  FRESHET_DECAY_FLOOR: num(0.000001, 0.5, 0.01),
  FRESHET_FEED_CACHE_TTL_S: int(1, 86400, 1800),
  FRESHET_FOR_YOU_POOL_SIZE: int(100, 1_000_000, 5000),
  FRESHET_FOR_YOU_POOL_INTERVAL_S: int(1, 3600, 30),
  FRESHET_FOR_YOU_OLD_SEEN: z.enum(['per_reader', 'off']).default('per_reader'),
  FRESHET_FOR_YOU_INTERESTS: z.enum(['pool', 'index']).default('pool'),
  FRESHET_SEEN_DAYS: int(1, 60, 7),
  FRESHET_SEEN_CAPACITY_PER_DAY: int(1000, 100_000_000_000, 1_000_000),
  FRESHET_SEEN_FPR: num(0.00001, 0.5, 0.01),
  // unset: 16 shards at least (see seenSettings)
  FRESHET_SEEN_SHARDS: z.coerce.number().int().min(1).max(MAX_SEEN_SHARDS).optional(),
  FRESHET_SEEN_SHARD_CAPACITY: int(1000, 10_000_000, 1_000_000),
  FRESHET_SEEN_CACHE_MB: int(0, 65_536, 256),
  FRESHET_SEEN_CHECKPOINT_S: int(0, 3600, 60),
  FRESHET_HOT_ALPHA: num(HOT_PARAM_RANGES.alpha[0], HOT_PARAM_RANGES.alpha[1], DEFAULT_HOT_PARAMS.alpha),
  FRESHET_HOT_BETA: num(HOT_PARAM_RANGES.beta[0], HOT_PARAM_RANGES.beta[1], DEFAULT_HOT_PARAMS.beta),
  FRESHET_HOT_BASE: num(HOT_PARAM_RANGES.base[0], HOT_PARAM_RANGES.base[1], DEFAULT_HOT_PARAMS.base),
  FRESHET_HOT_GAMMA: num(HOT_PARAM_RANGES.gamma[0], HOT_PARAM_RANGES.gamma[1], DEFAULT_HOT_PARAMS.gamma),
  FRESHET_HOT_RATE_WINDOW_MIN: num(10, 15, 10),
  FRESHET_HOT_VISITOR_BUDGET_PER_MIN: int(1, 100_000, 60),
  FRESHET_HOT_CACHE_REFRESH_S: int(60, 120, 60),
  FRESHET_HOT_RESCORE_S: int(10, 3600, 60),
  FRESHET_HOT_CHECKPOINT_S: int(5, 3600, 60),
  // 0 = keep forever: replays of old data on a running server (docs/hot.md "Retention")
  FRESHET_HOT_RETENTION_DAYS: int(0, 3650, 90),
  FRESHET_HOT_CAP: int(1, 100_000, 1000),
  // auto = 1 shard on a standalone Redis (and in process), HOT_SHARDS_ON_CLUSTER on a Cluster
  FRESHET_HOT_SHARDS: z.union([z.literal('auto'), z.coerce.number().int().min(1).max(1024)]).default('auto'),
  FRESHET_ACTIVE_DAYS: num(0.01, 365, 7),
  FRESHET_INBOX_LENGTH: int(10, 100_000, 800),
  FRESHET_OUTBOX_LENGTH: int(10, 100_000, 800),
  FRESHET_CELEBRITY_THRESHOLD: int(1, 1_000_000_000, 10_000),
  FRESHET_FOLLOW_BACKFILL: int(0, 10_000, 200),
  FRESHET_FANOUT_CHUNK: int(1, 100_000, 1000),
  FRESHET_FANOUT_CONCURRENCY: int(1, 256, 4),
  FRESHET_FANOUT_ATTEMPTS: int(1, 100, 10),
  FRESHET_FANOUT_SWEEP_S: int(1, 86_400, 30),
  FRESHET_FANOUT_LOCK_MS: int(500, 600_000, 2_000),
  FRESHET_FANOUT_STALLED_MS: int(100, 600_000, 1_000),
  FRESHET_SERVE_FANOUT: z.enum(['on', 'off']).default('on'),
  FRESHET_STREAM_MAX_CONNECTIONS: int(0, 1_000_000, 1000),
  FRESHET_STREAM_MAX_PER_READER: int(1, 1000, 4),
  FRESHET_STREAM_HEARTBEAT_S: num(0.05, 3600, 15),
  FRESHET_STREAM_DRAIN_TIMEOUT_S: num(0.05, 3600, 10),
  FRESHET_STREAM_REPLAY_MAX: int(1, 100_000, 1000),
  FRESHET_EMBEDDING_DIM: int(8, 4096, 256),
  FRESHET_DISCOVER_OVERFETCH: num(1, 20, 3),
  FRESHET_DISCOVER_OVERFETCH_CAP: num(1.5, 50, 10),
  // 40, was 100: a first page's search asks for what the page needs (20 × over-fetch 3 = 60), not five pages' worth
  // (bench/README "Discover: the first page's pool": 200k, 10.7 / 18.7 → 9.32 / 16.5 ms, recall@20 unchanged)
  FRESHET_DISCOVER_POOL: int(10, 5000, 40),
  // the learned candidates a session's phase 2 starts with (docs/discover.md "Discovery"; 0: none)
  FRESHET_DISCOVER_LEARNED: int(0, 5000, 200),
  FRESHET_DISCOVER_INDEX: z.enum(['auto', 'pgvector', 'memory']).default('auto'),
  FRESHET_DISCOVER_EXACT_MAX: int(0, 1_000_000_000, 50_000),
  FRESHET_DISCOVER_HNSW_M: int(4, 64, 32),
  FRESHET_DISCOVER_HNSW_EF_CONSTRUCTION: int(16, 1000, 128),
  FRESHET_DISCOVER_HNSW_EF_SEARCH: int(10, 1000, 600),
  FRESHET_DISCOVER_SYNC_MS: int(10, 3_600_000, 1000),
  // in-process index: the snapshot's HNSW graph memory-mapped, one copy per host; `all`: the codes too (docs/discover.md)
  FRESHET_DISCOVER_SHARED_INDEX: z.enum(['graph', 'all', 'off']).default('graph'),
  FRESHET_DISCOVER_HALF_LIFE_HOURS: num(0.1, 24 * 3650, 168),
  FRESHET_DISCOVER_SIGNALS: int(1, 1000, 100),
  // 0 = keep every reader signal (docs/operations.md "Retention")
  FRESHET_DISCOVER_SIGNAL_RETENTION_DAYS: num(0, 3650, 7),
  FRESHET_RETENTION_SWEEP_S: int(10, 86_400, 3600),
  FRESHET_METRICS_STORE_READ_S: num(0, 3600, 10),
  FRESHET_DISCOVER_CURSOR_TTL_S: int(60, 30 * 86400, 86400),
  FRESHET_DISCOVER_TRENDING_DEPTH: int(0, 1000, 100),
  FRESHET_DISCOVER_MIN_SIMILARITY: num(-1, 0.99, 0),
  FRESHET_FOR_YOU_SEEN: z.enum(['rolling', 'per_reader']).default('rolling'),
  FRESHET_DISCOVER_SEEN: z.enum(['rolling', 'per_reader']).default('per_reader'),
  FRESHET_READER_SEEN_CAPACITY: int(100, 1_000_000, 100),
  FRESHET_READER_SEEN_FPR: num(0.00001, 0.5, 0.01),
  FRESHET_READER_SEEN_TTL_DAYS: num(1, 3650, 30),
  FRESHET_RECENT_VIEWS: int(0, 1000, 10),
  FRESHET_RECENT_VIEWS_TTL_DAYS: num(0.01, 365, 7),
  FRESHET_NOT_INTERESTED_AUTHOR_WEIGHT: num(0, 1, 0.3),
  FRESHET_NOT_INTERESTED_AUTHOR_DAYS: num(0, 3650, 30),
  FRESHET_EXCLUSION_CAP: int(10, 100_000, 5000),
  FRESHET_SHOW_LESS_WEIGHT: num(0.01, 1, 0.5),
  FRESHET_SHOW_LESS_FLOOR: num(0.01, 1, 0.1),
  FRESHET_SHOW_LESS_DAYS: num(0, 3650, 30),
  FRESHET_MAX_PER_AUTHOR: int(0, 20, 2),
  FRESHET_NOTIFICATION_WINDOW_H: num(0.1, 24 * 30, 24),
  FRESHET_NOTIFICATION_GROUPS: int(10, 10_000, 200),
  FRESHET_NOTIFICATION_RETENTION_DAYS: num(1, 3650, 90),
  FRESHET_NOTIFICATION_VIEW_TTL_DAYS: num(0.01, 365, 30),
  FRESHET_EXCLUSION_CACHE_TTL_S: int(1, 30 * 86400, 3600),
  FRESHET_EXCLUSION_MEMO_MB: num(0, 65_536, 64),
});

/**
 * How long one store call may take before it fails as STORE_UNAVAILABLE (HTTP 503, 50301), ms.
 * `redisMs` and `sqlMs` bound every call a request makes (one Redis command, one SQL statement, one
 * wait for a pooled connection) and the readiness probes; `jobMs` bounds the calls of background
 * and long work (checkpoints, restores, migrations, the vector index, CLI commands), which would be
 * cut by the request deadline. See docs/operations.md "Deadlines".
 */
export interface Deadlines {
  /** `FRESHET_REDIS_TIMEOUT_MS`, default 1000. */
  redisMs: number;
  /** `FRESHET_SQL_TIMEOUT_MS`, default 1000. */
  sqlMs: number;
  /** `FRESHET_JOB_TIMEOUT_MS`, default 300 000 (5 min). */
  jobMs: number;
}

/**
 * The configuration of a process that only does long work (a CLI command, `freshet worker`): its
 * request-path clients get the job deadline too, so an import batch or a rebuild is never cut at 1 s.
 */
export function forJobs(config: Config): Config {
  const { jobMs } = config.deadlines;
  return { ...config, deadlines: { redisMs: jobMs, sqlMs: jobMs, jobMs } };
}

/** The resolved configuration. Durations in ms unless the name says otherwise. */
export interface Config {
  port: number;
  host: string;
  logLevel: string;
  /** `freshet serve` worker processes (`FRESHET_WORKERS`, `--workers`); 0 = the number of cores. */
  workers: number;
  /** Absolute path of the embedded data folder. */
  dataDir: string;
  /** PostgreSQL URL; undefined → PGlite in `<dataDir>/pgdata`. */
  databaseUrl?: string;
  /** Redis URL; undefined (and no cluster nodes) → in-process stores. */
  redisUrl?: string;
  /** Redis Cluster seed nodes as `host:port`. */
  redisClusterNodes?: { host: string; port: number }[];
  serviceKey?: string;
  secret?: string;
  keyPrefix: string;
  /** Store deadlines (docs/operations.md "Deadlines"). */
  deadlines: Deadlines;
  bodyLimitBytes: number;
  /** Lifetime of tokens minted by `freshet token`, seconds. */
  tokenTtlS: number;
  /** The edge's limits on slow and greedy clients (src/server/limits.ts). */
  edge: EdgeSettings;
  /** Longest remaining life the server accepts in a reader token (`FRESHET_TOKEN_MAX_TTL_S`, 365 days), seconds. */
  tokenMaxTtlS: number;
  /** Who may read `/metrics` and `/docs` (`FRESHET_METRICS_ACCESS`, `FRESHET_DOCS_ACCESS`; src/server/routes/ops.ts). */
  opsAccess: { metrics: 'open' | 'service'; docs: 'open' | 'service' };
  /** How far past the clock a time input (`X-Freshet-Now`, `published_at`, a view's `at`) may be, ms (src/kernel/time-range.ts). */
  futureSkewMs: number;
  /** How long `freshet serve` may take to close on a signal before it exits 1 (`FRESHET_SHUTDOWN_GRACE_S`), ms. */
  shutdownGraceMs: number;
  /** Interval of the retention sweeps of the maintenance worker (`FRESHET_RETENTION_SWEEP_S`), ms (src/use-cases/retention.ts). */
  retentionSweepMs: number;
  /**
   * How long a store reading of `/metrics` (catalog size, active readers, seen-filter fill, store sizes) is
   * served before a scrape reads the store again (`FRESHET_METRICS_STORE_READ_S`), ms (src/observe/overview-metrics.ts).
   */
  metricsStoreReadMs: number;
  /** The in-process cache of hydrated items (`FRESHET_ITEM_CACHE_SIZE`, `FRESHET_ITEM_CACHE_TTL_S`). */
  itemCache: ItemCacheSettings;
  /** The for-you feed (docs/for-you.md). */
  forYou: ForYouSettings;
  /** The for-you design's rolling seen filters. */
  seen: SeenSettings;
  /** The hot ranking (docs/hot.md). */
  hot: HotSettings;
  /** Which seen filter each feed uses (docs/for-you.md "Seen strategy"): the for-you design's rolling or the discover design's per-reader. */
  seenStrategy: { forYou: SeenStrategy; discover: SeenStrategy };
  /** The discover design's per-reader scalable seen filter. */
  readerSeen: ReaderSeenSettings;
  /** The exclusions (docs/exclusions.md). */
  exclusions: ExclusionSettings;
  /** The following timeline (docs/following.md). */
  following: FollowingSettings;
  /** The discover feed (docs/discover.md). */
  discover: DiscoverSettings;
  /** The grouped notifications. */
  notifications: NotificationWiring;
  /** The learning room: neighbours, popularity, factor model (docs/learning.md). */
  learn: LearnSettings;
}

/** The parsed environment: every variable of `EnvSchema`, typed, with its default. */
type Env = z.infer<typeof EnvSchema>;

/**
 * Parses and checks the environment: one settings parser per capability below, each reading its
 * variables from the parsed environment.
 * @throws Error listing every invalid variable (name, value problem), or when the recall horizon
 *   would outlive the seen window (an item could then be recalled after its impression is forgotten).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parseEnv(EnvSchema, env);
  return {
    ...processSettings(e),
    forYou: forYouSettings(e),
    seen: seenSettings(e),
    hot: hotSettings(e, parseNodes(e.FRESHET_REDIS_CLUSTER_NODES) !== undefined),
    seenStrategy: { forYou: e.FRESHET_FOR_YOU_SEEN, discover: e.FRESHET_DISCOVER_SEEN },
    readerSeen: readerSeenSettings(e),
    exclusions: exclusionSettings(e),
    following: followingSettings(e),
    discover: discoverSettings(e),
    notifications: notificationSettings(e),
    learn: learnSettings(e),
  };
}

/** The process, its stores and its HTTP edge (everything but the capabilities' sections). */
function processSettings(
  e: Env,
): Omit<
  Config,
  | 'forYou'
  | 'seen'
  | 'hot'
  | 'seenStrategy'
  | 'readerSeen'
  | 'exclusions'
  | 'following'
  | 'discover'
  | 'notifications'
  | 'learn'
> {
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    workers: e.FRESHET_WORKERS,
    dataDir: resolve(e.FRESHET_DATA_DIR),
    databaseUrl: e.FRESHET_DATABASE_URL || undefined,
    redisUrl: e.FRESHET_REDIS_URL || undefined,
    redisClusterNodes: parseNodes(e.FRESHET_REDIS_CLUSTER_NODES),
    serviceKey: e.FRESHET_SERVICE_KEY,
    secret: e.FRESHET_SECRET,
    keyPrefix: e.FRESHET_KEY_PREFIX,
    deadlines: {
      redisMs: e.FRESHET_REDIS_TIMEOUT_MS,
      sqlMs: e.FRESHET_SQL_TIMEOUT_MS,
      jobMs: e.FRESHET_JOB_TIMEOUT_MS,
    },
    bodyLimitBytes: e.FRESHET_BODY_LIMIT_BYTES,
    tokenTtlS: e.FRESHET_TOKEN_TTL_S,
    tokenMaxTtlS: e.FRESHET_TOKEN_MAX_TTL_S,
    edge: edgeSettings(e),
    opsAccess: {
      // auto: open on a loopback address (a local or proxied server), behind the service key otherwise
      metrics:
        e.FRESHET_METRICS_ACCESS === 'auto' ? (LOOPBACK.has(e.HOST) ? 'open' : 'service') : e.FRESHET_METRICS_ACCESS,
      docs: e.FRESHET_DOCS_ACCESS,
    },
    futureSkewMs: e.FRESHET_FUTURE_SKEW_S * 1000,
    shutdownGraceMs: Math.round(e.FRESHET_SHUTDOWN_GRACE_S * 1000),
    retentionSweepMs: e.FRESHET_RETENTION_SWEEP_S * 1000,
    metricsStoreReadMs: Math.round(e.FRESHET_METRICS_STORE_READ_S * 1000),
    itemCache: { maxItems: e.FRESHET_ITEM_CACHE_SIZE, ttlMs: e.FRESHET_ITEM_CACHE_TTL_S * 1000 },
  };
}

/** Addresses `FRESHET_METRICS_ACCESS=auto` treats as private (`HOST`). */
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * The HTTP edge's timeouts and limits.
 * @throws Error when the header timeout is longer than the request timeout, or `freshet token`'s
 *   lifetime longer than the server accepts.
 */
function edgeSettings(e: Env): EdgeSettings {
  if (e.FRESHET_HEADERS_TIMEOUT_S > e.FRESHET_REQUEST_TIMEOUT_S)
    throw configError(
      'FRESHET_HEADERS_TIMEOUT_S must be at most FRESHET_REQUEST_TIMEOUT_S (headers are part of the request)',
    );
  if (e.FRESHET_TOKEN_TTL_S > e.FRESHET_TOKEN_MAX_TTL_S)
    throw configError(
      'FRESHET_TOKEN_TTL_S must be at most FRESHET_TOKEN_MAX_TTL_S (the server would refuse the tokens it mints)',
    );
  return {
    requestTimeoutMs: Math.round(e.FRESHET_REQUEST_TIMEOUT_S * 1000),
    headersTimeoutMs: Math.round(e.FRESHET_HEADERS_TIMEOUT_S * 1000),
    rateWindowMs: e.FRESHET_RATE_WINDOW_S * 1000,
    readerRequests: e.FRESHET_RATE_READER,
    readerOtherRequests: e.FRESHET_RATE_READER_OTHER,
    serviceRequests: e.FRESHET_RATE_SERVICE,
    readerConcurrency: e.FRESHET_READER_CONCURRENCY,
  };
}

/**
 * The for-you feed (docs/for-you.md).
 * @throws Error when the recall horizon exceeds the seen window (see below).
 */
function forYouSettings(e: Env): ForYouSettings {
  const decay: GaussDecay = {
    scaleMs: e.FRESHET_DECAY_SCALE_HOURS * HOUR_MS,
    offsetMs: e.FRESHET_DECAY_OFFSET_HOURS * HOUR_MS,
    decay: e.FRESHET_DECAY,
  };
  const horizonMs = gaussHorizonMs(decay, e.FRESHET_DECAY_FLOOR);
  // An item seen at time s was published at p ≤ s and is recalled only while now ≤ p + horizon; the
  // filters remember s for at least (days - 1) whole days, so horizon ≤ (days - 1) days keeps the
  // "never twice" promise exact (false positives only ever drop, never repeat).
  if (horizonMs > (e.FRESHET_SEEN_DAYS - 1) * DAY_MS) {
    throw configError(
      `recall horizon ${(horizonMs / HOUR_MS).toFixed(1)} h exceeds the seen window ` +
        `(${e.FRESHET_SEEN_DAYS - 1} whole days); lower FRESHET_DECAY_SCALE_HOURS/OFFSET or raise FRESHET_DECAY_FLOOR or FRESHET_SEEN_DAYS`,
    );
  }
  return {
    recall: { limit: e.FRESHET_RECALL_LIMIT, decay, floor: e.FRESHET_DECAY_FLOOR, horizonMs },
    cacheTtlMs: e.FRESHET_FEED_CACHE_TTL_S * 1000,
    pool: { size: e.FRESHET_FOR_YOU_POOL_SIZE, intervalMs: e.FRESHET_FOR_YOU_POOL_INTERVAL_S * 1000 },
    cursorTtlMs: e.FRESHET_SEEN_DAYS * DAY_MS,
    olderSeen: e.FRESHET_FOR_YOU_OLD_SEEN,
    interests: e.FRESHET_FOR_YOU_INTERESTS,
  };
}

/**
 * The for-you design's rolling seen filters. A day has the shards its capacity needs, and up to FRESHET_SEEN_SHARDS
 * to spread it (src/seen/layout.ts `shardCount`).
 * @throws Error when a day would need more than MAX_SEEN_SHARDS shards.
 */
function seenSettings(e: Env): SeenSettings {
  const shards = e.FRESHET_SEEN_SHARDS ?? DEFAULT_SEEN_SHARDS;
  const n = shardCount({
    days: e.FRESHET_SEEN_DAYS,
    capacityPerDay: e.FRESHET_SEEN_CAPACITY_PER_DAY,
    windowRate: e.FRESHET_SEEN_FPR,
    minShards: shards,
    shardCapacity: e.FRESHET_SEEN_SHARD_CAPACITY,
  });
  if (n > MAX_SEEN_SHARDS) {
    throw configError(
      `FRESHET_SEEN_CAPACITY_PER_DAY: ${e.FRESHET_SEEN_CAPACITY_PER_DAY} impressions a day need ${n} shards; the most ` +
        `is ${MAX_SEEN_SHARDS} (a shard holds at most FRESHET_SEEN_SHARD_CAPACITY, and at most what 1 MiB holds at ` +
        'FRESHET_SEEN_FPR over FRESHET_SEEN_DAYS: docs/operations.md, "Capacity planning")',
    );
  }
  return {
    days: e.FRESHET_SEEN_DAYS,
    capacityPerDay: e.FRESHET_SEEN_CAPACITY_PER_DAY,
    windowRate: e.FRESHET_SEEN_FPR,
    shards,
    shardCapacity: e.FRESHET_SEEN_SHARD_CAPACITY,
    cacheBytes: e.FRESHET_SEEN_CACHE_MB * 1024 * 1024,
    checkpointMs: e.FRESHET_SEEN_CHECKPOINT_S * 1000,
  };
}

/**
 * Hot shards of `FRESHET_HOT_SHARDS=auto` on a Redis Cluster: 12 evenly spaced shard tags put the same
 * number of shards on every master of a Cluster of 2, 3, 4, 6 or 12 masters that split the slots evenly
 * (5 masters: 3/3/2/2/2), so no master holds the whole hot ranking (bench/memory.ts: per-master memory
 * and commands). A standalone server gets 1 (the hot-ranking design's `{hot}` keys): there is nothing to spread.
 */
export const HOT_SHARDS_ON_CLUSTER = 12;

/** The hot-ranking design's hot ranking (retention 0 = keep forever); `cluster`: Redis is a Cluster (for `auto` shards). */
function hotSettings(e: Env, cluster: boolean): HotSettings {
  return {
    params: hotParams(e.FRESHET_HOT_ALPHA, e.FRESHET_HOT_BETA, e.FRESHET_HOT_BASE, e.FRESHET_HOT_GAMMA),
    rateWindowMs: Math.round(e.FRESHET_HOT_RATE_WINDOW_MIN * 60_000),
    visitorBudgetPerMinute: e.FRESHET_HOT_VISITOR_BUDGET_PER_MIN,
    cacheRefreshMs: e.FRESHET_HOT_CACHE_REFRESH_S * 1000,
    rescoreMs: e.FRESHET_HOT_RESCORE_S * 1000,
    checkpointMs: e.FRESHET_HOT_CHECKPOINT_S * 1000,
    retentionMs: e.FRESHET_HOT_RETENTION_DAYS * DAY_MS,
    cap: e.FRESHET_HOT_CAP,
    shards: e.FRESHET_HOT_SHARDS === 'auto' ? (cluster ? HOT_SHARDS_ON_CLUSTER : 1) : e.FRESHET_HOT_SHARDS,
  };
}

/** The discover design's per-reader scalable seen filter. */
function readerSeenSettings(e: Env): ReaderSeenSettings {
  return {
    initialCapacity: e.FRESHET_READER_SEEN_CAPACITY,
    errorRate: e.FRESHET_READER_SEEN_FPR,
    ttlMs: Math.round(e.FRESHET_READER_SEEN_TTL_DAYS * DAY_MS),
  };
}

/** The grouped notifications (docs/notifications.md). */
function notificationSettings(e: Env): NotificationWiring {
  return {
    windowMs: Math.round(e.FRESHET_NOTIFICATION_WINDOW_H * 3_600_000),
    maxGroups: e.FRESHET_NOTIFICATION_GROUPS,
    retentionMs: Math.round(e.FRESHET_NOTIFICATION_RETENTION_DAYS * DAY_MS),
    viewTtlMs: Math.round(e.FRESHET_NOTIFICATION_VIEW_TTL_DAYS * DAY_MS),
  };
}

/** The exclusions (docs/exclusions.md). */
function exclusionSettings(e: Env): ExclusionSettings {
  return {
    recentViews: e.FRESHET_RECENT_VIEWS,
    recentViewsTtlMs: Math.round(e.FRESHET_RECENT_VIEWS_TTL_DAYS * DAY_MS),
    penalty: {
      weight: e.FRESHET_NOT_INTERESTED_AUTHOR_WEIGHT,
      durationMs: Math.round(e.FRESHET_NOT_INTERESTED_AUTHOR_DAYS * DAY_MS),
    },
    showLess: {
      weight: e.FRESHET_SHOW_LESS_WEIGHT,
      floor: Math.min(e.FRESHET_SHOW_LESS_FLOOR, e.FRESHET_SHOW_LESS_WEIGHT),
      durationMs: Math.round(e.FRESHET_SHOW_LESS_DAYS * DAY_MS),
    },
    defaultMaxPerAuthor: e.FRESHET_MAX_PER_AUTHOR,
    cap: e.FRESHET_EXCLUSION_CAP,
    durableTtlMs: e.FRESHET_EXCLUSION_CACHE_TTL_S * 1000,
    memoBytes: Math.round(e.FRESHET_EXCLUSION_MEMO_MB * 2 ** 20),
  };
}

/** The following design's following timeline and its realtime stream. */
function followingSettings(e: Env): FollowingSettings {
  return {
    activeWindowMs: Math.round(e.FRESHET_ACTIVE_DAYS * DAY_MS),
    inboxLength: e.FRESHET_INBOX_LENGTH,
    outboxLength: e.FRESHET_OUTBOX_LENGTH,
    celebrityThreshold: e.FRESHET_CELEBRITY_THRESHOLD,
    followBackfill: e.FRESHET_FOLLOW_BACKFILL,
    fanoutChunk: e.FRESHET_FANOUT_CHUNK,
    fanoutConcurrency: e.FRESHET_FANOUT_CONCURRENCY,
    fanoutAttempts: e.FRESHET_FANOUT_ATTEMPTS,
    sweepMs: e.FRESHET_FANOUT_SWEEP_S * 1000,
    lockMs: e.FRESHET_FANOUT_LOCK_MS,
    stalledMs: e.FRESHET_FANOUT_STALLED_MS,
    serveFanout: e.FRESHET_SERVE_FANOUT === 'on',
    stream: {
      maxConnections: e.FRESHET_STREAM_MAX_CONNECTIONS,
      maxPerReader: e.FRESHET_STREAM_MAX_PER_READER,
      heartbeatMs: Math.round(e.FRESHET_STREAM_HEARTBEAT_S * 1000),
      drainTimeoutMs: Math.round(e.FRESHET_STREAM_DRAIN_TIMEOUT_S * 1000),
      replayMax: e.FRESHET_STREAM_REPLAY_MAX,
    },
  };
}

/** The discover design's discover feed. */
function discoverSettings(e: Env): DiscoverSettings {
  return {
    dim: e.FRESHET_EMBEDDING_DIM,
    overFetch: e.FRESHET_DISCOVER_OVERFETCH,
    overFetchCap: Math.max(e.FRESHET_DISCOVER_OVERFETCH_CAP, e.FRESHET_DISCOVER_OVERFETCH),
    pool: e.FRESHET_DISCOVER_POOL,
    learnedPool: e.FRESHET_DISCOVER_LEARNED,
    index: e.FRESHET_DISCOVER_INDEX,
    exactMax: e.FRESHET_DISCOVER_EXACT_MAX,
    hnswM: e.FRESHET_DISCOVER_HNSW_M,
    hnswEfConstruction: e.FRESHET_DISCOVER_HNSW_EF_CONSTRUCTION,
    hnswEfSearch: e.FRESHET_DISCOVER_HNSW_EF_SEARCH,
    syncMs: e.FRESHET_DISCOVER_SYNC_MS,
    sharedIndex: e.FRESHET_DISCOVER_SHARED_INDEX,
    halfLifeMs: e.FRESHET_DISCOVER_HALF_LIFE_HOURS * HOUR_MS,
    signalLimit: e.FRESHET_DISCOVER_SIGNALS,
    signalRetentionMs: Math.round(e.FRESHET_DISCOVER_SIGNAL_RETENTION_DAYS * DAY_MS),
    cursorTtlMs: e.FRESHET_DISCOVER_CURSOR_TTL_S * 1000,
    trendingDepth: e.FRESHET_DISCOVER_TRENDING_DEPTH,
    minSimilarity: e.FRESHET_DISCOVER_MIN_SIMILARITY,
  };
}

/** The hot-ranking design's score parameters. @throws Error when α and β are both 0 (every score would be 0). */
function hotParams(alpha: number, beta: number, base: number, gamma: number): HotParams {
  try {
    return assertHotParams({ alpha, beta, base, gamma });
  } catch (err) {
    throw configError(`FRESHET_HOT_ALPHA/BETA: ${(err as Error).message}`);
  }
}

function parseNodes(value: string | undefined): { host: string; port: number }[] | undefined {
  if (!value) return undefined;
  return value.split(',').map((hp) => {
    const m = /^\s*([^:\s]+):(\d{1,5})\s*$/.exec(hp);
    if (!m) throw configError(`FRESHET_REDIS_CLUSTER_NODES entry "${hp}" is not host:port`);
    return { host: m[1]!, port: Number(m[2]) };
  });
}
