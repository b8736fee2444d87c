/**
 * Configuration from the environment: every variable, its default (the seed notes' values where
 * they give one) and its range. The README's "Configuration" table mirrors this file.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { HOUR_MS } from './domain/clock.js';
import { gaussHorizonMs, type GaussDecay } from './domain/decay.js';
import { DAY_MS } from './domain/clock.js';
import type { ReaderSeenSettings, SeenStrategy } from './ports/reader-seen-filter.js';
import { DEFAULT_HOT_PARAMS, HOT_PARAM_RANGES, assertHotParams, type HotParams } from './domain/hot.js';

const int = (min: number, max: number, def: number) => z.coerce.number().int().min(min).max(max).default(def);
const num = (min: number, max: number, def: number) => z.coerce.number().min(min).max(max).default(def);

const EnvSchema = z.object({
  PORT: int(0, 65535, 8080),
  HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  FRESHET_DATA_DIR: z.string().default('./.freshet'),
  FRESHET_DATABASE_URL: z.string().optional(),
  FRESHET_REDIS_URL: z.string().optional(),
  FRESHET_REDIS_CLUSTER_NODES: z.string().optional(),
  FRESHET_SERVICE_KEY: z.string().min(16).optional(),
  FRESHET_SECRET: z.string().min(16).optional(),
  FRESHET_KEY_PREFIX: z.string().regex(/^[A-Za-z0-9_.:-]{0,32}$/).default('fs:'),
  FRESHET_BODY_LIMIT_BYTES: int(1024, 64 * 1024 * 1024, 1024 * 1024),
  FRESHET_TOKEN_TTL_S: int(60, 365 * 86400, 86400),
  FRESHET_RECALL_LIMIT: int(1, 5000, 500),
  FRESHET_DECAY_SCALE_HOURS: num(0.01, 24 * 365, 48),
  FRESHET_DECAY_OFFSET_HOURS: num(0, 24 * 365, 6),
  FRESHET_DECAY: num(0.001, 0.999, 0.5),
  FRESHET_DECAY_FLOOR: num(0.000001, 0.5, 0.01),
  FRESHET_FEED_CACHE_TTL_S: int(1, 86400, 1800),
  FRESHET_SEEN_DAYS: int(1, 60, 7),
  FRESHET_SEEN_CAPACITY_PER_DAY: int(1000, 200_000_000, 1_000_000),
  FRESHET_SEEN_FPR: num(0.00001, 0.5, 0.01),
  FRESHET_SEEN_SHARDS: int(1, 1024, 1),
  FRESHET_SEEN_CACHE_MB: int(0, 65_536, 256),
  FRESHET_HOT_ALPHA: num(HOT_PARAM_RANGES.alpha[0], HOT_PARAM_RANGES.alpha[1], DEFAULT_HOT_PARAMS.alpha),
  FRESHET_HOT_BETA: num(HOT_PARAM_RANGES.beta[0], HOT_PARAM_RANGES.beta[1], DEFAULT_HOT_PARAMS.beta),
  FRESHET_HOT_BASE: num(HOT_PARAM_RANGES.base[0], HOT_PARAM_RANGES.base[1], DEFAULT_HOT_PARAMS.base),
  FRESHET_HOT_GAMMA: num(HOT_PARAM_RANGES.gamma[0], HOT_PARAM_RANGES.gamma[1], DEFAULT_HOT_PARAMS.gamma),
  FRESHET_HOT_RATE_WINDOW_MIN: num(10, 15, 10),
  FRESHET_HOT_VISITOR_BUDGET_PER_MIN: int(1, 100_000, 60),
  FRESHET_HOT_CACHE_REFRESH_S: int(60, 120, 60),
  FRESHET_HOT_RESCORE_S: int(10, 3600, 60),
  FRESHET_HOT_CHECKPOINT_S: int(5, 3600, 60),
  FRESHET_HOT_RETENTION_DAYS: int(1, 3650, 90),
  FRESHET_HOT_CAP: int(1, 100_000, 1000),
  FRESHET_HOT_SHARDS: int(1, 1024, 1),
  FRESHET_ACTIVE_DAYS: num(0.01, 365, 7),
  FRESHET_INBOX_LENGTH: int(10, 100_000, 800),
  FRESHET_OUTBOX_LENGTH: int(10, 100_000, 800),
  FRESHET_CELEBRITY_THRESHOLD: int(1, 1_000_000_000, 10_000),
  FRESHET_FOLLOW_BACKFILL: int(0, 10_000, 200),
  FRESHET_FANOUT_CHUNK: int(1, 100_000, 1000),
  FRESHET_FANOUT_CONCURRENCY: int(1, 256, 4),
  FRESHET_FANOUT_ATTEMPTS: int(1, 100, 10),
  FRESHET_FANOUT_SWEEP_S: int(1, 86_400, 30),
  FRESHET_SERVE_FANOUT: z.enum(['on', 'off']).default('on'),
  FRESHET_EMBEDDING_DIM: int(8, 4096, 256),
  FRESHET_DISCOVER_OVERFETCH: num(1, 20, 3),
  FRESHET_DISCOVER_OVERFETCH_CAP: num(1.5, 50, 10),
  FRESHET_DISCOVER_POOL: int(10, 5000, 300),
  FRESHET_DISCOVER_PROBES: int(1, 256, 16),
  FRESHET_DISCOVER_SCAN_ROWS: int(100, 10_000_000, 4000),
  FRESHET_DISCOVER_HALF_LIFE_HOURS: num(0.1, 24 * 3650, 168),
  FRESHET_DISCOVER_SIGNALS: int(1, 1000, 100),
  FRESHET_DISCOVER_CURSOR_TTL_S: int(60, 30 * 86400, 86400),
  FRESHET_DISCOVER_TRENDING_DEPTH: int(0, 1000, 100),
  FRESHET_DISCOVER_MIN_SIMILARITY: num(-1, 0.99, 0),
  FRESHET_FOR_YOU_SEEN: z.enum(['rolling', 'per_reader']).default('rolling'),
  FRESHET_DISCOVER_SEEN: z.enum(['rolling', 'per_reader']).default('per_reader'),
  FRESHET_READER_SEEN_CAPACITY: int(100, 100_000_000, 100_000),
  FRESHET_READER_SEEN_FPR: num(0.00001, 0.5, 0.01),
  FRESHET_READER_SEEN_TTL_DAYS: num(1, 3650, 30),
  FRESHET_RECENT_VIEWS: int(0, 1000, 10),
  FRESHET_RECENT_VIEWS_TTL_DAYS: num(0.01, 365, 7),
  FRESHET_NOT_INTERESTED_AUTHOR_WEIGHT: num(0, 1, 0.3),
  FRESHET_NOT_INTERESTED_AUTHOR_DAYS: num(0, 3650, 30),
  FRESHET_EXCLUSION_CAP: int(10, 100_000, 5000),
  FRESHET_EXCLUSION_CACHE_TTL_S: int(1, 30 * 86400, 3600),
});

/** The resolved configuration. Durations in ms unless the name says otherwise. */
export interface Config {
  port: number;
  host: string;
  logLevel: string;
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
  bodyLimitBytes: number;
  /** Lifetime of tokens minted by `freshet token`, seconds. */
  tokenTtlS: number;
  recall: { limit: number; decay: GaussDecay; floor: number; horizonMs: number };
  feedCacheTtlMs: number;
  /** The global rolling seen filter (note 1); `cacheBytes`: the Redis adapter's past-day cache, bytes. */
  seen: { days: number; capacityPerDay: number; windowRate: number; shards: number; cacheBytes: number };
  /** The hot ranking (note 2); durations in ms. */
  hot: {
    params: HotParams;
    rateWindowMs: number;
    visitorBudgetPerMinute: number;
    cacheRefreshMs: number;
    rescoreMs: number;
    checkpointMs: number;
    retentionMs: number;
    cap: number;
    shards: number;
  };
  /** Which seen filter each feed uses (README "Seen strategy"): note 1's rolling or note 3's per-reader. */
  seenStrategy: { forYou: SeenStrategy; discover: SeenStrategy };
  /** Note 3's per-reader scalable seen filter. */
  readerSeen: ReaderSeenSettings;
  /** Note 5's exclusions; durations in ms. See src/services/exclusions.ts. */
  exclusions: {
    recentViews: number;
    recentViewsTtlMs: number;
    /** Score multiplier of a "not interested" item's author for the reader, and how long it lasts. */
    penalty: { weight: number; durationMs: number };
    /** Most engagements / feedback entries / blocked users loaded per reader. */
    cap: number;
    durableTtlMs: number;
  };
  /** The following timeline (note 4); durations in ms. See src/services/following-timeline.ts. */
  following: {
    activeWindowMs: number;
    inboxLength: number;
    outboxLength: number;
    celebrityThreshold: number;
    followBackfill: number;
    fanoutChunk: number;
    fanoutConcurrency: number;
    fanoutAttempts: number;
    sweepMs: number;
    /** Whether `freshet serve` on Redis also runs a fan-out worker (the embedded default always does). */
    serveFanout: boolean;
  };
  /** The discover feed (note 3); durations in ms. See src/services/discover-feed.ts. */
  discover: {
    dim: number;
    overFetch: number;
    overFetchCap: number;
    pool: number;
    probes: number;
    scanRows: number;
    halfLifeMs: number;
    signalLimit: number;
    cursorTtlMs: number;
    trendingDepth: number;
    minSimilarity: number;
  };
}

/**
 * Parses and checks the environment.
 * @throws Error listing every invalid variable (name, value problem), or when the recall horizon
 *   would outlive the seen window (an item could then be recalled after its impression is forgotten).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
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
    throw new Error(
      `invalid configuration: recall horizon ${(horizonMs / HOUR_MS).toFixed(1)} h exceeds the seen window ` +
        `(${e.FRESHET_SEEN_DAYS - 1} whole days); lower FRESHET_DECAY_SCALE_HOURS/OFFSET or raise FRESHET_DECAY_FLOOR or FRESHET_SEEN_DAYS`,
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    dataDir: resolve(e.FRESHET_DATA_DIR),
    databaseUrl: e.FRESHET_DATABASE_URL || undefined,
    redisUrl: e.FRESHET_REDIS_URL || undefined,
    redisClusterNodes: parseNodes(e.FRESHET_REDIS_CLUSTER_NODES),
    serviceKey: e.FRESHET_SERVICE_KEY,
    secret: e.FRESHET_SECRET,
    keyPrefix: e.FRESHET_KEY_PREFIX,
    bodyLimitBytes: e.FRESHET_BODY_LIMIT_BYTES,
    tokenTtlS: e.FRESHET_TOKEN_TTL_S,
    recall: { limit: e.FRESHET_RECALL_LIMIT, decay, floor: e.FRESHET_DECAY_FLOOR, horizonMs },
    feedCacheTtlMs: e.FRESHET_FEED_CACHE_TTL_S * 1000,
    seen: {
      days: e.FRESHET_SEEN_DAYS,
      capacityPerDay: e.FRESHET_SEEN_CAPACITY_PER_DAY,
      windowRate: e.FRESHET_SEEN_FPR,
      shards: e.FRESHET_SEEN_SHARDS,
      cacheBytes: e.FRESHET_SEEN_CACHE_MB * 1024 * 1024,
    },
    hot: {
      params: hotParams(e.FRESHET_HOT_ALPHA, e.FRESHET_HOT_BETA, e.FRESHET_HOT_BASE, e.FRESHET_HOT_GAMMA),
      rateWindowMs: Math.round(e.FRESHET_HOT_RATE_WINDOW_MIN * 60_000),
      visitorBudgetPerMinute: e.FRESHET_HOT_VISITOR_BUDGET_PER_MIN,
      cacheRefreshMs: e.FRESHET_HOT_CACHE_REFRESH_S * 1000,
      rescoreMs: e.FRESHET_HOT_RESCORE_S * 1000,
      checkpointMs: e.FRESHET_HOT_CHECKPOINT_S * 1000,
      retentionMs: e.FRESHET_HOT_RETENTION_DAYS * DAY_MS,
      cap: e.FRESHET_HOT_CAP,
      shards: e.FRESHET_HOT_SHARDS,
    },
    seenStrategy: { forYou: e.FRESHET_FOR_YOU_SEEN, discover: e.FRESHET_DISCOVER_SEEN },
    readerSeen: {
      initialCapacity: e.FRESHET_READER_SEEN_CAPACITY,
      errorRate: e.FRESHET_READER_SEEN_FPR,
      ttlMs: Math.round(e.FRESHET_READER_SEEN_TTL_DAYS * DAY_MS),
    },
    exclusions: {
      recentViews: e.FRESHET_RECENT_VIEWS,
      recentViewsTtlMs: Math.round(e.FRESHET_RECENT_VIEWS_TTL_DAYS * DAY_MS),
      penalty: { weight: e.FRESHET_NOT_INTERESTED_AUTHOR_WEIGHT, durationMs: Math.round(e.FRESHET_NOT_INTERESTED_AUTHOR_DAYS * DAY_MS) },
      cap: e.FRESHET_EXCLUSION_CAP,
      durableTtlMs: e.FRESHET_EXCLUSION_CACHE_TTL_S * 1000,
    },
    following: {
      activeWindowMs: Math.round(e.FRESHET_ACTIVE_DAYS * DAY_MS),
      inboxLength: e.FRESHET_INBOX_LENGTH,
      outboxLength: e.FRESHET_OUTBOX_LENGTH,
      celebrityThreshold: e.FRESHET_CELEBRITY_THRESHOLD,
      followBackfill: e.FRESHET_FOLLOW_BACKFILL,
      fanoutChunk: e.FRESHET_FANOUT_CHUNK,
      fanoutConcurrency: e.FRESHET_FANOUT_CONCURRENCY,
      fanoutAttempts: e.FRESHET_FANOUT_ATTEMPTS,
      sweepMs: e.FRESHET_FANOUT_SWEEP_S * 1000,
      serveFanout: e.FRESHET_SERVE_FANOUT === 'on',
    },
    discover: {
      dim: e.FRESHET_EMBEDDING_DIM,
      overFetch: e.FRESHET_DISCOVER_OVERFETCH,
      overFetchCap: Math.max(e.FRESHET_DISCOVER_OVERFETCH_CAP, e.FRESHET_DISCOVER_OVERFETCH),
      pool: e.FRESHET_DISCOVER_POOL,
      probes: e.FRESHET_DISCOVER_PROBES,
      scanRows: e.FRESHET_DISCOVER_SCAN_ROWS,
      halfLifeMs: e.FRESHET_DISCOVER_HALF_LIFE_HOURS * HOUR_MS,
      signalLimit: e.FRESHET_DISCOVER_SIGNALS,
      cursorTtlMs: e.FRESHET_DISCOVER_CURSOR_TTL_S * 1000,
      trendingDepth: e.FRESHET_DISCOVER_TRENDING_DEPTH,
      minSimilarity: e.FRESHET_DISCOVER_MIN_SIMILARITY,
    },
  };
}

/** Note 2's score parameters. @throws Error when α and β are both 0 (every score would be 0). */
function hotParams(alpha: number, beta: number, base: number, gamma: number): HotParams {
  try {
    return assertHotParams({ alpha, beta, base, gamma });
  } catch (err) {
    throw new Error(`invalid configuration: FRESHET_HOT_ALPHA/BETA: ${(err as Error).message}`);
  }
}

function parseNodes(value: string | undefined): { host: string; port: number }[] | undefined {
  if (!value) return undefined;
  return value.split(',').map((hp) => {
    const m = /^\s*([^:\s]+):(\d{1,5})\s*$/.exec(hp);
    if (!m) throw new Error(`invalid configuration: FRESHET_REDIS_CLUSTER_NODES entry "${hp}" is not host:port`);
    return { host: m[1]!, port: Number(m[2]) };
  });
}

/** Where generated secrets live inside the data folder. */
export function secretsPath(config: Config): string {
  return join(config.dataDir, 'secrets.json');
}

/**
 * Fills a missing service key or token secret: from `<dataDir>/secrets.json` when present, else
 * generated (32 random bytes each) and written there with mode 0600.
 * @returns the config with both set, and the path when something was generated (to be logged).
 */
export function ensureSecrets(config: Config): { config: Config; generatedAt?: string } {
  if (config.serviceKey && config.secret) return { config };
  const path = secretsPath(config);
  let stored: { serviceKey?: string; secret?: string } = {};
  if (existsSync(path)) stored = JSON.parse(readFileSync(path, 'utf8')) as typeof stored;
  const next = {
    serviceKey: stored.serviceKey ?? `fsk_${randomBytes(24).toString('base64url')}`,
    secret: stored.secret ?? randomBytes(32).toString('base64url'),
  };
  const generated = !stored.serviceKey || !stored.secret;
  if (generated) {
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(path, JSON.stringify(next, null, 2) + '\n', { mode: 0o600 });
  }
  return {
    config: { ...config, serviceKey: config.serviceKey ?? next.serviceKey, secret: config.secret ?? next.secret },
    generatedAt: generated ? path : undefined,
  };
}
