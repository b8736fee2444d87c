/**
 * Author diversity of the ranked feeds (for-you, discover phases 2 and 3): inside a page, an author's
 * k-th item (k = 0, 1, …) has its score multiplied by a discount, and no page holds more than a cap of
 * one author while candidates of other authors remain. Pure: no I/O. Shared by the feeds through the
 * kernel because both apply it (docs/preferences.md "Author diversity").
 *
 * The discount is X's home-mixer author-diversity rescoring: multiplier(k) = (1 − floor) · decay^k + floor
 * with decay 0.5 and floor 0.25 (1, 0.625, 0.44, 0.34, … → 0.25); bench/preferences.ts measures it
 * against a cap alone. The feeds' orders are rankings whose scores have no common scale (interest matches,
 * the fill pool, keyset rows, cosine, recency), so the score of the i-th candidate is its rank score
 * 1 / (1 + i): a discount of ½ moves a repeat from rank i to about rank 2i + 1.
 */

/** Items per page the reader's `max_per_author` is stated for (the cap scales with the page size). */
export const DIVERSITY_PAGE = 20;
/** Discount per repeat of an author inside a page (home-mixer's decay factor). */
export const DIVERSITY_DECAY = 0.5;
/** Lowest discount of a repeat (home-mixer's floor). */
export const DIVERSITY_FLOOR = 0.25;

/** The discount curve: repeat k of an author weighs (1 − floor) · decay^k + floor. */
export interface Discount {
  decay: number;
  floor: number;
}

/** The default discount (home-mixer's 0.5 / 0.25). */
export const HOME_MIXER_DISCOUNT: Discount = { decay: DIVERSITY_DECAY, floor: DIVERSITY_FLOOR };

/**
 * Most items of one author in a page of `pageSize`: `maxPerAuthor` per {@link DIVERSITY_PAGE}, scaled
 * and rounded, at least 1; `Infinity` when `maxPerAuthor` is 0 (no cap).
 */
export function authorCap(maxPerAuthor: number, pageSize: number): number {
  if (!(maxPerAuthor > 0)) return Number.POSITIVE_INFINITY;
  return Math.max(1, Math.round((maxPerAuthor * pageSize) / DIVERSITY_PAGE));
}

/** The multiplier of an author's k-th item in a page (k = 0 is its first). */
export function repeatMultiplier(k: number, d: Discount = HOME_MIXER_DISCOUNT): number {
  return (1 - d.floor) * d.decay ** k + d.floor;
}

/** One page chosen from a ranking. */
export interface PickedPage<T> {
  /** The page, in serving order. */
  page: T[];
  /** The candidates not taken, in their ranking order. */
  rest: T[];
  /** Whether the cap had to be exceeded because only capped authors were left. */
  relaxed: boolean;
}

/**
 * Picks one page of at most `size` from `ranked` (best first): slot by slot, the candidate with the best
 * rank score × {@link repeatMultiplier} of its author's count so far, among authors under `cap`; when
 * only capped authors remain, the best of them (the page is then `relaxed`). O(size × n) at worst, and
 * a scan stops as soon as no later candidate can win (its rank score alone is below the best so far).
 * `counts` (author → items already in the page) lets a page be picked in several rounds; it is updated.
 * With `relax` false the cap is never exceeded: the page is then short.
 */
export function pickPage<T extends { authorId: string }>(
  ranked: readonly T[],
  size: number,
  cap: number,
  discount: Discount = HOME_MIXER_DISCOUNT,
  counts: Map<string, number> = new Map(),
  relax = true,
): PickedPage<T> {
  const taken = new Uint8Array(ranked.length);
  const page: T[] = [];
  let relaxed = false;
  for (let slot = 0; slot < size && page.length < ranked.length; slot++) {
    let best = -1;
    let bestValue = 0;
    let firstCapped = -1;
    for (let i = 0; i < ranked.length; i++) {
      if (taken[i]) continue;
      const rank = 1 / (1 + i);
      if (rank <= bestValue) break;
      const k = counts.get(ranked[i]!.authorId) ?? 0;
      if (k >= cap) {
        if (firstCapped < 0) firstCapped = i;
        continue;
      }
      const value = rank * repeatMultiplier(k, discount);
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    if (best < 0) {
      if (firstCapped < 0 || !relax) break;
      best = firstCapped;
      relaxed = true;
    }
    taken[best] = 1;
    const c = ranked[best]!;
    counts.set(c.authorId, (counts.get(c.authorId) ?? 0) + 1);
    page.push(c);
  }
  return { page, rest: ranked.filter((_, i) => !taken[i]), relaxed };
}

/**
 * Arranges a ranking into consecutive pages of `size` ({@link pickPage} each). With `stopWhenRelaxed`,
 * the arrangement stops before the first page that would exceed the cap: what is left is `deferred` (the
 * caller serves it later, when more candidates of other authors can join it).
 */
export function arrangePages<T extends { authorId: string }>(
  ranked: readonly T[],
  size: number,
  cap: number,
  stopWhenRelaxed: boolean,
  discount: Discount = HOME_MIXER_DISCOUNT,
): { ordered: T[]; deferred: T[] } {
  if (!Number.isFinite(cap) || size < 1) return { ordered: [...ranked], deferred: [] };
  const ordered: T[] = [];
  let rest: readonly T[] = ranked;
  while (rest.length > 0) {
    const p = pickPage(rest, size, cap, discount);
    if (p.relaxed && stopWhenRelaxed && ordered.length > 0) return { ordered, deferred: [...rest] };
    ordered.push(...p.page);
    rest = p.rest;
  }
  return { ordered, deferred: [] };
}
