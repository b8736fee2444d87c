/**
 * Gaussian time decay with Elasticsearch `gauss` decay-function semantics.
 *
 * Source: Elasticsearch reference, "Function score query → Decay functions" (`gauss`):
 *
 *     S(t) = exp( -max(0, |t - origin| - offset)^2 / (2σ^2) ),   σ^2 = -scale^2 / (2 ln(decay))
 *
 * so that S = 1 within `offset` of `origin`, and S = `decay` at distance `offset + scale`.
 * Freshet uses origin = now and t = an item's `published_at`.
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

/** The decay factor in (0, 1] of an item published at `publishedMs`, seen from `nowMs`. */
export function gaussDecay(p: GaussDecay, nowMs: number, publishedMs: number): number {
  const d = Math.max(0, Math.abs(nowMs - publishedMs) - p.offsetMs);
  return Math.exp(-(d * d) / (2 * gaussSigma2(p)));
}

/**
 * The age (ms) beyond which the decay factor drops below `floor` (0 < floor < 1):
 * `offset + σ·sqrt(-2 ln floor)`. Recall ignores items older than this (they could not score).
 */
export function gaussHorizonMs(p: GaussDecay, floor: number): number {
  return p.offsetMs + Math.sqrt(gaussSigma2(p)) * Math.sqrt(-2 * Math.log(floor));
}
