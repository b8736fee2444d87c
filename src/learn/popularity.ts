/**
 * The engine's own popularity of an item: what readers did with it, decayed — every (reader, item)
 * pair's weight (interactions.ts: a unique view 1, each engagement 3) halved every `halfLifeMs` since its
 * last signal:
 *
 *   popularity(item, now) = Σ_pairs weight · 2^(−(now − at) / halfLife)
 *
 * Stored as log2 of the same sum taken against a fixed epoch (`Σ weight · 2^((at − EPOCH) / halfLife)`),
 * the usual trick for exponentially decayed counters: the stored number never changes with time, two
 * items compare by it at any `now`, an index on it serves "the most popular now", and adding a signal is
 * a log-sum-exp (Reddit's and Hacker News' time-decayed rankings keep the same order-preserving form;
 * Cormode, Shkapenyuk, Srivastava & Xu 2009, "Forward Decay", ICDE, give the general method).
 * The publisher's `popularity` stays a prior beside it (src/for-you/scoring.ts).
 */

/** The fixed epoch of the stored scores: 2020-01-01T00:00:00Z (any fixed time works). */
export const POPULARITY_EPOCH_MS = Date.UTC(2020, 0, 1);

/** log2 of one pair's contribution: log2(weight) + (at − epoch) / halfLife. */
export function logContribution(weight: number, atMs: number, halfLifeMs: number): number {
  return Math.log2(weight) + (atMs - POPULARITY_EPOCH_MS) / halfLifeMs;
}

/** log2(2^a + 2^b), stable for any magnitudes (−Infinity is the empty sum). */
export function logAdd(a: number, b: number): number {
  if (a === Number.NEGATIVE_INFINITY) return b;
  if (b === Number.NEGATIVE_INFINITY) return a;
  const hi = Math.max(a, b);
  return hi + Math.log2(1 + 2 ** (Math.min(a, b) - hi));
}

/** The popularity at `nowMs` of a stored log score (the decayed weighted count above). */
export function popularityAt(logScore: number, nowMs: number, halfLifeMs: number): number {
  return 2 ** (logScore - (nowMs - POPULARITY_EPOCH_MS) / halfLifeMs);
}
