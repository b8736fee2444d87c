/**
 * The gauges of the explorer's Overview page that are read from the stores when `/metrics` is scraped
 * (docs/operations.md "Health, readiness and metrics"):
 *
 * - `freshet_catalog_items` — live items (src/content/catalog-size.ts: an exact count up to 1 M items,
 *   PostgreSQL's estimate above);
 * - `freshet_readers_active{window="1h"|"24h"}` — distinct readers that read a feed or recorded a view
 *   (src/observe/active-readers.ts, HyperLogLog: ±0.81 %);
 * - `freshet_seen_filter_fill_ratio` and `freshet_seen_filter_false_positive_rate` — today's filter of the
 *   rolling window: bits set / bits, and the mean of fill^k over its shards (src/seen/day-fill.ts);
 * - `freshet_redis_used_memory_bytes` — `INFO memory`'s `used_memory` (summed over a Cluster's masters;
 *   absent on the embedded default);
 * - `freshet_database_size_bytes{engine="postgres"|"pglite"}` — `pg_database_size(current_database())`
 *   (the whole database, not only Freshet's schema; on the embedded default, PGlite's in-process database).
 *
 * Each is a {@link CachedReading}: read at most once per `FRESHET_METRICS_STORE_READ_S` (10 s), and a
 * scrape waits at most {@link STORE_READ_WAIT_MS} for it (the readings run at once), so a stalled store
 * costs `/metrics` ~1 s and reports its last value (none before the first success). A gauge with no
 * value yet has no sample.
 */
import { Cluster } from 'ioredis';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import { CachedReading } from '../kernel/cached-reading.js';
import type { Clock } from '../kernel/clock.js';
import type { RedisClient } from '../kernel/redis/client.js';
import type { Sql } from '../kernel/sql/sql.js';
import { catalogSize } from '../content/catalog-size.js';
import type { DayFill } from '../seen/day-fill.js';
import { MemoryActiveReaders, RedisActiveReaders, type ActiveReaders } from './active-readers.js';
import type { Stores } from '../kernel/stores.js';

/**
 * What the verbs tell the Overview's metrics (src/use-cases/verbs.ts `UseCaseDeps.observe`): new items
 * published, and a reader active (a view's visitor) at `nowMs`, the clock's time. Declared here, below
 * the verbs, so the observation room imports no use case.
 */
export interface VerbObserver {
  published(newItems: number): void;
  active(readerId: string, nowMs: number): void;
  /** Counted views the client attributed to a feed (its clicks; src/observe/metrics.ts). */
  clicked?(feed: string, n: number): void;
  /** An engagement the client attributed to a feed. */
  engaged?(feed: string, kind: string): void;
}

/** Longest a scrape waits for one store reading (ms). */
export const STORE_READ_WAIT_MS = 1_000;

/** What the gauges read. */
export interface OverviewSources {
  registry: Registry;
  clock: Clock;
  log: Logger;
  /** The request-path SQL store. */
  sql: Sql;
  /** The configured Redis (null: the embedded default). */
  redis: RedisClient | null;
  active: ActiveReaders;
  /** Today's fill of the rolling seen filter (src/seen/wire.ts). */
  seenFill(nowMs: number): Promise<DayFill>;
  /** `FRESHET_METRICS_STORE_READ_S` in ms. */
  maxAgeMs: number;
}

/** `used_memory` of one Redis server's `INFO memory` reply (bytes). */
function usedMemory(info: string): number {
  const m = /^used_memory:(\d+)/m.exec(info);
  if (!m) throw new Error('INFO memory has no used_memory');
  return Number(m[1]);
}

/** `used_memory` of a standalone server, or the sum over a Cluster's masters (bytes). */
export async function redisMemory(redis: RedisClient): Promise<number> {
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const infos = await Promise.all(servers.map((s) => s.info('memory')));
  return infos.reduce((sum, info) => sum + usedMemory(info), 0);
}

/** One sample of a gauge: its labels (none for an unlabelled gauge) and value. */
type GaugeSample = { labels?: Record<string, string>; value: number };

/** A gauge whose samples `get` gives at scrape time (none while a reading has no value yet). */
function scrapeGauge(
  registry: Registry,
  name: string,
  help: string,
  labelNames: string[],
  get: () => Promise<GaugeSample[]>,
): void {
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      const samples = await get();
      this.reset();
      for (const x of samples) {
        if (x.labels) this.set(x.labels, x.value);
        else this.set(x.value);
      }
    },
  });
}

/** The samples of one unlabelled value (none when undefined). */
const one = (value: number | undefined): GaugeSample[] => (value === undefined ? [] : [{ value }]);

/**
 * Registers the gauges of the module doc in `s.registry`.
 * @returns nothing to close: the readings hold no timer.
 */
export function registerOverviewMetrics(s: OverviewSources): void {
  const reading = <T>(what: string, read: () => Promise<T>) =>
    new CachedReading(read, {
      maxAgeMs: s.maxAgeMs,
      waitMs: STORE_READ_WAIT_MS,
      onError: (err) => s.log.debug({ err, what }, 'metrics store reading failed (last value kept)'),
    });
  const catalog = reading('catalog size', () => catalogSize(s.sql));
  const active = reading('active readers', () => s.active.count(s.clock.now()));
  const fill = reading('seen-filter fill', () => s.seenFill(s.clock.now()));
  const dbSize = reading('database size', async () => {
    const rows = await s.sql.query<{ n: string | number }>(`SELECT pg_database_size(current_database()) AS n`);
    return Number(rows[0]?.n ?? 0);
  });
  const g = (name: string, help: string, labelNames: string[], get: () => Promise<GaugeSample[]>) =>
    scrapeGauge(s.registry, name, help, labelNames, get);
  g('freshet_catalog_items', 'Live (not deleted) items in the catalog', [], async () =>
    one((await catalog.get())?.items),
  );
  g(
    'freshet_readers_active',
    'Distinct readers that read a feed or recorded a view in the window (HyperLogLog estimate)',
    ['window'],
    async () => {
      const c = await active.get();
      return c
        ? [
            { labels: { window: '1h' }, value: c.hour },
            { labels: { window: '24h' }, value: c.day },
          ]
        : [];
    },
  );
  seenFillGauges(s.registry, fill);
  g('freshet_database_size_bytes', 'Size of the SQL database (pg_database_size)', ['engine'], async () => {
    const v = await dbSize.get();
    return v === undefined ? [] : [{ labels: { engine: s.sql.kind }, value: v }];
  });
  const redis = s.redis;
  if (redis) {
    const bytes = reading('redis memory', () => redisMemory(redis));
    g(
      'freshet_redis_used_memory_bytes',
      "Redis INFO memory's used_memory (summed over a Cluster's masters)",
      [],
      async () => one(await bytes.get()),
    );
  }
}

/** The gauges of today's rolling seen filter: the fraction of its bits set, and its estimated rate. */
function seenFillGauges(registry: Registry, fill: CachedReading<DayFill>): void {
  scrapeGauge(
    registry,
    'freshet_seen_filter_fill_ratio',
    "Fraction of the bits set in today's rolling seen filter (all shards)",
    [],
    async () => {
      const f = await fill.get();
      return one(f && f.bits > 0 ? f.bitsSet / f.bits : undefined);
    },
  );
  scrapeGauge(
    registry,
    'freshet_seen_filter_false_positive_rate',
    "Estimated false-positive rate of a check against today's rolling seen filter (mean of fill^k over its shards)",
    [],
    async () => one((await fill.get())?.falsePositiveRate),
  );
}

/**
 * The active-reader estimate of the configured stores (Redis when configured, else in process) with
 * the Overview's gauges registered, and what the use cases tell them (`published` counts new items).
 */
export function wireOverview(
  stores: Stores,
  o: Pick<OverviewSources, 'seenFill' | 'maxAgeMs'> & { published(n: number): void },
): { active: ActiveReaders; observe: VerbObserver } {
  const { redis, log } = stores;
  const active = redis
    ? new RedisActiveReaders(redis.redis, redis.keys, (err) => log.debug({ err }, 'active-reader mark failed'))
    : new MemoryActiveReaders();
  registerOverviewMetrics({ ...stores, ...o, redis: redis?.redis ?? null, active });
  return { active, observe: { published: (n) => o.published(n), active: (r, nowMs) => active.mark(r, nowMs) } };
}
