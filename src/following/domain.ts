/**
 * The following timeline's pure rules (docs/following.md): timeline ids, the merge of a reader's inbox
 * with the outboxes of the authors it pulls, and the paging guard. No I/O.
 *
 * **Timeline ids (tid).** Every published item gets one integer, assigned by PostgreSQL when it is
 * published: `tid = max(last tid + 1, now_ms × 2^11)`. It is both the id and the order of every inbox and
 * outbox entry (the following design keeps only ids in the inbox; the order is "time", made exact here). JavaScript
 * numbers and Lua's are IEEE doubles, exact only up to 2^53, so the tid is kept below it (and fits the
 * 7 bytes an entry takes on Redis, src/following/lua/includes/ring.lua): 42 bits of milliseconds
 * (until the year 2109) and 11 bits of sequence (2,048 tids per ms before the counter simply runs ahead
 * of the clock). Mastodon's FeedManager scores by 64-bit snowflake ids, which doubles cannot hold; this
 * layout is the 53-bit variant. Tids are unique, so ties never happen and a cursor is one number.
 *
 * **Never exhausted.** The time a tid is built from is clamped to the accepted time range
 * (src/kernel/time-range.ts: 1970 … 2100-01-01, which the HTTP edge enforces on `X-Freshet-Now`), so
 * the counter can only run ahead of the clock, never off the end: above the tid of 2100-01-01 lie
 * (2^42 ms − 2100-01-01) × 2^11 = {@link TID_HEADROOM} ≈ 6.05 × 10^14 tids — 19 years of publishing
 * at a million items a second, all at the upper bound of the range.
 *
 * **Why arrival time, not `published_at`.** Tids are handed out under a row lock of the publishing
 * transaction, so tid order is commit order; an item published late (an old `published_at`, or simply a
 * slow request) gets a tid above everything readers could already have paged past. Together with the
 * visibility watermark (a read serves only tids assigned before it began, and only below every tid
 * whose fan-out is still running, see `TimelineIndex.watermark`), the set of visible tids only ever
 * grows at the top: paging down with
 * `max_id` never skips or repeats, and `since_id` never misses a late arrival (README "late-arrival
 * guard"; the same problem Misskey guards against in its timeline pagination).
 *
 * **Floors.** A Redis inbox or outbox is complete only above its floor: the highest tid it ever trimmed
 * away (or the lowest tid a rebuild or backfill stopped at). Below the floor the timeline is read from
 * PostgreSQL (Misskey's database fallback).
 */
import { MAX_TIME_MS } from '../kernel/time-range.js';

/** Bits of sequence below the milliseconds in a tid. */
export const TID_SEQ_BITS = 11;
/** 2^11: tids per millisecond. */
export const TID_PER_MS = 2 ** TID_SEQ_BITS;
/** The largest tid: 2^53 − 1, the largest integer a double (a JavaScript or Lua number) holds exactly. */
export const MAX_TID = Number.MAX_SAFE_INTEGER;
/** The largest `now` (epoch ms) a tid can encode: 2^42 − 1 ms, in the year 2109. */
export const MAX_TID_MS = Math.floor(MAX_TID / TID_PER_MS);
/** Tids left above the first tid of the latest accepted time (2100-01-01): ≈ 6.05 × 10^14. */
export const TID_HEADROOM = MAX_TID - MAX_TIME_MS * TID_PER_MS;

/** The smallest tid of millisecond `ms` (epoch ms): `ms × 2^11`. @throws RangeError beyond {@link MAX_TID_MS}. */
export function tidOfMs(ms: number): number {
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_TID_MS) throw new RangeError(`time ${ms} cannot be encoded in a tid`);
  return ms * TID_PER_MS;
}

/** The millisecond (epoch ms) a tid was assigned at (its upper 42 bits). */
export function msOfTid(tid: number): number {
  return Math.floor(tid / TID_PER_MS);
}

/**
 * The first of `n` consecutive fresh tids after `last` at time `nowMs`: `max(last + 1, t × 2^11)` with
 * `t = nowMs` clamped to [0, MAX_TIME_MS] (see "Never exhausted" above).
 * @throws RangeError when n < 1, `nowMs` is not finite, or the range would pass {@link MAX_TID} (after {@link TID_HEADROOM}
 *   tids at the upper bound of the time range).
 */
export function nextTids(last: number, nowMs: number, n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError('n must be a positive integer');
  if (!Number.isFinite(nowMs)) throw new RangeError(`time ${nowMs} cannot be encoded in a tid`);
  const t = Math.min(Math.max(Math.floor(nowMs), 0), MAX_TIME_MS);
  const first = Math.max(last + 1, tidOfMs(t));
  if (first > MAX_TID - (n - 1)) throw new RangeError('the tid space is exhausted');
  return first;
}

/** Parses a cursor (`max_id`, `since_id`): 1–16 decimal digits, at most {@link MAX_TID}; null otherwise. */
export function parseTid(text: unknown): number | null {
  if (typeof text !== 'string' || !/^[0-9]{1,16}$/.test(text)) return null;
  const n = Number(text);
  return n <= MAX_TID ? n : null;
}

/** A tid as it travels in JSON and Redis members: its decimal string. */
export function tidText(tid: number): string {
  return String(tid);
}

/** What one Redis source (the inbox, or one pulled outbox) answered for a range. */
export interface SourceSlice {
  /** Tids in the range, newest first (at most `asked`). */
  tids: readonly number[];
  /** How many were asked for; a slice as long as this may have more below its last tid. */
  asked: number;
  /** Entries at or below this tid may be missing from the source (0: complete from the start). */
  floor: number;
}

/** The merged candidates of one round (see {@link mergeSlices}). */
export interface MergedRound {
  /** Distinct tids strictly inside (max(floor, lo), hi), newest first, all trustworthy. */
  tids: number[];
  /** The effective floor: the highest floor of the sources. */
  floor: number;
  /**
   * True when no source can have more entries above the bottom (max(floor, lo)) below the last returned
   * tid; when false the next round reads below the last returned tid (the horizon).
   */
  exhausted: boolean;
}

/**
 * Merges source slices read for the window (lo, hi) into one newest-first list without repeats.
 *
 * Rules: entries at or below the highest floor are dropped (only PostgreSQL is complete there); when a
 * source returned as many entries as asked, it may hold more below its last one, so the merge is cut at
 * the highest such "last" tid (the k-way merge horizon) — everything kept is exact, nothing between two
 * kept tids can be missing.
 */
export function mergeSlices(slices: readonly SourceSlice[], lo: number): MergedRound {
  let floor = 0;
  for (const s of slices) floor = Math.max(floor, s.floor);
  let horizon = -1;
  for (const s of slices)
    if (s.tids.length >= s.asked && s.tids.length > 0) horizon = Math.max(horizon, s.tids[s.tids.length - 1]!);
  const bottom = Math.max(floor, lo);
  const seen = new Set<number>();
  const tids: number[] = [];
  for (const s of slices)
    for (const t of s.tids) if (t > bottom && t >= horizon && !seen.has(t)) seen.add(t), tids.push(t);
  tids.sort((a, b) => b - a);
  // A full source whose last entry is at or below the bottom returned everything above it.
  return { tids, floor, exhausted: horizon <= bottom };
}

/**
 * The floor a pulled outbox contributes: items of a pulled author below `min(outbox floor, pullTid)`
 * may be missing from Redis. Above its `pullTid` (the newest item its fan-out skipped) every item of the
 * author was pushed to inboxes, so a trimmed outbox only matters below that.
 */
export function outboxFloor(floor: number, pullTid: number): number {
  return Math.min(floor, pullTid);
}

/**
 * The `next_max_id` of a page: the tid of its last item when the page is full (more may follow), null
 * when the page came back short (the timeline ends there, for now).
 */
export function nextMaxId(tids: readonly number[], limit: number): number | null {
  return tids.length >= limit && tids.length > 0 ? tids[tids.length - 1]! : null;
}

/** How many entries to ask each source for when `need` items are missing: 2× + 8 over-fetch (filtered items). */
export function overFetch(need: number): number {
  return need * 2 + 8;
}
