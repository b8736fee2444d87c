/**
 * How `freshet replay views` turns a view log's item keys and times into Freshet items and virtual
 * times. Two mappings:
 *
 * - `hn` (default, for the MIND log over imported Hacker News posts): the log is SHIFTED (never
 *   stretched) so the UTC midnight of its first view lands on `start` (default 2016-09-20, the last
 *   week of the HN sample — the same placement as `freshet simulate`). Each distinct log item then
 *   becomes one HN post: among the posts published in the {@link HN_WINDOW_MS} (48 h) before the log
 *   item's first (shifted) view, the one at index FNV-1a(key) mod count (posts sorted by publication
 *   time, then id); when none was published in that window, the latest post published before the
 *   first view. So every view lands on an item that already existed, about as fresh as a news item
 *   is when people read it. MIND shows ~1,240 distinct news a day and HN has ~55 posts a day, so
 *   several log items share one post and their views add up (like copies of one story).
 * - `direct`: the key is a Freshet item id, times are used as logged (plus the shift when `start` is
 *   given).
 */
import { DAY_MS, HOUR_MS } from '../../kernel/clock.js';
import { compareIds, isId } from '../../kernel/ids.js';
import { fnv1a } from '../../kernel/hash.js';

/** The publication window searched before a log item's first view. */
export const HN_WINDOW_MS = 48 * HOUR_MS;

/** A candidate item: its id and publication time (epoch ms). */
export interface Candidate {
  id: string;
  publishedAt: number;
}

/** The shift (ms) moving the UTC midnight of `firstMs` onto `startMs`: virtual = logged + shift. */
export function shiftFor(firstMs: number, startMs: number): number {
  return startMs - Math.floor(firstMs / DAY_MS) * DAY_MS;
}

/**
 * The `hn` mapping: log item key → candidate id (see the module doc).
 * @param firstSeen each log item's first view, already shifted (virtual epoch ms).
 * @returns the mapping, and the keys no candidate could take (first view before every candidate).
 */
export function mapOntoCandidates(
  firstSeen: ReadonlyMap<string, number>,
  candidates: readonly Candidate[],
): { map: Map<string, string>; unmapped: string[] } {
  const sorted = [...candidates].sort((a, b) => a.publishedAt - b.publishedAt || compareIds(a.id, b.id));
  const times = sorted.map((c) => c.publishedAt);
  const map = new Map<string, string>();
  const unmapped: string[] = [];
  for (const [key, first] of firstSeen) {
    const hi = upperBound(times, first); // candidates [0, hi) are published at or before the first view
    const lo = upperBound(times, first - HN_WINDOW_MS - 1);
    if (hi === 0) unmapped.push(key);
    else if (hi > lo) map.set(key, sorted[lo + (fnv1a(key) % (hi - lo))]!.id);
    else map.set(key, sorted[hi - 1]!.id);
  }
  return { map, unmapped };
}

/** The `direct` mapping: keys that are valid ids map to themselves. */
export function mapDirect(keys: Iterable<string>): { map: Map<string, string>; unmapped: string[] } {
  const map = new Map<string, string>();
  const unmapped: string[] = [];
  for (const key of keys) {
    if (isId(key)) map.set(key, key);
    else unmapped.push(key);
  }
  return { map, unmapped };
}

/** Index of the first element > x in ascending `a` (a.length when none); binary search. */
export function upperBound(a: readonly number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
