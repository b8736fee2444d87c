/**
 * The one range every time input must fall in: `X-Freshet-Now`, an item's `published_at`
 * and a view's `at` are checked against it at the edge, so a time in milliseconds where seconds were
 * meant (the year ~58,870), a 15-digit `X-Freshet-Now` or a date next century never reaches a store.
 *
 * The range is [1970-01-01T00:00:00Z, min(2100-01-01T00:00:00Z, clock + future skew)]:
 * - the fixed bounds keep every derived value exact — a tid encodes times up to 2^42 − 1 ms (2109),
 *   so a publish at the upper bound still leaves (2^42 − MAX_TIME_MS) × 2^11 ≈ 6 × 10^14 tids of
 *   headroom (src/following/domain.ts);
 * - the skew (`FRESHET_FUTURE_SKEW_S`, default one day) lets an application with a slightly fast clock
 *   or a scheduled post through, and keeps a typo from ranking an item "from the future" forever.
 * Past times are always fine down to 1970: replays of historical data run on virtual time.
 */
import { fail } from './errors.js';

/** Earliest accepted time: 1970-01-01T00:00:00Z, epoch ms. */
export const MIN_TIME_MS = 0;
/** Latest accepted time whatever the clock says: 2100-01-01T00:00:00Z, epoch ms. */
export const MAX_TIME_MS = Date.UTC(2100, 0, 1);
/** Default of `FRESHET_FUTURE_SKEW_S`: how far past the clock a time may be, ms. */
export const DEFAULT_FUTURE_SKEW_MS = 86_400_000;

/** The accepted range at wall-clock time `clockMs` with the given skew: inclusive bounds, epoch ms. */
export function timeRange(clockMs: number, futureSkewMs: number): { minMs: number; maxMs: number } {
  return { minMs: MIN_TIME_MS, maxMs: Math.min(MAX_TIME_MS, clockMs + futureSkewMs) };
}

/** An epoch-ms time as ISO 8601 (UTC), for messages. */
export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Returns `ms` when it is an integer within {@link timeRange}.
 * @param field how the client names the input (`body/0/published_at`, `header X-Freshet-Now`).
 * @param unit the unit the client wrote the value in; a value that fits the range only read as
 *   milliseconds (where seconds were meant) gets a hint.
 * @throws FreshetError `INVALID_INPUT` naming the field, the value, and the accepted range.
 */
export function assertTimeInRange(
  ms: number,
  field: string,
  clockMs: number,
  futureSkewMs: number,
  unit: 's' | 'ms' = 'ms',
): number {
  const { minMs, maxMs } = timeRange(clockMs, futureSkewMs);
  if (Number.isSafeInteger(ms) && ms >= minMs && ms <= maxMs) return ms;
  const range = `${isoOf(minMs)} … ${isoOf(maxMs)} (the clock + FRESHET_FUTURE_SKEW_S, at most 2100-01-01)`;
  const got = Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? isoOf(ms) : String(ms);
  const hint =
    unit === 's' && ms / 1000 >= minMs && ms / 1000 <= maxMs ? '; it looks like milliseconds: send epoch seconds' : '';
  throw fail('INVALID_INPUT', `${field} is ${got}, outside the accepted time range ${range}${hint}`);
}
