/**
 * Small non-cryptographic string hashes shared by the engine, each written once: FNV-1a (stable
 * picks in simulations and replays: which reader gets interests, which post a log item lands on)
 * and MurmurHash3's 32-bit finalizer. The seen filter's MurmurHash3 itself is in seen/bloom.ts.
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
