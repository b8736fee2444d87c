/**
 * Wiring of the for-you feed (docs/for-you.md), called by src/compose/open.ts: the recall over PostgreSQL, the
 * shared fill pool (rebuilt per interval, fill-pool.ts), the
 * per-reader page cache and refresh lease (Redis when configured, else in process) and the feed service,
 * over the seen filter, exclusions and metrics the app hands it.
 */
import type { Stores } from '../kernel/stores.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import type { SeenFilter } from '../kernel/seen-filter.js';
import type { ExclusionSource } from '../kernel/exclusion-source.js';
import type { FeedMetrics } from '../kernel/observability.js';
import type { GaussDecay } from './decay.js';
import type { FeedCache } from './feed-cache.js';
import type { CandidateRecall } from './recall.js';
import { PostgresRecall } from './adapters/postgres-recall.js';
import { MemoryFeedCache } from './adapters/memory-feed-cache.js';
import { RedisFeedCache } from './adapters/redis-feed-cache.js';
import { ForYouFeed } from './service.js';
import { FillPool, type PopularitySource } from './fill-pool.js';
import type { RecallSource, ReRank } from './sources.js';
import { ForYouExplain } from './explain.js';

/** Settings of the for-you feed (`FRESHET_RECALL_LIMIT`, `FRESHET_DECAY*`, `FRESHET_FEED_CACHE_TTL_S`, `FRESHET_FOR_YOU_*`); durations in ms. */
export interface ForYouSettings {
  recall: {
    /** Candidates recalled per refresh (N; the for-you design: 500). */
    limit: number;
    decay: GaussDecay;
    /** Decay factor below which an item is not a candidate. */
    floor: number;
    /** The age beyond which the factor is below `floor` (see `gaussHorizonMs`). */
    horizonMs: number;
  };
  /** Lifetime of a reader's page cache (the for-you design: 30 minutes). */
  cacheTtlMs: number;
  /** The shared fill pool (`FRESHET_FOR_YOU_POOL_SIZE`, `FRESHET_FOR_YOU_POOL_INTERVAL_S`). */
  pool: { size: number; intervalMs: number };
  /** Lifetime of a reader's recall cursor (the seen window, `FRESHET_SEEN_DAYS`). */
  cursorTtlMs: number;
  /**
   * `per_reader`: items older than the decay window are also checked against the discover design's per-reader
   * filter, and every delivered item is marked in it (`FRESHET_FOR_YOU_OLD_SEEN`; docs/for-you.md).
   * Ignored when the feed's own seen filter is already the per-reader one.
   */
  olderSeen: 'per_reader' | 'off';
  /** Where interest matches come from (`FRESHET_FOR_YOU_INTERESTS`): the shared pool, or the GIN index. */
  interests: 'pool' | 'index';
}

/** How long a refresh may hold the reader's lease before it lapses by itself (ms). */
export const REFRESH_LEASE_MS = 5_000;
/** Poll interval of a request waiting for another refresh of the same reader (ms). */
export const REFRESH_LEASE_POLL_MS = 5;

/** The for-you feed of one instance. */
export interface ForYou {
  feed: ForYouFeed;
  recall: CandidateRecall;
  /** The shared fill pool: the use cases invalidate it on publish and delete. */
  pool: FillPool;
  cache: FeedCache;
  /** The explain API's for-you part (explain.ts): reads the same ports, writes nothing. */
  explain: ForYouExplain;
}

/** Wires the for-you feed over the stores. */
export function wireForYou(
  s: ForYouSettings,
  stores: Stores,
  deps: {
    content: ContentStore;
    seen: SeenFilter;
    olderSeen?: SeenFilter;
    exclusions: ExclusionSource;
    metrics: FeedMetrics;
    /** The engine's own popularity for the fill pool (bridged from the learning room); absent: the prior alone. */
    popularity?: PopularitySource;
    /** Extra recall sources, fused and walked first (sources.ts). */
    sources?: readonly RecallSource[];
    /** The library's re-rank hook. */
    rerank?: ReRank;
  },
): ForYou {
  const recall = new PostgresRecall(stores.sql);
  const pool = new FillPool(
    recall,
    { ...s.pool, decay: s.recall.decay, horizonMs: s.recall.horizonMs },
    stores.clock,
    (err) => stores.log.warn({ err }, 'for-you fill pool rebuild failed'),
    deps.popularity ?? null,
  );
  const olderSeen = s.olderSeen === 'per_reader' && deps.olderSeen !== deps.seen ? deps.olderSeen : undefined;
  const cache: FeedCache = stores.redis
    ? new RedisFeedCache(stores.redis.redis, stores.redis.keys)
    : new MemoryFeedCache(stores.clock);
  const recallSettings = { limit: s.recall.limit, decay: s.recall.decay, horizonMs: s.recall.horizonMs };
  const explain = new ForYouExplain(
    { ...deps, olderSeen, recall, pool, cache, log: stores.log },
    { recall: recallSettings, interests: s.interests },
  );
  const feed = new ForYouFeed(
    { ...deps, olderSeen, recall, pool, cache, log: stores.log },
    {
      recall: recallSettings,
      cacheTtlMs: s.cacheTtlMs,
      cursorTtlMs: s.cursorTtlMs,
      interests: s.interests,
      leaseMs: REFRESH_LEASE_MS,
      leasePollMs: REFRESH_LEASE_POLL_MS,
    },
  );
  return { feed, recall, pool, cache, explain };
}
