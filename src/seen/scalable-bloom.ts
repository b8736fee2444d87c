/**
 * Geometry of the per-reader scalable Bloom filter (the discover design's "what I'd improve"): pure maths,
 * shared by the in-process and the Redis adapters so both set the same bits for the same member.
 *
 * Almeida, Baquero, Preguiça & Hutchison 2007, "Scalable Bloom Filters": sub-filter i holds
 * n_i = n_0 · s^i members at error p_i = p_0 · r^i; the compound rate is ≤ Σ p_i = p_0 / (1 − r), so
 * p_0 = P · (1 − r) keeps the whole filter at P however many sub-filters open. Freshet uses growth
 * s = 2 and tightening r = 0.5 (the paper's recommendation for fast growth, and RedisBloom's defaults:
 * `BF.RESERVE` expansion 2, tightening 0.5, capacity 100). Each sub-filter is sized by Broder &
 * Mitzenmacher 2004 via {@link sizeWindow} (one filter, D = 1): m_i = ⌈−n_i ln p_i / ln²2⌉,
 * k_i = round(m_i/n_i · ln 2). Members are hashed once (`hashPairs`: MurmurHash3 pair of
 * `{reader}:{item}`) and placed in sub-filter i by double hashing g_j = (h1 + j·h2) mod m_i
 * (Kirsch & Mitzenmacher 2006).
 *
 * The geometry is named by a SIGNATURE, `<n0>:<P>:s2:r0.5:split`, stored with every filter (Redis `g`,
 * checkpoint subjects, snapshots), so a filter is always read under the geometry it was written with.
 * On Redis each sub-filter is a string of its own (`Keys.readerSeen` for 0, `Keys.readerSeenLevel` for
 * i ≥ 1), created at its own size when it opens — a light reader pays for its first sub-filter only
 * (149 B at n0 = 100, P = 1 %) — and none over {@link MAX_LEVEL_BITS} (2 MiB, created without a stall;
 * layout.ts). In process, in snapshots and in checkpoints a filter is the concatenation of its open
 * sub-filters at byte-aligned offsets.
 */
import type { SeenProbe } from '../kernel/seen-filter.js';
import { sizeWindow, type BloomGeometry } from './bloom.js';

/** Growth ratio s of capacities (Almeida et al. 2007; RedisBloom's default expansion). */
export const GROWTH = 2;
/** Tightening ratio r of error rates (Almeida et al. 2007). */
export const TIGHTENING = 0.5;
/**
 * Largest sub-filter (bits): 2 MiB less 16 bytes (room for the string's header within
 * jemalloc's 2 MiB size class, as layout.ts's MAX_SHARD_BITS), created without a stall.
 */
export const MAX_LEVEL_BITS = 8 * (2 ** 21 - 16);

/**
 * What a sub-filter is sized for, below its share of P: its rate p_i ÷ 1.5. The
 * classic rate (1 − e^{−kn/m})^k underestimates small filters hashed by double hashing: measured at
 * capacity, 0.59 % for the 100-member first sub-filter sized for 0.5 %, +15–22 % up to 3,200 members
 * (a step h2 mod m of 0 alone puts all k probes on one bit once in m members). Without the margin the
 * compound rate of a grown filter measured 1.14–1.29 % for a target of 1 % (bench/seen-strategies.ts,
 * bench/seen-reader-growth.ts); with ÷ 1.25 at most 1.04 %; with ÷ 1.5 at most 0.81 % (400,000 probes
 * per size from 100 to 100,000 members). It costs ln(1.5) / ln²2 = 0.84 bits per member (~2–8 %).
 */
export const SMALL_FILTER_MARGIN = 1.5;

/** One sub-filter's place and shape in the reader's bitmap. */
export interface SubFilterGeometry {
  /** Index i (0 = the first). */
  level: number;
  /** First bit of the sub-filter in the concatenated bitmap (a multiple of 8). */
  offset: number;
  /** Bits m_i. */
  bits: number;
  /** Hashes k_i. */
  hashes: number;
  /** Members n_i = n_0 · 2^i. */
  capacity: number;
  /** Target rate p_i = P (1 − r) r^i. */
  rate: number;
}

/** A filter's geometry as its signature names it. */
export interface ScalableGeometry {
  signature: string;
  initialCapacity: number;
  errorRate: number;
  levels: SubFilterGeometry[];
}

/**
 * Every sub-filter that fits, in order, each in a string of at most {@link MAX_LEVEL_BITS} (13 at n0 = 100,
 * P = 1 %, that is 819,100 members).
 * @throws RangeError for capacity < 1, a rate outside (0, 1), or when even sub-filter 0 does not fit.
 */
export function scalableLevels(initialCapacity: number, errorRate: number): SubFilterGeometry[] {
  if (!(initialCapacity >= 1) || !Number.isInteger(initialCapacity))
    throw new RangeError('initialCapacity must be an integer >= 1');
  if (!(errorRate > 0 && errorRate < 1)) throw new RangeError('errorRate must be in (0, 1)');
  const out: SubFilterGeometry[] = [];
  let offset = 0;
  for (let level = 0; ; level++) {
    const capacity = initialCapacity * GROWTH ** level;
    const rate = errorRate * (1 - TIGHTENING) * TIGHTENING ** level;
    let g: BloomGeometry;
    try {
      g = sizeWindow(capacity, rate / SMALL_FILTER_MARGIN, 1);
    } catch {
      break; // one sub-filter over 2^32 bits: no more levels
    }
    if (g.bits > MAX_LEVEL_BITS) break;
    out.push({ level, offset, bits: g.bits, hashes: g.hashes, capacity, rate });
    offset += Math.ceil(g.bits / 8) * 8;
  }
  if (out.length === 0) throw new RangeError('the first sub-filter does not fit');
  return out;
}

/** Expected rate of one sub-filter holding `members`: (1 − e^{−k·c/m})^k. */
export function subFilterRate(g: SubFilterGeometry, members: number): number {
  return (1 - Math.exp((-g.hashes * members) / g.bits)) ** g.hashes;
}

/** Upper bound of the compound rate of sub-filters holding `members[i]`: Σ_i rate_i (union bound). */
export function compoundRate(levels: readonly SubFilterGeometry[], members: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < members.length && i < levels.length; i++) sum += subFilterRate(levels[i]!, members[i]!);
  return sum;
}

/** Bytes of a bitmap whose sub-filters 0..open-1 are in use (the whole last one counted). */
export function bitmapBytes(levels: readonly SubFilterGeometry[], open: number): number {
  if (open <= 0) return 0;
  const last = levels[Math.min(open, levels.length) - 1]!;
  return Math.ceil((last.offset + last.bits) / 8);
}

/** The byte range [from, to) of sub-filter `level` in the concatenated bitmap. */
export function levelBytes(g: SubFilterGeometry): [number, number] {
  return [g.offset / 8, g.offset / 8 + Math.ceil(g.bits / 8)];
}

/**
 * The signature a filter written by these settings carries (`n0:P:s2:r0.5:split`). A filter keeps
 * the signature it was written with for its life: a change of settings applies to filters started
 * after it.
 */
export function geometrySignature(initialCapacity: number, errorRate: number): string {
  return `${initialCapacity}:${errorRate}:s${GROWTH}:r${TIGHTENING}:split`;
}

const SIGNATURE = /^(\d+):([0-9.e+-]+):s2:r0\.5:split$/;
const parsed = new Map<string, ScalableGeometry | null>();

/**
 * The geometry a stored signature names (cached), or null when it is not one this version reads
 * (malformed, another growth or tightening): such a filter is treated as gone.
 */
export function parseSignature(signature: string): ScalableGeometry | null {
  let g = parsed.get(signature);
  if (g !== undefined) return g;
  const m = SIGNATURE.exec(signature);
  g = null;
  if (m) {
    const [initialCapacity, errorRate] = [Number(m[1]), Number(m[2])];
    try {
      g = { signature, initialCapacity, errorRate, levels: scalableLevels(initialCapacity, errorRate) };
    } catch {
      g = null;
    }
  }
  if (parsed.size < 1024) parsed.set(signature, g);
  return g;
}

/** The geometry of filters these settings start. */
export function scalableGeometry(initialCapacity: number, errorRate: number): ScalableGeometry {
  return parseSignature(geometrySignature(initialCapacity, errorRate))!;
}

/** A probe's answer from the sub-filter holding the member (null: none) and the counts of the filter. */
export function probeOf(g: ScalableGeometry, counts: readonly number[], level: number | null): SeenProbe {
  if (level === null) return { seen: false, day: null, subFilter: null, fpr: compoundRate(g.levels, counts) };
  return { seen: true, day: null, subFilter: level, fpr: subFilterRate(g.levels[level]!, counts[level]!) };
}
