/**
 * Implicit ALS (src/learn/als.ts): the Cholesky solve solves; the trained vectors rank a reader's held-out
 * items of its own taste group above the other group's; fold-in of a reader's own interactions gives the
 * vector training gave it (up to the conjugate-gradient steps); training is deterministic for a seed.
 */
import { describe, expect, it } from 'vitest';
import { prng } from '../../src/kernel/prng.js';
import { choleskySolve, foldIn, gram, trainAls, transpose, type Csr } from '../../src/learn/als.js';

/** Two taste groups: readers 0..n/2 engage with items 0..m/2, the others with the rest (density d). */
function groups(n: number, m: number, d: number, seed: number): { m: Csr; held: Map<number, number[]> } {
  const rand = prng(seed);
  const ptr = [0];
  const idx: number[] = [];
  const held = new Map<number, number[]>();
  for (let u = 0; u < n; u++) {
    const lo = u < n / 2 ? 0 : m / 2;
    const mine: number[] = [];
    for (let i = lo; i < lo + m / 2; i++) if (rand() < d) mine.push(i);
    held.set(u, mine.splice(0, 2)); // two items of its group kept out of training
    idx.push(...mine);
    ptr.push(idx.length);
  }
  const csr = {
    rows: n,
    cols: m,
    ptr: Int32Array.from(ptr),
    idx: Int32Array.from(idx),
    val: new Float32Array(idx.length).fill(1),
  };
  return { m: csr, held };
}

const SETTINGS = { factors: 2, regularization: 1, alpha: 10, iterations: 8, cgSteps: 3, seed: 3 };

describe('implicit ALS', () => {
  it('Cholesky solves a symmetric positive definite system', () => {
    const a = Float64Array.from([4, 1, 2, 1, 3, 0, 2, 0, 5]);
    const x = choleskySolve(a, Float64Array.from([1, 2, 3]), 3);
    const ax = [0, 1, 2].map((r) => a[r * 3]! * x[0]! + a[r * 3 + 1]! * x[1]! + a[r * 3 + 2]! * x[2]!);
    expect(ax[0]).toBeCloseTo(1, 10);
    expect(ax[1]).toBeCloseTo(2, 10);
    expect(ax[2]).toBeCloseTo(3, 10);
  });

  it('ranks held-out items of a reader’s own group above the other group’s (AUC > 0.95)', async () => {
    const { m, held } = groups(40, 40, 0.5, 1);
    const f = await trainAls(m, SETTINGS);
    let wins = 0;
    let total = 0;
    for (const [u, items] of held) {
      const score = (i: number) => {
        let s = 0;
        for (let a = 0; a < f.f; a++) s += f.readers[u * f.f + a]! * f.items[i * f.f + a]!;
        return s;
      };
      const other = u < 20 ? [20, 39] : [0, 19];
      for (const own of items)
        for (let i = other[0]!; i <= other[1]!; i++) {
          total++;
          if (score(own) > score(i)) wins++;
        }
    }
    // the area under the ROC curve of own (held out) against other items
    expect(wins / total).toBeGreaterThan(0.95);
  });

  it('fold-in of a reader’s training interactions gives (nearly) its trained vector', async () => {
    const { m } = groups(30, 30, 0.4, 2);
    const s = { ...SETTINGS, iterations: 6, cgSteps: 8 };
    const f = await trainAls(m, s);
    const yty = gram(f.items, m.cols, f.f);
    for (const u of [0, 7, 22]) {
      const entries = [];
      for (let k = m.ptr[u]!; k < m.ptr[u + 1]!; k++) entries.push({ row: m.idx[k]!, weight: m.val[k]! });
      const x = foldIn(f.items, yty, entries, s)!;
      for (let a = 0; a < f.f; a++) expect(x[a]).toBeCloseTo(f.readers[u * f.f + a]!, 3);
    }
    expect(foldIn(f.items, yty, [], s)).toBeNull();
  });

  it('is deterministic for a seed, and the transpose of the transpose is the matrix', async () => {
    const { m } = groups(12, 12, 0.5, 4);
    const a = await trainAls(m, SETTINGS);
    const b = await trainAls(m, SETTINGS);
    expect(a.items).toEqual(b.items);
    const tt = transpose(transpose(m));
    expect(tt.ptr).toEqual(m.ptr);
    expect(tt.idx).toEqual(m.idx);
  });
});
