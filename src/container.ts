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

/** A wired Freshet instance: what the HTTP app and the CLI use. */
export interface Freshet {
  config: Config;
  clock: Clock;
  log: Pino;
  content: ContentStore & CandidateRecall;
  seen: SeenFilter;
  cache: FeedCache;
  forYou: ForYouFeed;
  tokens: TokenVerifier;
  metrics: PromMetrics;
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
  const forYou = new ForYouFeed(
    { content, recall: content, seen: stores.seen, cache: stores.cache, metrics, log },
    {
      recall: { limit: config.recall.limit, decay: config.recall.decay, horizonMs: config.recall.horizonMs },
      cacheTtlMs: config.feedCacheTtlMs,
      leaseMs: 5000,
      leasePollMs: 5,
    },
  );
  let closed: Promise<void> | undefined;
  return {
    config,
    clock,
    log,
    content,
    seen: stores.seen,
    cache: stores.cache,
    forYou,
    tokens: new TokenVerifier(config.serviceKey, config.secret),
    metrics,
    ready: async () => ({ postgres: await sql.query('SELECT 1').then(() => true, () => false), ...(await stores.ready()) }),
    close: () =>
      (closed ??= (async () => {
        await stores.close();
        await sql.close();
      })()),
  };
}

interface HotStores {
  seen: SeenFilter;
  cache: FeedCache;
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
    const keys = new Keys(config.keyPrefix, config.seen.shards);
    const seen = new RedisSeenFilter(redis, keys, geometry, { days: config.seen.days });
    const cache = new RedisFeedCache(redis, keys);
    return {
      seen,
      cache,
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
    ready: async () => ({}),
    close: async () => {
      clearInterval(timer);
      await seen.snapshot(snapshot);
    },
  };
}
