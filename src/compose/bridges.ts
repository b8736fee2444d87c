/**
 * Bridges: one capability's port implemented with another capability's service. Capabilities never
 * import one another (docs/architecture.md); the app composes them here.
 */
import { DEFAULT_RANGE, parseRange } from '../hot/domain.js';
import type { HotRanking } from '../hot/service.js';
import type { SimilarSource, TrendingSource } from '../discover/service.js';
import type { PopularitySource } from '../for-you/fill-pool.js';
import type { RecallSource } from '../for-you/sources.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import { popularityAt } from '../learn/popularity.js';
import type { Learn } from '../learn/wire.js';
import type { Recommendation } from '../learn/recall.js';

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

/**
 * The for-you feed's learned recall source: the learning room's recommendations (co-engagement
 * neighbours and the factor model, fused: src/learn/recall.ts), with their evidence for explain — the
 * neighbour and factor scores, and the reader's items that made it a neighbour, by title.
 */
export function learnedSource(learn: Pick<Learn, 'recall'>, content: Pick<ContentStore, 'getItems'>): RecallSource {
  return {
    name: 'learned',
    async candidates(q) {
      const recs = await learn.recall.recommend(q.readerId, q.limit);
      return recs.map((r) => ({ itemId: r.itemId, score: r.score, evidence: evidenceOf(r) }));
    },
    async explain(readerId, itemId, limit) {
      const recs = await learn.recall.recommend(readerId, limit);
      const r = recs.find((x) => x.itemId === itemId);
      if (!r) return null;
      const evidence = evidenceOf(r);
      if (r.because.length === 0) return evidence;
      const titles = new Map((await content.getItems(r.because.map((b) => b.itemId))).map((i) => [i.id, i.title]));
      const named = r.because.map((b) => `“${titles.get(b.itemId) ?? b.itemId}”`);
      const shared = r.because.map((b) => b.shared).join(', ');
      evidence.because = `readers who engaged with ${named.join(' and ')} also engaged with this (${shared} readers in common)`;
      return evidence;
    },
  };
}

/** The numbers of a recommendation explain shows (src/learn/recall.ts `Recommendation`). */
function evidenceOf(r: Recommendation): Record<string, number | string> {
  const e: Record<string, number | string> = { neighbour_score: r.neighbourScore };
  if (r.factorScore !== null) e.factor_score = r.factorScore;
  if (r.because.length > 0) e.because_items = r.because.map((b) => b.itemId).join(',');
  return e;
}

/**
 * The discover feed's learned phase-2 candidates: the same recommendations, live items published at or
 * before the session's start, each score divided by the best (in (0, 1]).
 */
export function learnedSimilar(learn: Pick<Learn, 'recall'>, content: Pick<ContentStore, 'getItems'>): SimilarSource {
  return {
    async similar(readerId, untilMs, limit) {
      const recs = await learn.recall.recommend(readerId, limit);
      if (recs.length === 0) return [];
      const score = new Map(recs.map((r) => [r.itemId, r.score / recs[0]!.score]));
      const items = await content.getItems(recs.map((r) => r.itemId));
      return items
        .filter((i) => i.publishedAt <= untilMs && i.authorId !== readerId)
        .map((i) => ({ id: i.id, authorId: i.authorId, score: score.get(i.id)! }));
    },
  };
}

/** The for-you fill pool's engine popularity: the learning room's decayed counts (src/learn/popularity.ts). */
export function enginePopularity(learn: Pick<Learn, 'models'>, halfLifeMs: number): PopularitySource {
  return {
    async top(nowMs, limit) {
      const rows = await learn.models.topPopular(limit);
      return rows.map((r) => ({ itemId: r.itemId, popularity: popularityAt(r.logScore, nowMs, halfLifeMs) }));
    },
    async of(itemIds, nowMs) {
      const rows = await learn.models.popularityOf(itemIds);
      return new Map([...rows].map(([id, s]) => [id, popularityAt(s, nowMs, halfLifeMs)]));
    },
  };
}

/**
 * The discover feed's trending source: the items of highest engine popularity (views, unique visitors and
 * engagements, decayed: src/learn/popularity.ts) that are live and published by now; the hot ranking's
 * list while the engine has no popularity yet.
 */
export function learnedTrending(
  learn: Pick<Learn, 'models'>,
  content: Pick<ContentStore, 'getItems'>,
  fallback: TrendingSource,
): TrendingSource {
  return {
    async trending(nowMs, limit) {
      if (limit <= 0) return [];
      const rows = await learn.models.topPopular(limit * 2);
      const items = (await content.getItems(rows.map((r) => r.itemId))).filter((i) => i.publishedAt <= nowMs);
      if (items.length === 0) return fallback.trending(nowMs, limit);
      return items.slice(0, limit).map((i) => ({ id: i.id, authorId: i.authorId }));
    },
  };
}
