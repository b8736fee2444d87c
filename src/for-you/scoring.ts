/**
 * The for-you feed's scores, written once (docs/for-you.md "Recall"): the feed ranks with them (walk.ts,
 * fill-pool.ts) and the explain API reports them (explain.ts), so what a "Why?" shows is what ranked the
 * item. The recall's SQL computes the same products in PostgreSQL (adapters/postgres-recall.ts, beside
 * `gaussDecaySql`); pure functions, no I/O.
 */
import type { Candidate } from './recall.js';

/**
 * The fill score of an item inside the decay window: decay × ln(2 + popularity) (the for-you design's freshness ×
 * popularity; `ln(2 + p)` so an item with no views still scores its decay × ln 2). The pool's order.
 */
export function fillScore(decay: number, popularity: number): number {
  return decay * popularityFactor(popularity);
}

/** The popularity factor of {@link fillScore}: ln(2 + popularity). */
export function popularityFactor(popularity: number): number {
  return Math.log(2 + popularity);
}

/**
 * The interest-match score: lexemes of the reader's interests the item holds × decay × weight (the
 * author's "not interested" / "show less" weight; 1 where the feed does not weigh). How interest matches
 * are ranked in process and how each round's matches come first.
 */
export function matchScore(matched: number, decay: number, weight = 1): number {
  return matched * decay * weight;
}

/** How many of `lexemes` a candidate holds: its `matched` (keyset rows) or a count over its own lexemes. */
export function matchedCount(c: Pick<Candidate, 'matched' | 'lexemes'>, lexemes: ReadonlySet<string>): number {
  return c.matched ?? (c.lexemes ?? []).reduce((k, l) => (lexemes.has(l) ? k + 1 : k), 0);
}
