/**
 * The hot ranking's pure rules (docs/hot.md): the time-decay score, its parameters and their valid
 * ranges, how old an item is in hours, view verdicts, and the `range` of `GET /v1/hot`.
 *
 * Score (the hot-ranking design, "时间衰减评分"):
 *
 *     score = (α·pv + β·uv) / (hours_since_publish + base)^γ
 *
 * with pv the counted page views, uv the HyperLogLog estimate of distinct visitors. The note's
 * recommended values α = 1.0, β = 1.2 (UV weighs a little more than PV), base = 2 (keeps a brand-new
 * item's denominator from being tiny), γ = 1.5 (holds up over a 24–72 h window without crushing
 * evergreen items); it reports γ ∈ [1.3, 1.8] as stable for news and tech communities, 1.3 for
 * evergreen content. The same shape is Hacker News' gravity (P − 1)/(T + 2)^1.8 (base 2, γ 1.8).
 */
import { HOUR_MS, DAY_MS } from '../kernel/clock.js';

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

/** The hot-ranking design's recommended values. */
export const DEFAULT_HOT_PARAMS: Readonly<HotParams> = { alpha: 1.0, beta: 1.2, base: 2, gamma: 1.5 };

/** Valid range of each parameter, inclusive (γ from the hot-ranking design; the others keep the score finite and meaningful). */
export const HOT_PARAM_RANGES: Readonly<Record<keyof HotParams, readonly [number, number]>> = {
  alpha: [0, 10],
  beta: [0, 10],
  base: [0.1, 48],
  gamma: [1.3, 1.8],
};

/**
 * Hours between publication and `nowMs` (both epoch ms); 0 when `nowMs` is not after the publication.
 * The publication counts in whole seconds, as the hot-ranking design stores `publishedAt` in Redis, so this is exactly
 * the note's Lua (`nowSec > pub`, `(nowSec - pub) / 3600`).
 */
export function hoursSincePublish(nowMs: number, publishedAtMs: number): number {
  const nowSec = nowMs / 1000;
  const publishedSec = Math.floor(publishedAtMs / 1000);
  return nowSec > publishedSec ? (nowSec - publishedSec) / 3600 : 0;
}

/**
 * The hot-ranking design's score: (α·pv + β·uv) / (hours + base)^γ. The Lua scripts compute the same expression in
 * the same order; results agree to the last bit or two (C `pow` vs V8's `Math.pow`).
 */
export function hotScore(pv: number, uv: number, hours: number, p: HotParams): number {
  const denominator = hotDenominator(hours, p);
  return denominator > 0 ? hotViews(pv, uv, p) / denominator : 0;
}

/** The numerator of {@link hotScore}: α·pv + β·uv (the weighted views). */
export function hotViews(pv: number, uv: number, p: HotParams): number {
  return p.alpha * pv + p.beta * uv;
}

/** The denominator of {@link hotScore}: (hours + base)^γ (the time decay divides by it). */
export function hotDenominator(hours: number, p: HotParams): number {
  return (hours + p.base) ** p.gamma;
}

/**
 * {@link hotScore} with its factors, as the explain API reports them: pv, uv, the weighted views, the
 * age in hours, the decay 1 / (hours + base)^γ, and the score itself (the same double `hotScore` gives).
 */
export function hotScoreParts(pv: number, uv: number, hours: number, p: HotParams) {
  const denominator = hotDenominator(hours, p);
  return {
    pv,
    uv,
    weighted_views: hotViews(pv, uv, p),
    age_hours: hours,
    decay: denominator > 0 ? 1 / denominator : 0,
    score: hotScore(pv, uv, hours, p),
  };
}

/**
 * Checks parameters against {@link HOT_PARAM_RANGES}.
 * @throws RangeError naming the first parameter out of range, or when α = β = 0 (every score 0).
 */
export function assertHotParams(p: HotParams): HotParams {
  for (const name of Object.keys(HOT_PARAM_RANGES) as (keyof HotParams)[]) {
    const [lo, hi] = HOT_PARAM_RANGES[name];
    const v = p[name];
    if (!(Number.isFinite(v) && v >= lo && v <= hi))
      throw new RangeError(`${name} must be in [${lo}, ${hi}], got ${v}`);
  }
  if (p.alpha === 0 && p.beta === 0) throw new RangeError('alpha and beta cannot both be 0');
  return p;
}

/**
 * Retention of the hot counters (`FRESHET_HOT_RETENTION_DAYS`), ms; {@link KEEP_FOREVER} (0) keeps every
 * item's counters: nothing is archived and no view is `expired` — for replays of old data on a running
 * server, whose archive pass runs on the wall clock (docs/hot.md "Retention").
 */
export const KEEP_FOREVER = 0;

/**
 * The publication time before which items are past the retention at `nowMs` (epoch ms), or null when
 * `retentionMs` is {@link KEEP_FOREVER}. An item published at p is past it when p < cutoff, i.e. when
 * `nowMs − p > retentionMs` (the test lua/hotView-9.lua makes).
 */
export function retentionCutoff(nowMs: number, retentionMs: number): number | null {
  return retentionMs === KEEP_FOREVER ? null : nowMs - retentionMs;
}

/**
 * What happened to one view. Only `counted` views touch PV, UV and the score; `repeat`, `budget` and
 * `flagged` are the suspicious kinds, counted apart (the hot-ranking design: "将可疑请求计入独立指标，不进入 PV/UV").
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

/** Default `range` of `GET /v1/hot` (the hot-ranking design's example `range=72h`). */
export const DEFAULT_RANGE = '72h';
/** Largest accepted `range`: 30 days (older items barely score: (720 + 2)^1.5 ≈ 19,400). */
export const MAX_RANGE_MS = 30 * DAY_MS;

/**
 * The `range` values `GET /v1/hot` accepts, as its query schema's pattern (so validation refuses the
 * rest with the field's description): 1h..720h or 1d..30d — up to {@link MAX_RANGE_MS} — without
 * leading zeros. test/hot/hot-domain.test.ts checks it against the bound for every count up to 1000.
 */
export const RANGE_PATTERN = '^(?:(?:[1-9]|[1-9][0-9]|[1-6][0-9]{2}|7[01][0-9]|720)h|(?:[1-9]|[12][0-9]|30)d)$';
const RANGE_RE = new RegExp(RANGE_PATTERN);

/**
 * Parses a `range` such as `72h` or `3d` (an integer ≥ 1 without leading zeros, unit `h` or `d`) into ms.
 * @returns the duration, or null when it does not match {@link RANGE_PATTERN} (malformed, zero, or
 *   over {@link MAX_RANGE_MS}).
 */
export function parseRange(text: string): number | null {
  const m = RANGE_RE.test(text) ? /^([0-9]+)([hd])$/.exec(text) : null;
  if (!m) return null;
  const ms = Number(m[1]) * (m[2] === 'h' ? HOUR_MS : DAY_MS);
  return ms >= HOUR_MS && ms <= MAX_RANGE_MS ? ms : null;
}
