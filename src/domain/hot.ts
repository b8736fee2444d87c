/**
 * The hot ranking's pure rules (design note 2): the time-decay score, its parameters and their valid
 * ranges, how old an item is in hours, view verdicts, and the `range` of `GET /v1/hot`.
 *
 * Score (note 2, "时间衰减评分"):
 *
 *     score = (α·pv + β·uv) / (hours_since_publish + base)^γ
 *
 * with pv the counted page views, uv the HyperLogLog estimate of distinct visitors. The note's
 * recommended values α = 1.0, β = 1.2 (UV weighs a little more than PV), base = 2 (keeps a brand-new
 * item's denominator from being tiny), γ = 1.5 (holds up over a 24–72 h window without crushing
 * evergreen items); it reports γ ∈ [1.3, 1.8] as stable for news and tech communities, 1.3 for
 * evergreen content. The same shape is Hacker News' gravity (P − 1)/(T + 2)^1.8 (base 2, γ 1.8).
 */
import { HOUR_MS, DAY_MS } from './clock.js';

/** Weights of the score; see the module doc for their source. */
export interface HotParams {
  /** Weight of page views (α), ≥ 0. */
  alpha: number;
  /** Weight of unique visitors (β), ≥ 0. */
  beta: number;
  /** Hours added to an item's age (base), > 0. */
  base: number;
  /** Decay exponent (γ), in [1.3, 1.8]. */
  gamma: number;
}

/** Note 2's recommended values. */
export const DEFAULT_HOT_PARAMS: Readonly<HotParams> = { alpha: 1.0, beta: 1.2, base: 2, gamma: 1.5 };

/** Valid range of each parameter, inclusive (γ from note 2; the others keep the score finite and meaningful). */
export const HOT_PARAM_RANGES: Readonly<Record<keyof HotParams, readonly [number, number]>> = {
  alpha: [0, 10],
  beta: [0, 10],
  base: [0.1, 48],
  gamma: [1.3, 1.8],
};

/**
 * Hours between publication (epoch SECONDS, as note 2 stores `publishedAt`) and `nowMs` (epoch ms);
 * 0 when `nowMs` is not after the publication — exactly the note's Lua (`nowSec > pub`).
 */
export function hoursSincePublish(nowMs: number, publishedSec: number): number {
  const nowSec = nowMs / 1000;
  return nowSec > publishedSec ? (nowSec - publishedSec) / 3600 : 0;
}

/**
 * Note 2's score: (α·pv + β·uv) / (hours + base)^γ. The Lua scripts compute the same expression in
 * the same order; results agree to the last bit or two (C `pow` vs V8's `Math.pow`).
 */
export function hotScore(pv: number, uv: number, hours: number, p: HotParams): number {
  const denominator = Math.pow(hours + p.base, p.gamma);
  return denominator > 0 ? (p.alpha * pv + p.beta * uv) / denominator : 0;
}

/**
 * Checks parameters against {@link HOT_PARAM_RANGES}.
 * @throws RangeError naming the first parameter out of range, or when α = β = 0 (every score 0).
 */
export function assertHotParams(p: HotParams): HotParams {
  for (const name of Object.keys(HOT_PARAM_RANGES) as (keyof HotParams)[]) {
    const [lo, hi] = HOT_PARAM_RANGES[name];
    const v = p[name];
    if (!(Number.isFinite(v) && v >= lo && v <= hi)) throw new RangeError(`${name} must be in [${lo}, ${hi}], got ${v}`);
  }
  if (p.alpha === 0 && p.beta === 0) throw new RangeError('alpha and beta cannot both be 0');
  return p;
}

/**
 * What happened to one view. Only `counted` views touch PV, UV and the score; `repeat`, `budget` and
 * `flagged` are the suspicious kinds, counted apart (note 2: "将可疑请求计入独立指标，不进入 PV/UV").
 * - `repeat`: the same visitor viewed the same item within the rate-limit window;
 * - `budget`: the visitor exceeded its per-minute view budget across items;
 * - `flagged`: the caller marked the view as suspicious;
 * - `expired`: the item is older than the retention, its counters are archived (not suspicious);
 * - `unknown`: no publication time is registered for the item (the service resolves it).
 */
export type ViewVerdict = 'counted' | 'repeat' | 'budget' | 'flagged' | 'expired' | 'unknown';

/** The suspicious kinds of view, in the order their counters are reported. */
export const SUSPICIOUS_KINDS = ['repeat', 'budget', 'flagged'] as const;
export type SuspiciousKind = (typeof SUSPICIOUS_KINDS)[number];

/** Suspicious views by kind. */
export type SuspiciousCounts = Record<SuspiciousKind, number>;

/** All-zero {@link SuspiciousCounts}. */
export function noSuspicious(): SuspiciousCounts {
  return { repeat: 0, budget: 0, flagged: 0 };
}

/** The minute a view falls in, for the per-visitor budget (fixed one-minute windows of epoch time). */
export function budgetMinute(nowMs: number): number {
  return Math.floor(nowMs / 60_000);
}

/** Default `range` of `GET /v1/hot` (note 2's example `range=72h`). */
export const DEFAULT_RANGE = '72h';
/** Largest accepted `range`: 30 days (older items barely score: (720 + 2)^1.5 ≈ 19,400). */
export const MAX_RANGE_MS = 30 * DAY_MS;

/**
 * Parses a `range` such as `72h` or `3d` (an integer ≥ 1 with unit `h` or `d`) into ms.
 * @returns the duration, or null when malformed, zero, or over {@link MAX_RANGE_MS}.
 */
export function parseRange(text: string): number | null {
  const m = /^([0-9]{1,5})([hd])$/.exec(text);
  if (!m) return null;
  const ms = Number(m[1]) * (m[2] === 'h' ? HOUR_MS : DAY_MS);
  return ms >= HOUR_MS && ms <= MAX_RANGE_MS ? ms : null;
}
