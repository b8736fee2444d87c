/**
 * Wiring of the discover feed (docs/discover.md), called by src/compose/open.ts: vector search (pgvector or in
 * process, chosen when warmed at open or on first use) → the PostgreSQL discover index → embeddings →
 * feed, over the seen filter, exclusions, trending source and feed metrics the app hands it (trending
 * is the hot ranking's top list, bridged in src/compose/bridges.ts: discover never imports hot).
 */
import type { Stores } from '../kernel/stores.js';
import type { Sql } from '../kernel/sql/sql.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import type { SeenFilter } from '../kernel/seen-filter.js';
import type { ExclusionSource } from '../kernel/exclusion-source.js';
import type { FeedMetrics } from '../kernel/observability.js';
import { PostgresSignalRetention } from './adapters/postgres-signal-retention.js';
import type { RetentionTask } from '../kernel/sql/retention.js';
import { PostgresDiscoverIndex } from './adapters/postgres-discover-index.js';
import { LazyVectorSearch, chooseVectorSearch, type VectorSearchSettings } from './adapters/choose-search.js';
import type { SharedIndex } from './adapters/in-process-search.js';
import { PromDiscoverMetrics } from './adapters/prometheus-discover-metrics.js';
import type { VectorSearch } from './vector-search.js';
import { DiscoverPoolCache } from './pool-cache.js';
import { CursorCodec } from './cursor.js';
import { DiscoverEmbeddings } from './embeddings.js';
import { DiscoverExplain } from './explain.js';
import {
  DiscoverFeed,
  type DiscoverFeedSettings,
  type DiscoverReRank,
  type SimilarSource,
  type TrendingSource,
} from './service.js';

/** Settings of the discover feed (`FRESHET_EMBEDDING_DIM`, `FRESHET_DISCOVER_*`); durations in ms. */
export interface DiscoverSettings {
  /** Embedding dimension (`FRESHET_EMBEDDING_DIM`). */
  dim: number;
  /** Initial over-fetch factor of each phase (the discover design: 3) and its adaptive cap. */
  overFetch: number;
  overFetchCap: number;
  /** Candidates one phase-2 search adds to a session's pool. */
  pool: number;
  /** Vector index (src/discover/adapters/choose-search.ts): `auto`, `pgvector` or `memory`. */
  index: 'auto' | 'pgvector' | 'memory';
  /** In-process index: exact scan up to this many embeddings, HNSW above. */
  exactMax: number;
  /** HNSW links per node, candidate lists while building and searching (usearch and pgvector). */
  hnswM: number;
  hnswEfConstruction: number;
  hnswEfSearch: number;
  /** In-process index: time between two catch-ups with PostgreSQL. */
  syncMs: number;
  /**
   * In-process index: what the host's processes share of it (`FRESHET_DISCOVER_SHARED_INDEX`: `graph`,
   * `all` or `off`; adapters/in-process-search.ts, adapters/viewed-vector-index.ts).
   */
  sharedIndex: SharedIndex;
  /** Half-life of a view's weight in the reader embedding. */
  halfLifeMs: number;
  /** Most recent signals (views, engagements) a reader embedding is built from. */
  signalLimit: number;
  /** Reader signals older than this are deleted unless among their reader's newest `signalLimit`; 0 = kept for ever. */
  signalRetentionMs: number;
  cursorTtlMs: number;
  /** How deep into the trending list phase 1 looks for its every-5th-slot items. */
  trendingDepth: number;
  /** Phase-2 candidates below this cosine are not served. */
  minSimilarity: number;
  /** Learned candidates a session's phase 2 starts with (`FRESHET_DISCOVER_LEARNED`; 0: none). */
  learnedPool: number;
}

/** Trending items in every Nth slot of phase 1 (the discover design: every 5th). */
export const TRENDING_EVERY = 5;
/** Most rows one phase fetches per round, however far the adaptive over-fetch grows. */
export const MAX_FETCH_ROWS = 1000;
/**
 * In-process index: longest a search waits for a catch-up it asked for (its last one older than
 * `FRESHET_DISCOVER_SYNC_MS`, the timer behind) before answering from the index as it is, ms.
 */
export const SYNC_WAIT_MS = 50;

/** The discover feed, its embeddings service and its vector search. */
export interface Discover {
  feed: DiscoverFeed;
  embeddings: DiscoverEmbeddings;
  vectors: VectorSearch;
  /** The explain API's discover part (explain.ts): the feed itself over read-only ports. */
  explain: DiscoverExplain;
  /**
   * Starts the vector index in the background (the app calls it at open), so phase 2 does not wait
   * for it in a request: until it is ready, pages defer phase 2 (service.ts). Also sweeps, in the
   * background, embedding rows whose item does not exist. Resolves at once, after
   * one catalogue query when `FRESHET_DISCOVER_INDEX=pgvector`.
   * @throws FreshetError `STORE_UNAVAILABLE` when `FRESHET_DISCOVER_INDEX=pgvector` and the database has
   *   no pgvector 0.8 or later (the message says what to do).
   */
  warm(): Promise<void>;
  /** Stops the vector index's background work and snapshots it (call before closing the `Sql`). */
  close(): Promise<void>;
}

/** In-process index: fewest embeddings worth a snapshot on disk, and least time between two. */
const SNAPSHOT_MIN = 10_000;
const SNAPSHOT_EVERY_MS = 10 * 60_000;

/** The vector-search settings of the configuration. */
export function vectorSearchSettings(d: DiscoverSettings, dataDir: string): VectorSearchSettings {
  return {
    choice: d.index,
    memory: {
      exactMax: d.exactMax,
      connectivity: d.hnswM,
      expansionAdd: d.hnswEfConstruction,
      expansionSearch: d.hnswEfSearch,
      syncMs: d.syncMs,
      syncWaitMs: SYNC_WAIT_MS,
      dataDir,
      snapshotMin: SNAPSHOT_MIN,
      snapshotEveryMs: SNAPSHOT_EVERY_MS,
      shared: d.sharedIndex,
    },
    pgvector: { m: d.hnswM, efConstruction: d.hnswEfConstruction, efSearch: d.hnswEfSearch },
  };
}

/**
 * The embeddings service over a discover index, with the configured settings. Without `index`: one
 * whose vector search is never started unless searched (writers such as `freshet import`).
 */
export function discoverEmbeddings(
  d: DiscoverSettings,
  sql: Sql,
  dataDir: string,
  index = new PostgresDiscoverIndex(sql, new LazyVectorSearch(sql, d.dim, vectorSearchSettings(d, dataDir))),
): DiscoverEmbeddings {
  return new DiscoverEmbeddings(index, { dim: d.dim, halfLifeMs: d.halfLifeMs, signalLimit: d.signalLimit });
}

/**
 * The retention of the reader signals (docs/operations.md "Retention"): rows older than
 * `signalRetentionMs` go unless among their reader's newest `signalLimit`. Run by the app's maintenance
 * worker on `sql` (the background connection).
 */
export function signalRetention(d: DiscoverSettings, sql: Sql): RetentionTask {
  return new PostgresSignalRetention(sql, { keep: d.signalLimit, retentionMs: d.signalRetentionMs });
}

/** The feed's tunables from the discover settings. */
function feedSettingsOf(d: DiscoverSettings): DiscoverFeedSettings {
  return {
    overFetch: d.overFetch,
    overFetchCap: d.overFetchCap,
    trendingEvery: TRENDING_EVERY,
    trendingDepth: d.trendingDepth,
    pool: d.pool,
    minSimilarity: d.minSimilarity,
    maxFetch: MAX_FETCH_ROWS,
    learnedPool: d.learnedPool,
  };
}

/** Wires the discover feed. `secret` signs cursors (FRESHET_SECRET). */
export function wireDiscover(
  d: DiscoverSettings,
  stores: Stores,
  deps: {
    content: ContentStore;
    trending: TrendingSource;
    seen: SeenFilter;
    exclusions: ExclusionSource;
    metrics: FeedMetrics;
    secret: string;
    /** The learned part of phase 2 (bridged from the learning room); absent: the vector search alone. */
    similar?: SimilarSource;
    /** The library's re-rank hook. */
    rerank?: DiscoverReRank;
  },
): Discover {
  const sqlJobs = stores.sqlJobs ?? stores.sql;
  const settings = vectorSearchSettings(d, stores.dataDir);
  const vectors = new LazyVectorSearch(sqlJobs, d.dim, settings, stores.log);
  const index = new PostgresDiscoverIndex(stores.sql, vectors);
  const embeddings = discoverEmbeddings(d, stores.sql, stores.dataDir, index);
  const feedDeps = {
    index,
    embeddings,
    content: deps.content,
    seen: deps.seen,
    exclusions: deps.exclusions,
    trending: deps.trending,
    cursors: new CursorCodec(deps.secret, d.cursorTtlMs),
    log: stores.log,
    metrics: new PromDiscoverMetrics(
      stores.registry,
      deps.metrics,
      () => vectors.isReady(),
      () => vectors.stats(),
    ),
    pool: new DiscoverPoolCache(),
    similar: d.learnedPool > 0 ? deps.similar : undefined,
    rerank: deps.rerank,
  };
  const feedSettings = feedSettingsOf(d);
  const feed = new DiscoverFeed(feedDeps, feedSettings);
  const explain = new DiscoverExplain(feedDeps, feedSettings);
  const warm = async () => {
    if (d.index === 'pgvector') await chooseVectorSearch(sqlJobs, d.dim, settings, stores.log);
    vectors.warm();
    // vectors orphaned by crashes of versions that wrote them apart from their items: swept in the background
    void embeddings.sweepOrphans().then(
      (n) => n > 0 && stores.log.info({ swept: n }, 'deleted embedding rows whose item does not exist'),
      (err: unknown) => stores.log.warn({ err }, 'the sweep of orphan embeddings failed; the next start retries'),
    );
  };
  return { feed, embeddings, vectors, explain, warm, close: () => vectors.close() };
}
