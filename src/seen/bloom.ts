/**
 * Bloom-filter geometry and hashing for the seen filter (docs/for-you.md), shared by every adapter so the
 * in-process filter and the Redis bitmaps set exactly the same bits for the same member.
 *
 * Sizing (Broder & Mitzenmacher 2004): bits per item m/n = -ln p / ln²2, hashes k = (m/n)·ln 2.
 * Positions by double hashing g_i = (h1 + i·h2) mod m (Kirsch & Mitzenmacher 2006), with h1, h2
 * two 32-bit MurmurHash3 values of the member. Both are exact in IEEE doubles (< 2^37), so the Lua
 * side computes the same positions.
 *
 * The window: a reader's member is checked against D daily filters; an unseen member is wrongly
 * dropped when ANY of them answers "maybe", so the rate of the whole check is 1-(1-p)^D. With D = 7
 * filters at 1 % each that is 6.8 %; {@link sizeWindow} instead sizes each day for the whole check.
 */
import { DAY_MS, startOfDay } from '../kernel/clock.js';
import { murmur3PairInto } from '../kernel/hash.js';

/** The shape of one day's filter and what it promises. */
export interface BloomGeometry {
  /** Bitmap size in bits (m). */
  bits: number;
  /** Hash functions per member (k). */
  hashes: number;
  /** Members one filter holds at the promised rate (n). */
  capacity: number;
  /** Target false-positive rate of one filter at capacity (p). */
  perFilterRate: number;
  /** Target false-positive rate of the whole window check (P = 1-(1-p)^D). */
  windowRate: number;
  /** Number of filters checked together (D). */
  days: number;
}

/** Largest bitmap Redis can hold (a 512 MiB string). */
export const MAX_BITS = 2 ** 32;

/**
 * Sizes one day's filter so that checking `days` of them at capacity wrongly drops an unseen member
 * with probability `windowRate`: p = 1 - (1 - P)^(1/D), m = ceil(-n ln p / ln²2), k = round(m/n · ln 2).
 * @throws RangeError for capacity < 1, a rate outside (0, 1), days < 1, or a bitmap over 2^32 bits.
 */
export function sizeWindow(capacity: number, windowRate: number, days: number): BloomGeometry {
  if (!(capacity >= 1) || !Number.isFinite(capacity)) throw new RangeError('capacity must be >= 1');
  if (!(windowRate > 0 && windowRate < 1)) throw new RangeError('windowRate must be in (0, 1)');
  if (!(days >= 1)) throw new RangeError('days must be >= 1');
  const perFilterRate = 1 - (1 - windowRate) ** (1 / days);
  const bits = Math.ceil((-capacity * Math.log(perFilterRate)) / (Math.LN2 * Math.LN2));
  if (bits > MAX_BITS) throw new RangeError(`a ${bits}-bit filter exceeds Redis's 2^32-bit strings`);
  const hashes = Math.max(1, Math.round((bits / capacity) * Math.LN2));
  return { bits, hashes, capacity, perFilterRate, windowRate, days };
}

/**
 * Expected false-positive rate of one filter holding `members` members:
 * (1 - e^{-k·n/m})^k. Beyond capacity it grows quickly: a filter sized for p = 0.14 % holds ≈ 6.1 % at 2× capacity.
 */
export function expectedRate(g: BloomGeometry, members: number): number {
  return (1 - Math.exp((-g.hashes * members) / g.bits)) ** g.hashes;
}

/** Expected rate of the whole D-filter check when each filter holds `members`: 1-(1-p)^D. */
export function expectedWindowRate(g: BloomGeometry, members: number): number {
  return 1 - (1 - expectedRate(g, members)) ** g.days;
}

/** The k bit positions of a member, from its hash pair: g_i = (h1 + i·h2) mod m, i = 0..k-1. */
export function positions(g: BloomGeometry, h1: number, h2: number): number[] {
  const out = new Array<number>(g.hashes);
  for (let i = 0; i < g.hashes; i++) out[i] = (h1 + i * h2) % g.bits;
  return out;
}

/** The Bloom member of the for-you design for a reader and an item: `{reader}:{item}` (e.g. `u_10086:doc_9527`). */
export function seenMember(readerId: string, itemId: string): string {
  return `${readerId}:${itemId}`;
}

/**
 * When a day's filter dies (epoch ms): the start of the day AFTER the last day whose window still
 * includes it, i.e. startOfDay(dayMs) + days · 24 h. Marked on day D with a 7-day window, a member
 * is remembered through D+6 and forgotten at 00:00 UTC of D+7.
 */
export function seenDayEnd(dayMs: number, days: number): number {
  return startOfDay(dayMs) + days * DAY_MS;
}

/** Start (epoch ms) of a `YYYYMMDD` UTC day (the inverse of `dayStamp`). */
export function dayStartMs(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)));
}

/** Epoch ms inside each day of the window ending at `nowMs`, today first: now, now − 1 d, … */
export function seenWindow(nowMs: number, days: number): number[] {
  const out = new Array<number>(days);
  for (let i = 0; i < days; i++) out[i] = nowMs - i * DAY_MS;
  return out;
}

/**
 * MurmurHash3 pair ({@link hashPair}, src/kernel/hash.ts) of every `{readerId}:{itemId}` member, as [h1, h2, h1, h2, …] (2 per item).
 * Each member is encoded once into a reused buffer (UTF-8; a plain byte copy for ASCII ids) and both
 * MurmurHash3 seeds run in one pass — about 4× faster than the `murmurhash` package, which allocates
 * a TextEncoder and an array per call (the test suite checks the values against MurmurHash3's
 * published test vectors, and the bits of known members, so the layout of stored bitmaps never moves).
 * This is the hot path of the seen check (500 candidates per refresh).
 */
export function hashPairs(readerId: string, itemIds: readonly string[]): Uint32Array {
  const out = new Uint32Array(2 * itemIds.length);
  for (let n = 0; n < itemIds.length; n++) {
    murmur3PairInto(seenMember(readerId, itemIds[n]!), out, 2 * n);
  }
  return out;
}

/**
 * Whether all k bits of a member are set in a bitmap in Redis bit order (bit 0 = the most
 * significant bit of byte 0), walking g_0 = first, g_{i+1} = (g_i + step) mod m and stopping at the
 * first 0 bit. `first` = h1 mod m and `step` = h2 mod m of the member's {@link hashPair}. Bytes past
 * the end of `bitmap` read as 0 (a Redis string grown by SETBIT stops at its highest set bit).
 * The one bit test of the engine: the memory adapter and the Redis adapter's cached days use it.
 */
export function hasAllBits(bitmap: Uint8Array, m: number, k: number, first: number, step: number): boolean {
  let g = first;
  for (let i = 0; i < k; i++) {
    // an index past the end gives undefined, and undefined & mask is 0
    if ((bitmap[g >>> 3]! & (0x80 >>> (g & 7))) === 0) return false;
    g += step;
    if (g >= m) g -= m;
  }
  return true;
}

/**
 * Sets the k bits of a member (the walk of {@link hasAllBits}) in a bitmap in Redis bit order: what a
 * mark does in process, and how a checkpointed journal of hash pairs is replayed into a day bitmap.
 * @returns whether any of the bits was 0 before (the member set a new bit).
 */
export function setAllBits(bitmap: Uint8Array, m: number, k: number, first: number, step: number): boolean {
  let g = first;
  let changed = 0;
  for (let i = 0; i < k; i++) {
    const mask = 0x80 >>> (g & 7);
    changed |= ~bitmap[g >>> 3]! & mask;
    bitmap[g >>> 3]! |= mask;
    g += step;
    if (g >= m) g -= m;
  }
  return changed !== 0;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Hash pairs ([h1, h2, …], {@link hashPairs}) packed as the scripts and journals take them: 8 bytes per
 * member, h1 then h2, little-endian uint32 — on a little-endian host the bytes of `pairs` themselves
 * (no copy).
 */
export function packPairs(pairs: Uint32Array): Buffer {
  const buf = Buffer.from(pairs.buffer, pairs.byteOffset, pairs.byteLength);
  return LITTLE_ENDIAN ? buf : Buffer.from(buf).swap32();
}

/**
 * Packed hash pairs (8 bytes per member: h1 then h2, little-endian uint32 — the scripts' format and
 * the journals') as [h1, h2, h1, h2, …]. Endian-safe and alignment-free (a Buffer from a driver may
 * start at any offset).
 * @throws RangeError when the length is not a multiple of 8.
 */
export function unpackPairs(packed: Uint8Array): Uint32Array {
  if (packed.length % 8 !== 0)
    throw new RangeError(`packed hash pairs of ${packed.length} bytes (not a multiple of 8)`);
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const out = new Uint32Array(packed.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getUint32(4 * i, true);
  return out;
}

/**
 * A Bloom filter's false-positive rate estimated from its fill: (set bits / m)^k — the chance that k
 * independent positions all read 1 (Broder & Mitzenmacher 2004, §2.1, with the measured fill in place of
 * the expected 1 − e^{−kn/m}). `setBits` is the bitmap's population count (Redis `BITCOUNT`).
 */
export function fillRate(setBits: number, m: number, k: number): number {
  return Math.min(1, setBits / m) ** k;
}

/** Bits set in `bitmap` (what Redis `BITCOUNT` answers for the same bytes). */
export function popCount(bitmap: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < bitmap.length; i++) {
    let b = bitmap[i]!;
    while (b !== 0) {
      b &= b - 1;
      n++;
    }
  }
  return n;
}

/** The chance that at least one of several filters answers wrongly: 1 − Π (1 − rate_i). */
export function unionRate(rates: readonly number[]): number {
  // −expm1(Σ log1p(−r)): exact for the tiny rates of lightly filled filters, where 1 − Π loses them
  return -Math.expm1(rates.reduce((s, r) => s + Math.log1p(-r), 0));
}

/** `YYYYMMDD` → `YYYY-MM-DD` (how the explain API names a day filter). */
export function isoDay(stamp: string): string {
  return `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}`;
}
