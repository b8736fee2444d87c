/**
 * Small non-cryptographic string hashes shared by the engine, each written once: FNV-1a (stable
 * picks in simulations and replays: which reader gets interests, which post a log item lands on),
 * MurmurHash3 x86_32 (Austin Appleby; the seen filters' Bloom positions in src/seen/bloom.ts, and the
 * key builder's seen and hot shards in src/kernel/redis/keys.ts) and its 32-bit finalizer. Pure: no I/O.
 */

/**
 * 32-bit FNV-1a (Fowler–Noll–Vo) of a string's UTF-16 code units, unsigned. With `seed` ≠ 0 the
 * offset basis 0x811c9dc5 is XORed with it first (a second, independent-enough hash of the same text).
 */
export function fnv1a(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * MurmurHash3's 32-bit finalizer (`fmix32`, Austin Appleby): every input bit flips each output bit
 * with probability about 1/2, so the low bits of a weak hash become usable as an index. Unsigned.
 */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const SEED_1 = 0;
const SEED_2 = 0x9747b28c;

/**
 * The two 32-bit MurmurHash3 (x86_32) values of a member, seeds 0 and 0x9747b28c; h2 is forced odd
 * so the k positions never collapse to one. Same code as {@link murmur3PairInto} (one implementation).
 */
export function hashPair(member: string): [number, number] {
  const out = new Uint32Array(2);
  murmur3PairInto(member, out, 0);
  return [out[0]!, out[1]!];
}

/**
 * MurmurHash3 (x86_32, seed 0) of a string's UTF-8 bytes, unsigned: the h1 of {@link hashPair}. The
 * engine's one MurmurHash3 — the key builder picks seen and hot shards with it (src/kernel/redis/keys.ts).
 */
export function murmur3(text: string): number {
  return hashPair(text)[0];
}

/**
 * Writes the {@link hashPair} of `member` into `out[at]`, `out[at + 1]`: the allocation-free form the
 * seen filters' hot path uses (500 members a page). The member is encoded once into a reused buffer
 * (UTF-8; a plain byte copy for ASCII) and both seeds run in one pass — about 4× faster than the
 * `murmurhash` package, which allocates a TextEncoder and an array per call. test/kernel/hash.test.ts
 * checks the values against MurmurHash3's published test vectors, so stored bitmaps never move.
 */
export function murmur3PairInto(member: string, out: Uint32Array, at: number): void {
  const len = encode(member); // first: it may replace `scratch`
  murmur3Pair(scratch, len, out, at);
}

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;
let scratch = new Uint8Array(256);

const encoder = new TextEncoder();

/** Encodes `member` as UTF-8 into `scratch` (grown when needed). @returns its length in bytes. */
function encode(member: string): number {
  const len = member.length;
  if (scratch.length < 3 * len) scratch = new Uint8Array(4 * len);
  const bytes = scratch;
  for (let i = 0; i < len; i++) {
    const c = member.charCodeAt(i);
    if (c > 0x7f) return encoder.encodeInto(member, bytes).written;
    bytes[i] = c;
  }
  return len;
}

/** MurmurHash3 x86_32 of bytes[0..len) with seeds SEED_1 and SEED_2 at once; h2 forced odd. */
function murmur3Pair(bytes: Uint8Array, len: number, out: Uint32Array, at: number): void {
  let h1 = SEED_1 | 0;
  let h2 = SEED_2 | 0;
  const blocks = len & ~3;
  let i = 0;
  for (; i < blocks; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h1 ^= k;
    h1 = (h1 << 13) | (h1 >>> 19);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
    h2 ^= k;
    h2 = (h2 << 13) | (h2 >>> 19);
    h2 = (Math.imul(h2, 5) + 0xe6546b64) | 0;
  }
  const rest = len & 3;
  if (rest > 0) {
    let k = 0;
    if (rest === 3) k ^= bytes[i + 2]! << 16;
    if (rest >= 2) k ^= bytes[i + 1]! << 8;
    k ^= bytes[i]!;
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h1 ^= k;
    h2 ^= k;
  }
  out[at] = fmix32(h1 ^ len);
  out[at + 1] = (fmix32(h2 ^ len) | 1) >>> 0;
}
