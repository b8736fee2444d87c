/**
 * SeenFilter port: remembers which items each reader was shown (impressions) and answers, for a
 * batch of candidates, which ones the reader has probably seen.
 *
 * Contract (test/contracts/seen-filter.contract.ts runs it against every adapter):
 * - `markSeen(r, ids, now)` then `seen(r, ids, now')` answers true for every id while `now'` is
 *   within the window (the day of `now` and the `days - 1` days before `now'`).
 * - false positives only: an id never marked may answer true with probability ≤ the configured
 *   window rate while each day holds ≤ capacity members; a marked id never answers false in window.
 * - readers are independent (`{reader}:{item}` members): marking for one never marks for another.
 * - after the window a day's filter is gone (expired), and with it what it remembered.
 * - `seen` is one round trip to the store, whatever the batch size (a store whose days have layouts
 *   may take one more the first time a process meets a day, and one more per layout while the window
 *   spans a change of settings); empty batches are no-ops.
 */
export interface SeenFilter {
  /**
   * For each of `itemIds`, whether `readerId` has probably seen it in the window ending at `nowMs`.
   * @returns booleans aligned with `itemIds`.
   */
  seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]>;
  /** Records impressions: adds every `{readerId}:{itemId}` to the filter of the day of `nowMs`. */
  markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void>;
  /**
   * Optional: readies `readerId`'s filter for its first check of a session, so that check needs no
   * extra round trips — an adapter that restores an absent filter from its checkpoints does it now
   * (one check of no members; at once when already there). A feed calls it without waiting, beside
   * its first reads; a failure is ignored here and surfaces in the check.
   */
  warm?(readerId: string, nowMs: number): Promise<void>;
  /**
   * Read-only `seen`: for each of `itemIds`, whether `readerId` has probably seen it at `nowMs`, which
   * filter holds it, and that filter's false-positive rate estimated from its fill now (the explain API,
   * docs/explain.md). Writes nothing: no mark, no TTL refresh, no restore (a filter the store lost reads as
   * empty). One round trip per shard and layout of the window (rolling) or one (per reader).
   * @returns probes aligned with `itemIds`.
   * @throws FreshetError `INVALID_ID` for a bad reader id; store errors propagate.
   */
  probe(readerId: string, itemIds: readonly string[], nowMs: number): Promise<SeenProbe[]>;
  /** Releases connections or persists state. */
  close(): Promise<void>;
}

/**
 * What {@link SeenFilter.probe} finds for one member. The rate is the chance that a member never marked
 * reads "seen" in the filter that answered: a Bloom filter can say "seen" wrongly, never "not seen".
 */
export interface SeenProbe {
  /** Whether some filter holds all k bits of the member (the same answer as `seen`). */
  seen: boolean;
  /** Rolling daily filters: the UTC day (`YYYY-MM-DD`) of the newest day filter holding it; null otherwise. */
  day: string | null;
  /** Per-reader scalable filter: the sub-filter holding it (0 = the oldest); null otherwise. */
  subFilter: number | null;
  /**
   * Estimated false-positive rate, in [0, 1], of the filter that holds it (the day's bitmap: (set bits /
   * m)^k; the sub-filter: (1 − e^{−k·n/m})^k from its member count); when not seen, of the whole window
   * or filter (the chance a new member would read "seen").
   */
  fpr: number;
}

/**
 * Marks the impressions of a page that is served whatever happens (every feed that serves pages
 * uses it): an empty page writes nothing, and a store error goes to `onFailure` (log it, count it)
 * instead of failing the page — the reader already has it, so losing a mark only risks a repeat.
 * Works with either seen filter (this one or the per-reader `ReaderSeenFilter`).
 */
export async function markSeenBestEffort(
  filter: Pick<SeenFilter, 'markSeen'>,
  readerId: string,
  itemIds: readonly string[],
  nowMs: number,
  onFailure: (err: unknown) => void,
): Promise<void> {
  if (itemIds.length === 0) return;
  try {
    await filter.markSeen(readerId, itemIds, nowMs);
  } catch (err) {
    onFailure(err);
  }
}
