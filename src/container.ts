/**
 * The container: wires configuration → adapters → services, and closes them in reverse order.
 *
 * - PostgreSQL URL set → `pg`; else PGlite in `<dataDir>/pgdata` (the embedded default).
 * - Redis URL or cluster nodes set → Redis adapters; else in-process stores, whose seen filters are
 *   snapshotted to `<dataDir>/seen-filters.bin` on close and restored on start (so a restart of the
 *   embedded server does not forget impressions). The feed cache is not persisted (30-minute buffer).
 */
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { pino, type Logger as Pino } from 'pino';
import type { Config } from './config.js';
import { systemClock, type Clock } from './domain/clock.js';
import { sizeWindow, type BloomGeometry } from './domain/bloom.js';
import type { CandidateRecall, ContentStore } from './ports/content-store.js';
import type { FeedCache } from './ports/feed-cache.js';
import type { SeenFilter } from './ports/seen-filter.js';
import { PromMetrics } from './adapters/prometheus.js';
import { openPglite, openPostgres, type Sql } from './adapters/postgres/sql.js';
import { migrate } from './adapters/postgres/migrations.js';
import { PostgresContentStore } from './adapters/postgres/content-store.js';
import { createRedis } from './adapters/redis/client.js';
import { Keys } from './adapters/redis/keys.js';
import { RedisSeenFilter } from './adapters/redis/seen-filter.js';
import { RedisFeedCache } from './adapters/redis/feed-cache.js';
import { MemorySeenFilter } from './adapters/memory/seen-filter.js';
import { MemoryFeedCache } from './adapters/memory/feed-cache.js';
import { ForYouFeed } from './services/for-you-feed.js';
import { TokenVerifier } from './services/tokens.js';
import type { HotCounters, HotRules } from './ports/hot-counters.js';
import type { HotArchive } from './ports/hot-archive.js';
import { MemoryHotCounters } from './adapters/memory/hot-counters.js';
import { RedisHotCounters } from './adapters/redis/hot-counters.js';
import { PostgresHotArchive } from './adapters/postgres/hot-archive.js';
import { PromHotMetrics } from './adapters/prometheus-hot.js';
import { HotRanking } from './services/hot-ranking.js';
import { HotMaintenance } from './services/hot-maintenance.js';
import { startHotWorkers, type HotWorkers } from './workers/hot.js';
import { wireFollowing, type Following, type FollowingRedis } from './container-following.js';
import { wireExclusions } from './container-exclusions.js';
import type { Exclusions } from './services/exclusions.js';
import type { ReaderSeenFilter } from './ports/reader-seen-filter.js';
import { wireDiscover, type Discover } from './container-discover.js';

/** A wired Freshet instance: what the HTTP app and the CLI use. */
export interface Freshet {
  config: Config;
  clock: Clock;
  log: Pino;
  content: ContentStore & CandidateRecall;
  seen: SeenFilter;
  cache: FeedCache;
  forYou: ForYouFeed;
  /** The hot ranking (note 2): views, the cached ranking; and its maintenance tasks. */
  hot: HotRanking;
  hotMaintenance: HotMaintenance;
  hotCounters: HotCounters;
  hotArchive: HotArchive;
  tokens: TokenVerifier;
  metrics: PromMetrics;
  /** The following timeline (note 4): graph, timeline store, fan-out queue and worker. */
  following: Following;
  /** Note 5's exclusions, one service for every feed (README "Exclusions"). */
  exclusions: Exclusions;
  /** Note 3's per-reader scalable seen filter (used by the feeds whose strategy is `per_reader`). */
  readerSeen: ReaderSeenFilter;
  /** The discover feed (note 3) and its embeddings. */
  discover: Discover;
  /** Starts the background workers (hot rescoring, checkpoints, snapshot refresh); `close` stops them. */
  startWorkers(): void;
  /** Which stores answer: `{postgres, redis}` (in-process stores always answer). */
  ready(): Promise<Record<string, boolean>>;
  /** Closes every store (idempotent). */
  close(): Promise<void>;
}

/** Options of {@link openFreshet}. */
export interface OpenOptions {
  clock?: Clock;
  log?: Pino;
  /** Collect prom-client default process metrics (default true; tests turn it off). */
  defaultMetrics?: boolean;
  /** An already-open SQL store to use instead of the configured one (tests: one schema per run). */
  sql?: Sql;
  /** Restore lost hot-counter shards from the checkpoints while opening (default true). */
  recoverHot?: boolean;
}

/** The seen-filter geometry of the configuration (per shard and day). */
export function seenGeometry(config: Config): BloomGeometry {
  const perShard = Math.ceil(config.seen.capacityPerDay / config.seen.shards);
  return sizeWindow(perShard, config.seen.windowRate, config.seen.days);
}

/** Opens the SQL store the configuration names and runs pending migrations. */
export async function openSql(config: Config): Promise<Sql> {
  let sql: Sql;
  if (config.databaseUrl) sql = await openPostgres(config.databaseUrl);
  else {
    mkdirSync(config.dataDir, { recursive: true });
    sql = await openPglite(join(config.dataDir, 'pgdata'));
  }
  await migrate(sql);
  return sql;
}

/** Opens only the content store (for `freshet import`). */
export async function openContent(config: Config): Promise<{ content: PostgresContentStore; close(): Promise<void> }> {
  const sql = await openSql(config);
  const content = new PostgresContentStore(sql);
  return { content, close: () => sql.close() };
}

/**
 * Opens every store and wires the services.
 * @throws Error when the configuration lacks a service key or secret (call `ensureSecrets` first)
 *   or a store cannot be reached.
 */
export async function openFreshet(config: Config, opts: OpenOptions = {}): Promise<Freshet> {
  if (!config.serviceKey || !config.secret) throw new Error('service key and secret must be configured (ensureSecrets)');
  const log = opts.log ?? pino({ level: config.logLevel });
  const clock = opts.clock ?? systemClock;
  const metrics = new PromMetrics({ defaultMetrics: opts.defaultMetrics });
  const sql = opts.sql ?? (await openSql(config));
  if (opts.sql) await migrate(opts.sql);
  const content = new PostgresContentStore(sql);
  const geometry = seenGeometry(config);
  const stores = await openHotStores(config, geometry, log);
  const ex = await wireExclusions(config, sql, stores.following ?? null, stores.seen, log);
  const forYou = new ForYouFeed(
    { content, recall: content, seen: ex.seenFor(config.seenStrategy.forYou), cache: stores.cache, exclusions: ex.exclusions, metrics, log },
    {
      recall: { limit: config.recall.limit, decay: config.recall.decay, horizonMs: config.recall.horizonMs },
      cacheTtlMs: config.feedCacheTtlMs,
      leaseMs: 5000,
      leasePollMs: 5,
    },
  );
  const hot = await wireHot(config, stores.hot, sql, content, metrics, log, clock, opts.recoverHot !== false);
  const following = wireFollowing(config, sql, stores.following ?? null, metrics.registry, log);
  const discoverSeen = ex.seenFor(config.seenStrategy.discover);
  const discover = wireDiscover(config, { sql, content, hot: hot.hot, seen: discoverSeen, exclusions: ex.exclusions, log, secret: config.secret });
  let workers: HotWorkers | undefined;
  let closed: Promise<void> | undefined;
  return {
    config,
    clock,
    log,
    content,
    seen: stores.seen,
    cache: stores.cache,
    forYou,
    ...hot,
    hotCounters: stores.hot,
    tokens: new TokenVerifier(config.serviceKey, config.secret),
    metrics,
    following,
    exclusions: ex.exclusions,
    readerSeen: ex.readerSeen,
    discover,
    startWorkers: () => {
      const { rescoreMs, checkpointMs, cacheRefreshMs } = config.hot;
      workers ??= startHotWorkers(hot.hot, hot.hotMaintenance, clock, { rescoreMs, checkpointMs, cacheRefreshMs }, log);
    },
    ready: async () => ({ postgres: await sql.query('SELECT 1').then(() => true, () => false), ...(await stores.ready()) }),
    close: () =>
      (closed ??= (async () => {
        await workers?.stop();
        // the final checkpoint: nothing counted is lost on a graceful shutdown
        await hot.hotMaintenance.checkpoint(clock.now()).catch((err: unknown) => log.error({ err }, 'final hot checkpoint failed'));
        await following.close();
        await ex.close();
        await stores.close();
        await sql.close();
      })()),
  };
}

/** Wires the hot ranking over its counters, and restores lost counters from the checkpoints. */
async function wireHot(config: Config, counters: HotCounters, sql: Sql, content: ContentStore, metrics: PromMetrics, log: Pino, clock: Clock, recover: boolean) {
  const hotMetrics = new PromHotMetrics(metrics.registry);
  hotMetrics.suspiciousSource(() => counters.suspiciousTotals());
  const { params, cacheRefreshMs, cap, retentionMs } = config.hot;
  const hot = new HotRanking({ counters, content, metrics: hotMetrics, log }, { params, cacheRefreshMs, cap, retentionMs });
  const hotArchive = new PostgresHotArchive(sql);
  const hotMaintenance = new HotMaintenance({ counters, archive: hotArchive, metrics: hotMetrics, log }, { retentionMs });
  // A store that does not answer yet must not keep the service from starting: the checkpoint worker
  // recovers lost shards before its next checkpoint, and views are counted meanwhile.
  if (recover) await hotMaintenance.recover(clock.now()).catch((err: unknown) => log.warn({ err }, 'hot counters: recovery postponed'));
  return { hot, hotMaintenance, hotArchive };
}

/** The store-facing rules of the hot counters, from the configuration. */
export function hotRules(config: Config): HotRules {
  const { params, rateWindowMs, visitorBudgetPerMinute, retentionMs, cap } = config.hot;
  return { params, rateWindowMs, visitorBudgetPerMinute, retentionMs, cap };
}

interface HotStores {
  seen: SeenFilter;
  cache: FeedCache;
  hot: HotCounters;
  /** The Redis client and keys the following timeline shares (absent: in process). */
  following?: FollowingRedis;
  ready(): Promise<Record<string, boolean>>;
  close(): Promise<void>;
}

/** How often the in-process seen filters are snapshotted to the data folder (ms). */
export const SNAPSHOT_INTERVAL_MS = 60_000;

async function openHotStores(config: Config, geometry: BloomGeometry, log: Pino): Promise<HotStores> {
  if (config.redisUrl || config.redisClusterNodes) {
    const redis = createRedis({ url: config.redisUrl, clusterNodes: config.redisClusterNodes });
    // ioredis reconnects by itself; log the outage at most every 10 s instead of on every retry.
    let lastLogged = 0;
    redis.on('error', (err: Error) => {
      if (Date.now() - lastLogged < 10_000) return;
      lastLogged = Date.now();
      log.error({ err: err.message }, 'redis connection error (retrying)');
    });
    const keys = new Keys(config.keyPrefix, config.seen.shards, config.hot.shards);
    const seen = new RedisSeenFilter(redis, keys, geometry, { days: config.seen.days, cacheBytes: config.seen.cacheBytes });
    const cache = new RedisFeedCache(redis, keys);
    return {
      seen,
      cache,
      hot: new RedisHotCounters(redis, keys, hotRules(config)),
      following: { redis, keys },
      ready: async () => ({ redis: await redis.ping().then((r: string) => r === 'PONG', () => false) }),
      close: async () => {
        redis.disconnect();
      },
    };
  }
  const snapshot = join(config.dataDir, 'seen-filters.bin');
  const seen = await MemorySeenFilter.restore(snapshot, geometry, { days: config.seen.days });
  const cache = new MemoryFeedCache();
  mkdirSync(config.dataDir, { recursive: true });
  // Periodic snapshots bound what a crash (no graceful close) forgets to one interval of impressions.
  const timer = setInterval(() => {
    seen.snapshot(snapshot).catch((err: unknown) => log.warn({ err, path: snapshot }, 'seen-filter snapshot failed'));
  }, SNAPSHOT_INTERVAL_MS);
  timer.unref();
  return {
    seen,
    cache,
    hot: new MemoryHotCounters(hotRules(config)),
    ready: async () => ({}),
    close: async () => {
      clearInterval(timer);
      await seen.snapshot(snapshot);
    },
  };
}
