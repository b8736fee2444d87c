/**
 * ReaderSeenFilter port: one scalable Bloom filter per reader (the discover design: "each user gets their
 * own filter", 1 % error, 30-day TTL), grown with sub-filters as it fills — the note's own "what I'd
 * improve" — so the false-positive rate holds however much a reader scrolls. It starts small (a first
 * sub-filter of 100 members, as RedisBloom's `BF.RESERVE` defaults, instead of the note's fixed
 * 100,000), so a reader costs what they saw.
 *
 * It has the same methods as the for-you design's {@link SeenFilter}, so a feed depends on `SeenFilter` and the
 * container picks the strategy per feed ({@link SeenStrategy}); the extra `describe` serves tests,
 * reports and the bench.
 *
 * Geometry (Almeida, Baquero, Preguiça & Hutchison 2007, "Scalable Bloom Filters", with growth s = 2 and
 * tightening r = 0.5 as in RedisBloom): sub-filter i holds n_i = n_0·s^i members at error p_i = p_0·r^i,
 * p_0 = P·(1 − r), so the compound rate of all sub-filters stays ≤ P = Σ p_i < p_0 / (1 − r). Each
 * sub-filter is sized by Broder & Mitzenmacher 2004 (m = −n ln p / ln²2, k = (m/n) ln 2) and hashed by
 * Kirsch–Mitzenmacher double hashing of the member `{reader}:{item}` (src/seen/bloom.ts; the same
 * MurmurHash3 pair as the for-you design's filters). A new member goes into the newest sub-filter; a member already
 * answered "seen" is not added again; when the newest holds n_i members, sub-filter i + 1 is opened.
 *
 * Contract (test/contracts/reader-seen-filter.contract.ts runs it against every adapter):
 * - `markSeen(r, ids, now)` then `seen(r, ids, now')` answers true for every id while the filter lives:
 *   no false negatives, ever, whatever the number of members (sub-filters are only added).
 * - false positives only, at a measured rate ≤ the configured rate, also after growing past the initial
 *   capacity (that is what the sub-filters are for).
 * - readers are independent: marking for one never marks for another; one reader's keys share one hash
 *   slot (`{u:<reader>}`), so every call is one script on one slot, one round trip, whatever the batch.
 * - TTL refreshed on activity: every `seen` or `markSeen` of a reader at `now` moves its expiry to
 *   `now + ttl`. A filter whose last activity is `ttl` or more before `now` is gone: it answers false
 *   for everything and starts empty on the next mark. Time is the caller's (virtual) clock; Redis keys
 *   also carry a real `PEXPIRE` of `ttl` so an idle reader's memory is freed by Redis itself.
 * - `now` going backwards never shortens the life of a filter (the last-activity time only grows).
 * - empty batches are no-ops and touch nothing.
 * - a filter keeps the geometry it was started with (`ReaderFilterState.signature`): filters written
 *   under other settings are read and marked under their own until they are gone.
 *
 * Delivery (the discover design marks "after the response", fire-and-forget, which leaves a window in which the
 * reader's next request can be served the same items): feeds write impressions while the page is
 * hydrated and await them before the response is sent, as the for-you feed does, so the window is shut.
 */
import type { SeenFilter } from './seen-filter.js';

/**
 * Which seen filter a feed uses — a per-feed choice (config `FRESHET_FOR_YOU_SEEN`,
 * `FRESHET_DISCOVER_SEEN`; README "Seen strategy"):
 * - `rolling`: the for-you design's global daily filters (one per UTC day, 7-day window; memory shared by all
 *   readers, proportional to the day's impressions; forgets a day's impressions 7 days later).
 * - `per_reader`: the discover design's per-reader scalable filter (memory per active reader; remembers everything
 *   until the reader is inactive for the TTL, 30 days).
 */
export type SeenStrategy = 'rolling' | 'per_reader';

/** Tunables of the per-reader filter (config `FRESHET_READER_SEEN_*`). */
export interface ReaderSeenSettings {
  /** Members the first sub-filter holds at its rate (n_0; default 100, RedisBloom's; the discover design used 100,000). */
  initialCapacity: number;
  /** Compound false-positive rate of the whole filter (P; the discover design: 0.01). */
  errorRate: number;
  /** Time after the last activity at which the filter is forgotten, ms (the discover design: 30 days). */
  ttlMs: number;
}

/** One sub-filter as stored. */
export interface SubFilterState {
  /** Bitmap size in bits (m_i). */
  bits: number;
  /** Hash functions (k_i). */
  hashes: number;
  /** Members it holds at its rate (n_i = n_0·2^i). */
  capacity: number;
  /** Its target rate (p_i = p_0·0.5^i). */
  rate: number;
  /** Members added to it so far. */
  members: number;
}

/** What a reader's filter holds (for tests, reports and the bench). */
export interface ReaderFilterState {
  /** Sub-filters, oldest first; empty when the reader has no live filter. */
  filters: SubFilterState[];
  /** Members added in total (re-marks of a member already seen are not counted). */
  members: number;
  /** Bytes the filter takes in the store (bitmap bytes; Redis counts up to the highest bit set). */
  bytes: number;
  /** Virtual epoch ms of the last activity, null when the filter is gone. */
  lastActiveMs: number | null;
  /** Upper bound of the compound false-positive rate of the filter now: Σ (1 − e^{−k_i·c_i/m_i})^{k_i}. */
  expectedRate: number;
  /** The geometry it was started with (`<n0>:<P>:s2:r0.5:split`), null when the filter is gone. */
  signature: string | null;
}

/** The per-reader scalable seen filter (docs/discover.md). See the module comment for the contract. */
export interface ReaderSeenFilter extends SeenFilter {
  /**
   * For each of `itemIds`, whether `readerId` has probably seen it; refreshes the reader's TTL when it
   * has a live filter. One round trip.
   * @returns booleans aligned with `itemIds`.
   * @throws FreshetError `INVALID_ID` for a reader id outside `[A-Za-z0-9_.-]{1,64}`; store errors propagate.
   */
  seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]>;
  /**
   * Records impressions: adds each item not already seen to the newest sub-filter, opening sub-filters
   * as they fill, and refreshes the TTL. Atomic per call (one Lua script / one synchronous block).
   * A reader past the last sub-filter that fits (a sub-filter is at most 2 MiB: 819,100 members
   * at the defaults) keeps filling that one, and its rate then degrades instead of failing.
   * @throws FreshetError `INVALID_ID`; store errors propagate.
   */
  markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void>;
  /** The reader's filter at `nowMs` (gone filters describe as empty). Does not refresh the TTL. */
  describe(readerId: string, nowMs: number): Promise<ReaderFilterState>;
  /** Forgets the reader's filter (e.g. account deletion). */
  forget(readerId: string): Promise<void>;
}
