/**
 * A seeded pseudo-random generator for simulations, replays and benchmarks, so a run with the same
 * seed builds the same data and makes the same choices. Not for anything secret.
 */

/**
 * mulberry32 (Tommy Ettinger, public domain): 32 bits of state, period 2^32, good enough to pick
 * readers, items and timings in a simulation.
 * @param seed any integer (taken mod 2^32).
 * @returns a function giving the next number in [0, 1).
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
