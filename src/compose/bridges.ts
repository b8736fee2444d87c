/**
 * Bridges: one capability's port implemented with another capability's service. Capabilities never
 * import one another (docs/architecture.md); the app composes them here.
 */
import { DEFAULT_RANGE, parseRange } from '../hot/domain.js';
import type { HotRanking } from '../hot/service.js';
import type { TrendingSource } from '../discover/service.js';

/** The discover feed's trending source: the hot ranking's cached top list over the hot-ranking design's default range (72 h). */
export function hotTrending(hot: HotRanking): TrendingSource {
  const rangeMs = parseRange(DEFAULT_RANGE)!;
  return {
    async trending(nowMs, limit) {
      if (limit <= 0) return [];
      const page = await hot.top(rangeMs, limit, nowMs);
      return page.entries.map((e) => ({ id: e.item.id, authorId: e.item.authorId }));
    },
  };
}
