/**
 * Recall sources beyond the built-in ones (docs/for-you.md "Recall sources"): the learned recall of the
 * learning room (collaborative neighbours and the factor model, bridged by src/compose/bridges.ts) and any
 * a library user passes to `openFreshet` (docs/library.md "Ranking hooks"). Each gives a reader's
 * candidates with a score; the feed fuses them and walks them first, under the same decay window,
 * exclusions, seen filters and author diversity as every other candidate (walk.ts).
 *
 * Fusion: each source's scores are divided by that source's best and multiplied by its weight, and a
 * candidate's scores are summed over the sources that found it (CombSUM over max-normalised scores, Fox &
 * Shaw 1994, "Combination of multiple searches"); the sum is multiplied by the item's Gaussian decay
 * (relevance × decay, as every for-you score). Only items inside the decay window and up to now are
 * kept: older ones come through the walk's keyset stream, newest first, as before.
 *
 * A source that fails is logged and counted and the page is served without it (a feed never fails for
 * an optional recall); a source answers within the request's store deadlines or not at all.
 */
import type { ContentStore } from '../kernel/items/content-store.js';
import type { Logger } from '../kernel/observability.js';
import { gaussDecay, type GaussDecay } from './decay.js';
import type { Candidate } from './recall.js';

/** One candidate of a source. */
export interface SourceCandidate {
  itemId: string;
  /** > 0; compared only with the same source's other scores. */
  score: number;
  /**
   * Why the source found it, for explain's score parts (e.g. the learned source's neighbour and factor
   * scores and its "readers who engaged with … also engaged with this"); read only by explain.
   */
  evidence?: Record<string, number | string>;
}

/** What a source is asked. */
export interface SourceQuery {
  readerId: string;
  /** The request's time, epoch ms. */
  nowMs: number;
  /** Candidates wanted at most (the recall size N). */
  limit: number;
}

/** An extra recall source of the for-you feed (see the module doc). */
export interface RecallSource {
  /** Its name in explain's score parts and in the logs (`[a-z0-9_]{1,32}`). */
  readonly name: string;
  /** Its weight in the fusion (default 1). */
  readonly weight?: number;
  /** The reader's candidates, best first. */
  candidates(q: SourceQuery): Promise<readonly SourceCandidate[]>;
  /**
   * Optional: the evidence of one item for explain, in plain words where it can (null: not a candidate
   * of the reader's among its best `limit`). Without it, explain shows the `evidence` of `candidates`.
   */
  explain?(readerId: string, itemId: string, limit: number): Promise<Record<string, number | string> | null>;
}

/** A fused candidate: the walk's candidate, its fused score × decay in `score`, and each source's part. */
export interface SourcedCandidate extends Candidate {
  score: number;
  /** Per source name: its max-normalised, weighted part of the fused score (before the decay). */
  parts: Record<string, number>;
  /** The sources' evidence, merged (see {@link SourceCandidate.evidence}). */
  evidence: Record<string, number | string>;
}

/** What {@link sourcedCandidates} needs. */
export interface SourcesDeps {
  sources: readonly RecallSource[];
  content: Pick<ContentStore, 'getItems'>;
  log: Logger;
  /** Counts a failed source (metrics). */
  failed?: (source: string) => void;
}

/**
 * The sources' candidates for a reader, fused (see the module doc), best first (ties: newest, then id);
 * only live items published in [now − horizon, now] that the reader did not author.
 */
export async function sourcedCandidates(
  deps: SourcesDeps,
  q: SourceQuery & { decay: GaussDecay; horizonMs: number },
): Promise<SourcedCandidate[]> {
  if (deps.sources.length === 0) return [];
  const lists = await Promise.all(
    deps.sources.map((s) =>
      s.candidates({ readerId: q.readerId, nowMs: q.nowMs, limit: q.limit }).catch((err: unknown) => {
        deps.failed?.(s.name);
        deps.log.warn({ err, source: s.name, readerId: q.readerId }, 'for-you recall source failed; served without it');
        return [] as SourceCandidate[];
      }),
    ),
  );
  const parts = new Map<string, Record<string, number>>();
  const evidence = new Map<string, Record<string, number | string>>();
  lists.forEach((list, k) => {
    const s = deps.sources[k]!;
    let best = 0;
    for (const c of list) best = Math.max(best, c.score);
    if (!(best > 0)) return;
    for (const c of list.slice(0, q.limit)) {
      if (!(c.score > 0)) continue;
      const p = parts.get(c.itemId) ?? {};
      p[s.name] = (p[s.name] ?? 0) + ((s.weight ?? 1) * c.score) / best;
      parts.set(c.itemId, p);
      if (c.evidence) evidence.set(c.itemId, { ...evidence.get(c.itemId), ...c.evidence });
    }
  });
  if (parts.size === 0) return [];
  const edge = q.nowMs - q.horizonMs;
  const items = await deps.content.getItems([...parts.keys()]);
  const out: SourcedCandidate[] = [];
  for (const item of items) {
    if (item.publishedAt < edge || item.publishedAt > q.nowMs || item.authorId === q.readerId) continue;
    const p = parts.get(item.id)!;
    const fused = Object.values(p).reduce((a, b) => a + b, 0);
    const score = fused * gaussDecay(q.decay, q.nowMs, item.publishedAt);
    out.push({
      id: item.id,
      authorId: item.authorId,
      publishedAt: item.publishedAt,
      score,
      parts: p,
      evidence: evidence.get(item.id) ?? {},
    });
  }
  out.sort((a, b) => b.score - a.score || b.publishedAt - a.publishedAt || (a.id < b.id ? -1 : 1));
  return out;
}

/** A candidate as a re-rank hook sees it (docs/library.md "Ranking hooks"). */
export interface RankedCandidate {
  itemId: string;
  authorId: string;
  /** Epoch ms. */
  publishedAt: number;
  /** The feed's score (for-you: the fused score × decay, or the fill score; absent for older items). */
  score?: number;
}

/**
 * A re-rank hook: the candidates the feed is about to serve (already clean: unseen, not excluded), in
 * the feed's order; returns them in the order to serve. It may drop candidates; ids it returns that were
 * not given are ignored, so it can never bring back a seen or excluded item. Runs before the page is
 * marked seen. A hook that throws fails the request (a bug in the application's code should be seen).
 */
export type ReRank = (
  q: { readerId: string; nowMs: number; feed: 'for-you' | 'discover' },
  candidates: readonly RankedCandidate[],
) => readonly string[] | Promise<readonly string[]>;

/**
 * Applies a re-rank hook to `list` (see {@link ReRank}): the candidates in the order of the ids it
 * returned, those it dropped left out, unknown or repeated ids ignored.
 */
export async function reRanked<T extends { id: string; authorId: string; publishedAt: number; score?: number }>(
  hook: ReRank | undefined,
  q: Parameters<ReRank>[0],
  list: readonly T[],
): Promise<T[]> {
  if (!hook || list.length === 0) return [...list];
  const byId = new Map(list.map((c) => [c.id, c]));
  const order = await hook(
    q,
    list.map((c) => ({ itemId: c.id, authorId: c.authorId, publishedAt: c.publishedAt, score: c.score })),
  );
  const out: T[] = [];
  for (const id of order) {
    const c = byId.get(id);
    if (c) {
      out.push(c);
      byId.delete(id);
    }
  }
  return out;
}
