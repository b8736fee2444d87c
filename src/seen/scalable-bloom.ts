/**
 * Geometry of the per-reader scalable Bloom filter (design note 3's "what I'd improve"): pure maths,
 * shared by the in-process and the Redis adapters so both set the same bits for the same member.
 *
 * Almeida, Baquero, Preguiça & Hutchison 2007, "Scalable Bloom Filters": sub-filter i holds
 * n_i = n_0 · s^i members at error p_i = p_0 · r^i; the compound rate is ≤ Σ p_i = p_0 / (1 − r), so
 * p_0 = P · (1 − r) keeps the whole filter at P however many sub-filters open. Freshet uses growth
 * s = 2 and tightening r = 0.5 (the paper's recommendation for fast growth, and RedisBloom's default
 * expansion). Each sub-filter is sized by Broder & Mitzenmacher 2004 via {@link sizeWindow} (one
 * filter, D = 1): m_i = ⌈−n_i ln p_i / ln²2⌉, k_i = round(m_i/n_i · ln 2). Members are hashed once
 * (`hashPairs`: MurmurHash3 pair of `{reader}:{item}`) and placed in sub-filter i by double hashing
 * g_j = (h1 + j·h2) mod m_i (Kirsch & Mitzenmacher 2006).
 *
 * All sub-filters of a reader live in ONE bitmap (one Redis string): sub-filter i occupies the bits
 * [offset_i, offset_i + m_i), offsets rounded up to whole bytes. Redis grows a string only up to its
 * highest set bit, so unopened sub-filters cost nothing.
 */
import { MAX_BITS, sizeWindow, type BloomGeometry } from './bloom.js';

/** Growth ratio s of capacities (Almeida et al. 2007; RedisBloom's default expansion). */
export const GROWTH = 2;
/** Tightening ratio r of error rates (Almeida et al. 2007). */
export const TIGHTENING = 0.5;

/** One sub-filter's place and shape in the reader's bitmap. */
export interface SubFilterGeometry {
  /** Index i (0 = the first). */
  level: number;
  /** First bit of the sub-filter in the bitmap (a multiple of 8). */
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

/**
 * Every sub-filter that fits a 2^32-bit Redis string, in order (about 11 at n_0 = 100,000, P = 1 %;
 * that is over 200 million members).
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
      g = sizeWindow(capacity, rate, 1);
    } catch {
      break; // one sub-filter over 2^32 bits: no more levels
    }
    if (offset + g.bits > MAX_BITS) break;
    out.push({ level, offset, bits: g.bits, hashes: g.hashes, capacity, rate });
    offset += Math.ceil(g.bits / 8) * 8;
  }
  if (out.length === 0) throw new RangeError('the first sub-filter does not fit a 2^32-bit bitmap');
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

/**
 * A short signature of the geometry (`n0:P`): a filter written under another configuration is not
 * read with this one (its bits would mean nothing) — it is dropped and starts again.
 */
export function geometrySignature(initialCapacity: number, errorRate: number): string {
  return `${initialCapacity}:${errorRate}:s${GROWTH}:r${TIGHTENING}`;
}
