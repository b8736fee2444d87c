/**
 * Wiring of the discover feed (note 3): config → PostgreSQL index → embeddings → feed, over the seen
 * filter and exclusions the container chose. Kept apart from container.ts so each stays small.
 */
import type { Config } from './config.js';
import { DEFAULT_RANGE, parseRange } from './domain/hot.js';
import type { ContentStore } from './ports/content-store.js';
import type { ExclusionSource } from './ports/exclusions.js';
import type { SeenFilter } from './ports/seen-filter.js';
import type { Logger } from './ports/observability.js';
import type { Sql } from './adapters/postgres/sql.js';
import { PostgresDiscoverIndex } from './adapters/postgres/discover-index.js';
import { DiscoverPoolCache } from './services/discover-pool-cache.js';
import { CursorCodec } from './services/discover-cursor.js';
import { DiscoverEmbeddings } from './services/discover-embeddings.js';
import { DiscoverFeed, type TrendingSource } from './services/discover-feed.js';
import type { HotRanking } from './services/hot-ranking.js';

/** The discover feed and its embeddings service. */
export interface Discover {
  feed: DiscoverFeed;
  embeddings: DiscoverEmbeddings;
}

/** The hot ranking's cached top list over note 2's default range (72 h) as the trending source. */
export function hotTrending(hot: HotRanking): TrendingSource {
  const rangeMs = parseRange(DEFAULT_RANGE)!;
  return {
    async trending(nowMs, limit) {
      if (limit <= 0) return [];
      const page = await hot.hot(rangeMs, limit, nowMs);
      return page.entries.map((e) => ({ id: e.item.id, authorId: e.item.authorId }));
    },
  };
}

/** The embeddings service over the PostgreSQL discover index, with the configured settings. */
export function discoverEmbeddings(config: Config, sql: Sql, index = new PostgresDiscoverIndex(sql)): DiscoverEmbeddings {
  const d = config.discover;
  return new DiscoverEmbeddings(index, { dim: d.dim, halfLifeMs: d.halfLifeMs, signalLimit: d.signalLimit, probes: d.probes, scanRows: d.scanRows });
}

/** Wires the discover feed. `secret` signs cursors (FRESHET_SECRET). */
export function wireDiscover(
  config: Config,
  deps: { sql: Sql; content: ContentStore; hot: HotRanking; seen: SeenFilter; exclusions: ExclusionSource; log: Logger; secret: string },
): Discover {
  const d = config.discover;
  const index = new PostgresDiscoverIndex(deps.sql);
  const embeddings = discoverEmbeddings(config, deps.sql, index);
  const feed = new DiscoverFeed(
    {
      index,
      embeddings,
      content: deps.content,
      seen: deps.seen,
      exclusions: deps.exclusions,
      trending: hotTrending(deps.hot),
      cursors: new CursorCodec(deps.secret, d.cursorTtlMs),
      log: deps.log,
      pool: new DiscoverPoolCache(),
    },
    { overFetch: d.overFetch, overFetchCap: d.overFetchCap, trendingEvery: 5, trendingDepth: d.trendingDepth, pool: d.pool, minSimilarity: d.minSimilarity, maxFetch: 1000 },
  );
  return { feed, embeddings };
}
