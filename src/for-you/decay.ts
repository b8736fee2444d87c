/**
 * Gaussian time decay with Elasticsearch `gauss` decay-function semantics.
 *
 * Source: Elasticsearch reference, "Function score query → Decay functions" (`gauss`):
 *
 *     S(t) = exp( -max(0, |t - origin| - offset)^2 / (2σ^2) ),   σ^2 = -scale^2 / (2 ln(decay))
 *
 * so that S = 1 within `offset` of `origin`, and S = `decay` at distance `offset + scale`.
 * Freshet uses origin = now and t = an item's `published_at`. The formula is written once in
 * TypeScript ({@link gaussDecay}) and once as the SQL the recall runs ({@link gaussDecaySql}), side by side.
 */

/** Parameters of the decay; all durations in milliseconds. */
export interface GaussDecay {
  /** Distance from origin (ms) at which the score has fallen to `decay`, beyond `offset`. */
  scaleMs: number;
  /** Distance from origin (ms) within which the score stays 1. */
  offsetMs: number;
  /** Score at `offset + scale` from origin, in (0, 1). */
  decay: number;
}

/** σ² in ms² for the given parameters: `-scale² / (2 ln decay)` (Elasticsearch `gauss`). */
export function gaussSigma2(p: GaussDecay): number {
  return -(p.scaleMs * p.scaleMs) / (2 * Math.log(p.decay));
}

/**
 * The largest exponent the decay takes: beyond it the factor is exp(−700) ≈ 1e−304, 0 for any
 * ranking, and PostgreSQL's `exp` raises on underflow instead of returning 0.
 */
export const GAUSS_MAX_EXPONENT = 700;

/** `1 / (2σ²)` in 1/ms²: the exponent of the decay is `d² · gaussExponentFactor(p)`. */
export function gaussExponentFactor(p: GaussDecay): number {
  return 1 / (2 * gaussSigma2(p));
}

/**
 * The decay factor in (0, 1] of an item published at `publishedMs`, seen from `nowMs`:
 * `exp(−min(700, max(0, |now − published| − offset)² / (2σ²)))`. The one formula of the decay; the
 * recall computes it in SQL with {@link gaussDecaySql} (test/for-you/decay.test.ts checks they agree).
 */
export function gaussDecay(p: GaussDecay, nowMs: number, publishedMs: number): number {
  const d = Math.max(0, Math.abs(nowMs - publishedMs) - p.offsetMs);
  return Math.exp(-Math.min(GAUSS_MAX_EXPONENT, d * d * gaussExponentFactor(p)));
}

/**
 * {@link gaussDecay} as a PostgreSQL expression (float8) over SQL operands: `nowMs` and `publishedMs`
 * bigint epoch ms, `offsetMs` the offset and `factor` {@link gaussExponentFactor}, both float8 — each
 * a column, a cast parameter (`$3::float8`) or any expression of that type.
 */
export function gaussDecaySql(nowMs: string, publishedMs: string, offsetMs: string, factor: string): string {
  return `exp(-least(${GAUSS_MAX_EXPONENT}, power(greatest(0, abs(${nowMs} - ${publishedMs}) - ${offsetMs}), 2) * ${factor}))`;
}

/**
 * The age (ms) beyond which the decay factor drops below `floor` (0 < floor < 1):
 * `offset + σ·sqrt(-2 ln floor)`. Recall ignores items older than this (they could not score).
 */
export function gaussHorizonMs(p: GaussDecay, floor: number): number {
  return p.offsetMs + Math.sqrt(gaussSigma2(p)) * Math.sqrt(-2 * Math.log(floor));
}
