import { pino, type Logger as Pino } from 'pino';
import { ensureSecrets, loadConfig, type Config } from './config.js';
import { systemClock, type Clock } from '../kernel/clock.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import type { SeenFilter } from '../kernel/seen-filter.js';
import type { ReaderSeenFilter } from '../kernel/reader-seen-filter.js';
import { PromMetrics } from '../observe/metrics.js';
import type { Sql } from '../kernel/sql/sql.js';
import { wireContent } from '../content/wire.js';
import { TokenVerifier } from '../kernel/http/tokens.js';
import type { RedisHandle, Stores } from '../kernel/stores.js';
import { wireSeen } from '../seen/wire.js';
import type { SeenCheckpointer } from '../seen/seen-checkpointer.js';
import type { CandidateRecall } from '../for-you/recall.js';
import type { FeedCache } from '../for-you/feed-cache.js';
import type { ForYouFeed } from '../for-you/service.js';
import { wireForYou } from '../for-you/wire.js';
import type { FillPool } from '../for-you/fill-pool.js';
import type { HotRanking } from '../hot/service.js';
import type { HotMaintenance } from '../hot/maintenance.js';
import type { HotCounters } from '../hot/hot-counters.js';
import type { HotArchive } from '../hot/hot-archive.js';
import { wireHot } from '../hot/wire.js';
import { followingUpkeep, wireFollowing, type Following } from '../following/wire.js';
import type { Exclusions } from '../exclusions/service.js';
import { exclusionRetention, wireExclusions } from '../exclusions/wire.js';
import { signalRetention, wireDiscover, type Discover } from '../discover/wire.js';
import { RetentionSweeper } from '../use-cases/retention.js';
import { enginePopularity, hotTrending, learnedSimilar, learnedSource, learnedTrending } from './bridges.js';
import { learnRetention, wireLearn, type Learn } from '../learn/wire.js';
import type { RecallSource, ReRank } from '../for-you/sources.js';
import type { DiscoverReRank } from '../discover/service.js';
import { migrate } from './migrations.js';
import { UseCases } from '../use-cases/verbs.js';
import type { PersonalDataDeps } from '../use-cases/personal-data.js';
import { notificationRetention, wireNotifications, type WiredNotifications } from '../notifications/wire.js';
import { wireAnnouncements } from '../use-cases/announcements.js';
import { wireOverview, type VerbObserver } from '../observe/overview-metrics.js';
import type { ActiveReaders } from '../observe/active-readers.js';
import { wireExplain, type ExplainQuery } from '../use-cases/explain.js';
import { openRedis, openSqlPair, probeStores } from './open-stores.js';

export { REDIS_OUTAGE_LOG_MS, openRedis, openSql } from './open-stores.js';
import type { Explanation } from '../kernel/explain.js';

/** A wired Freshet instance: what the HTTP app, the CLI and library users call. */
export interface Freshet {
  config: Config;
  clock: Clock;
  log: Pino;
  /** The verbs that span capabilities (publish, delete, views, follow/block, engagements, feedback). */
  useCases: UseCases;
  content: ContentStore;
  /** The for-you feed's candidate recall (docs/for-you.md) over the content store's items. */
  recall: CandidateRecall;
  /** The for-you design's rolling seen filters. */
  seen: SeenFilter;
  /** The for-you page cache. */
  cache: FeedCache;
  forYou: ForYouFeed;
  /** The for-you feed's shared fill pool (rebuilt per interval; invalidated on publish and delete). */
  forYouPool: FillPool;
  /** The hot ranking (docs/hot.md): views, the cached ranking; and its maintenance tasks. */
  hot: HotRanking;
  hotMaintenance: HotMaintenance;
  hotCounters: HotCounters;
  hotArchive: HotArchive;
  tokens: TokenVerifier;
  metrics: PromMetrics;
  /** The configured Redis (null: the embedded default's in-process stores); the HTTP edge's rate counts live there. */
  redis: RedisHandle | null;
  /**
   * The explain API (docs/explain.md): why an item would or would not be in a reader's feed now — every
   * rule that removes it, its score and rank. Writes nothing.
   * @throws FreshetError `INVALID_INPUT` (unknown feed), `INVALID_ID`, `NOT_FOUND` (unknown item).
   */
  explain(q: ExplainQuery): Promise<Explanation>;
  /** The following timeline (docs/following.md): graph, timeline store, fan-out queue and worker. */
  following: Following;
  /** The exclusions (docs/exclusions.md), one service for every feed (docs/exclusions.md). */
  exclusions: Exclusions;
  /** The discover design's per-reader scalable seen filter (used by the feeds whose strategy is `per_reader`). */
  readerSeen: ReaderSeenFilter;
  /** The seen filters' PostgreSQL checkpoints (null: embedded default, or checkpoints off); `checkpoint()` runs one now. */
  seenCheckpointer: SeenCheckpointer | null;
  /** The discover feed (docs/discover.md) and its embeddings. */
  discover: Discover;
  /** The grouped notifications and their read markers (docs/notifications.md). */
  notifications: WiredNotifications;
  /** Readers active in the last hour and day (src/observe/active-readers.ts); the HTTP edge marks feed readers. */
  activeReaders: ActiveReaders;
  /** The retention sweeps of the tables that grow with readers × time (docs/operations.md "Retention"). */
  retention: RetentionSweeper;
  /** The learning room: interactions, co-engagement neighbours, popularity, the factor model (docs/learning.md). */
  learn: Learn;
  /**
   * Starts the background workers (hot rescoring, checkpoints, snapshot refresh, retention sweeps);
   * `close` stops them. `maintenance: false` (a `serve --workers N` worker other than the first) starts
   * only the per-process ones (the hot snapshot refresh).
   */
  startWorkers(opts?: { maintenance?: boolean }): void;
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
  /** The store of background and long work beside `sql` (default: `sql`). Closed with the instance only when opened here. */
  sqlJobs?: Sql;
  /** Restore lost hot-counter shards from the checkpoints while opening (default true). */
  recoverHot?: boolean;
  /**
   * Start the discover feed's vector index at open, in the background (default true: a serving
   * process). Bulk writers that serve no feed pass false: `freshet import` and `freshet discover embed`
   * would otherwise read every embedding and index each one they write.
   */
  warmDiscover?: boolean;
  /**
   * Ranking hooks (docs/library.md "Ranking hooks"): extra recall sources of the for-you feed (fused with
   * the learned recall and walked first) and a re-rank function per feed (clean candidates in, their
   * order out, before the page is marked seen).
   */
  ranking?: {
    forYou?: { sources?: readonly RecallSource[]; rerank?: ReRank };
    discover?: { rerank?: DiscoverReRank };
  };
}

/**
 * What a library user passes to {@link openFreshet} instead of a full {@link Config}: where the stores
 * are (nothing → the embedded default in `dataDir`) and, in `env`, any other `FRESHET_*` setting of
 * docs/operations.md. Secrets missing from both are generated into `<dataDir>/secrets.json`.
 */
export interface FreshetOptions {
  /** The embedded data folder (PGlite, snapshots, secrets); default `./.freshet`. */
  dataDir?: string;
  /** A PostgreSQL URL; absent → PGlite in `<dataDir>/pgdata`. */
  databaseUrl?: string;
  /** A Redis URL; absent (and no `FRESHET_REDIS_CLUSTER_NODES` in `env`) → in-process stores. */
  redisUrl?: string;
  /** The service key and the reader-token secret (≥ 16 characters each). */
  serviceKey?: string;
  secret?: string;
  /** Any other setting, by its environment variable name (e.g. `{ FRESHET_RECALL_LIMIT: '300' }`). */
  env?: Record<string, string>;
}

/**
 * The configuration of library options: `env` with the named fields on top, checked like the
 * environment of `freshet serve`, with secrets filled in.
 * @throws Error listing every invalid setting.
 */
export function configFromOptions(o: FreshetOptions = {}): Config {
  const env: Record<string, string> = { LOG_LEVEL: 'warn', ...o.env };
  if (o.dataDir) env.FRESHET_DATA_DIR = o.dataDir;
  if (o.databaseUrl) env.FRESHET_DATABASE_URL = o.databaseUrl;
  if (o.redisUrl) env.FRESHET_REDIS_URL = o.redisUrl;
  if (o.serviceKey) env.FRESHET_SERVICE_KEY = o.serviceKey;
  if (o.secret) env.FRESHET_SECRET = o.secret;
  return ensureSecrets(loadConfig(env)).config;
}

/**
 * Opens every store and wires the capabilities and the use cases. Pass a {@link Config} (what the CLI
 * builds from the environment) or {@link FreshetOptions} (library use; nothing → the embedded default
 * in `./.freshet`). Call `close()` when done.
 * @throws Error for an invalid setting, a configuration without a service key or secret (call
 *   `ensureSecrets` first), or a store that cannot be reached.
 */
export async function openFreshet(
  configOrOptions: Config | FreshetOptions = {},
  opts: OpenOptions = {},
): Promise<Freshet> {
  const config = 'forYou' in configOrOptions ? configOrOptions : configFromOptions(configOrOptions);
  if (!config.serviceKey || !config.secret)
    throw new Error('service key and secret must be configured (ensureSecrets)');
  const log = opts.log ?? pino({ level: config.logLevel });
  const clock = opts.clock ?? systemClock;
  const metrics = new PromMetrics({ defaultMetrics: opts.defaultMetrics });
  const { sql, sqlJobs } = opts.sql ? { sql: opts.sql, sqlJobs: opts.sqlJobs ?? opts.sql } : await openSqlPair(config);
  if (opts.sql) await migrate(sqlJobs);
  const redis = openRedis(config, log);
  const stores: Stores = { sql, sqlJobs, redis, dataDir: config.dataDir, log, registry: metrics.registry, clock };
  const c = await wireCapabilities(config, stores, metrics, opts);
  const { seen, forYou, following, discover, notifications } = c;
  const retention = retentionOf(config, sqlJobs, stores);
  const overview = wireOverview(stores, {
    seenFill: (nowMs) => seen.dayFill(nowMs),
    maxAgeMs: config.metricsStoreReadMs,
    published: (n) => metrics.published(n),
  });
  const useCases = useCasesOf(config, stores, c, {
    ...overview.observe,
    clicked: (feed, n) => metrics.clicks(feed, n),
    engaged: (feed, kind) => metrics.engaged(feed, kind),
  });
  const announcements = wireAnnouncements(stores, following, notifications, () => clock.now(), log);
  // other processes' writes reach this one's fill pool too (at once, not at the next rebuild)
  c.changes.subscribe({ changed: (written, deleted) => forYou.pool.invalidate(written, deleted), reset: () => {} });
  const tokens = new TokenVerifier(config.serviceKey, config.secret, undefined, undefined, config.tokenMaxTtlS);
  const held = { sql, sqlJobs, redis, metrics, tokens, clock, log, ownJobs: !opts.sql };
  const freshet = instanceOf(config, held, c, {
    useCases,
    overview,
    retention,
    announcements,
  });
  // the vector index starts in the background; FRESHET_DISCOVER_INDEX=pgvector without pgvector fails here
  if (opts.warmDiscover !== false) {
    await discover.warm().catch(async (err: unknown) => {
      await freshet.close().catch(() => undefined);
      throw err;
    });
  }
  return freshet;
}

/** What an instance holds beside its capabilities: the stores it closes, and the edges' pieces. */
interface Held {
  sql: Sql;
  sqlJobs: Sql;
  redis: RedisHandle | null;
  metrics: PromMetrics;
  tokens: TokenVerifier;
  clock: Clock;
  log: Pino;
  /** Whether the jobs' SQL store was opened here (closed with the instance). */
  ownJobs: boolean;
}

/** The {@link Freshet} of wired capabilities: what it exposes, its workers and its close. */
function instanceOf(
  config: Config,
  s: Held,
  c: Capabilities,
  edges: {
    useCases: UseCases;
    overview: ReturnType<typeof wireOverview>;
    retention: RetentionSweeper;
    announcements: { close(): Promise<void> };
  },
): Freshet {
  const { content, seen, exclusions, learn, forYou, hot, following, discover, notifications } = c;
  const { clock, log } = s;
  const { useCases, overview, retention, announcements } = edges;
  let retentionWorker: { stop(): Promise<void> } | undefined;
  let closed: Promise<void> | undefined;
  return {
    config,
    clock,
    log,
    useCases,
    content,
    recall: forYou.recall,
    seen: seen.rolling,
    cache: forYou.cache,
    forYou: forYou.feed,
    forYouPool: forYou.pool,
    hot: hot.ranking,
    hotMaintenance: hot.maintenance,
    hotCounters: hot.counters,
    hotArchive: hot.archive,
    tokens: s.tokens,
    redis: s.redis,
    metrics: s.metrics,
    following,
    explain: wireExplain({ forYou, hot, discover, following, content, exclusions }, () => clock.now()),
    exclusions,
    readerSeen: seen.readerSeen,
    seenCheckpointer: seen.checkpointer,
    discover,
    notifications,
    activeReaders: overview.active,
    retention,
    learn,
    startWorkers: (opts) => {
      hot.startWorkers(opts);
      if (opts?.maintenance === false) return;
      retentionWorker ??= retention.start(clock, config.retentionSweepMs);
      learn.startWorkers();
    },
    ready: () => probeStores(s.sql, s.redis, config.deadlines.redisMs),
    close: () =>
      (closed ??= (async () => {
        await retentionWorker?.stop();
        await learn.close(); // stops the builder's ticks and the training
        await announcements.close();
        await closeAll(c, s, s.ownJobs);
      })()),
  };
}

/** The capabilities of one instance, wired over its stores. */
type Capabilities = Awaited<ReturnType<typeof wireCapabilities>>;

/** Wires every capability over the stores, in the order their dependencies need. */
async function wireCapabilities(config: Config, stores: Stores, metrics: PromMetrics, opts: OpenOptions) {
  const { content, changes, close: closeContent } = wireContent(config.itemCache, stores, metrics);
  const seen = await wireSeen(config.seen, config.readerSeen, stores);
  const exclusions = wireExclusions(config.exclusions, stores);
  const learn = wireLearn(config.learn, stores);
  const forYou = wireForYou(config.forYou, stores, {
    content,
    seen: seen.seenFor(config.seenStrategy.forYou),
    olderSeen: seen.readerSeen,
    exclusions,
    metrics,
    popularity: enginePopularity(learn, config.learn.builder.popularityHalfLifeMs),
    sources: [learnedSource(learn, content), ...(opts.ranking?.forYou?.sources ?? [])],
    rerank: opts.ranking?.forYou?.rerank,
  });
  const hot = await wireHot(config.hot, stores, content, opts.recoverHot !== false);
  const following = wireFollowing(config.following, stores, {}, exclusions);
  const discover = wireDiscover(config.discover, stores, {
    content,
    trending: learnedTrending(learn, content, hotTrending(hot.ranking)),
    seen: seen.seenFor(config.seenStrategy.discover),
    exclusions,
    metrics,
    secret: config.secret!, // checked by openFreshet
    similar: learnedSimilar(learn, content),
    rerank: opts.ranking?.discover?.rerank,
  });
  const notifications = wireNotifications(config.notifications, stores, {
    exclusions,
    liveItems: async (ids) => new Set((await content.getItems(ids)).map((i) => i.id)),
  });
  return { content, changes, closeContent, seen, exclusions, learn, forYou, hot, following, discover, notifications };
}

/** The retention sweeps of every table that grows with readers × time (docs/operations.md "Retention"). */
function retentionOf(config: Config, sqlJobs: Sql, stores: Stores): RetentionSweeper {
  return new RetentionSweeper(
    [
      signalRetention(config.discover, sqlJobs),
      ...exclusionRetention(config.exclusions, sqlJobs, config.discover.signalLimit),
      followingUpkeep(sqlJobs),
      notificationRetention(config.notifications, sqlJobs),
      learnRetention(config.learn, sqlJobs),
    ],
    stores.log,
    stores.registry,
  );
}

/** The cross-capability verbs, with every room's part of an erase or an export. */
function useCasesOf(config: Config, stores: Stores, c: Capabilities, observe: VerbObserver): UseCases {
  const { content, following, exclusions, notifications, seen, forYou, discover, hot, learn } = c;
  const { redis, log } = stores;
  // every room's part of an erase or an export; the reader's preferences come from the use cases below
  const personal: PersonalDataDeps = {
    content,
    graph: following.graph,
    timeline: following.timeline,
    exclusions,
    notifications,
    readerSeen: seen.readerSeen,
    forYouCache: forYou.cache,
    forYouPool: forYou.pool,
    embeddings: discover.embeddings,
    learn: {
      eraseReader: (id) => learn.interactions.eraseReader(id),
      eraseItems: (ids) => learn.models.eraseItems(ids),
      exportReader: (id, limit) => learn.interactions.exportReader(id, limit),
    },
    hotCounters: hot.counters,
    hot: hot.ranking,
    preferences: (readerId, nowMs) => useCases.preferences(readerId, nowMs),
    forgetCaller: async (userId) =>
      redis
        ? await redis.redis.del(
            redis.keys.edgeRate({ readerId: userId }),
            redis.keys.edgeRate({ readerId: userId }, 'other'),
          )
        : 0,
    log,
  };
  const useCases: UseCases = new UseCases({
    content,
    personal,
    notifications: notifications.notifications,
    hot: hot.ranking,
    embeddings: discover.embeddings,
    timeline: following.timeline,
    exclusions,
    log,
    clock: stores.clock,
    futureSkewMs: config.futureSkewMs,
    itemsChanged: (published, deleted) => forYou.pool.invalidate(published, deleted),
    observe,
    learn: learn.interactions,
  });
  return useCases;
}

/** Closes the capabilities and then the stores, in order (`ownJobs`: the jobs' SQL store was opened here). */
async function closeAll(
  c: Capabilities,
  stores: { sql: Sql; sqlJobs: Sql; redis: RedisHandle | null },
  ownJobs: boolean,
): Promise<void> {
  await c.notifications.close();
  await c.hot.close(); // the final checkpoint: nothing counted is lost on a graceful shutdown
  await c.following.close();
  await c.discover.close(); // stops the vector index's background work and snapshots it
  await c.seen.close();
  await c.closeContent();
  const { redis, sql, sqlJobs } = stores;
  redis?.redis.disconnect();
  if (redis?.jobs && redis.jobs !== redis.redis) redis.jobs.disconnect();
  await sql.close();
  if (ownJobs && sqlJobs !== sql) await sqlJobs.close();
}
