/** The kernel's small hashes keep their published values, so simulations and replays pick the same readers and posts. */
import { describe, expect, it } from 'vitest';
import { fmix32, fnv1a, murmur3 } from '../../src/kernel/hash.js';

describe('kernel hashes', () => {
  it('fnv1a is 32-bit FNV-1a (the reference test vectors); a seed gives another hash', () => {
    // FNV-1a 32-bit test vectors of the algorithm's authors (Fowler, Noll, Vo): "", "a", "foobar"
    expect([fnv1a(''), fnv1a('a'), fnv1a('foobar')]).toEqual([0x811c9dc5, 0xe40c292c, 0xbf9cf968]);
    expect(fnv1a('u_10086', 0x9e3779b9)).not.toBe(fnv1a('u_10086'));
    expect(fnv1a('', 0x9e3779b9)).toBe((0x811c9dc5 ^ 0x9e3779b9) >>> 0);
  });

  it('fmix32 is MurmurHash3\'s finalizer: MurmurHash3 of "" with seed s is fmix32(s)', () => {
    // MurmurHash3_x86_32("", seed) test vectors: seeds 0, 1 and 0xffffffff (an unsigned answer ≥ 2^31)
    expect([fmix32(0), fmix32(1), fmix32(0xffffffff)]).toEqual([0, 0x514e28b7, 0x81f16f39]);
    expect(murmur3('')).toBe(fmix32(0));
  });
});
