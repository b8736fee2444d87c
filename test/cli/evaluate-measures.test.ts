/**
 * What `freshet evaluate` measures with, below the engine: the metrics equal hand-computed values on a small
 * fixture; the per-reader split is seeded and deterministic (independent of the file's order), holds out
 * round(n × fraction) of each evaluated reader's ratings, and its time variant holds out the latest; the
 * baselines on a tiny matrix — MostPop's order, ItemKNN's neighbours and scores equal to a brute-force
 * computation of the same definition, Random's lists.
 */
import { describe, expect, it } from 'vitest';
import {
  catalogCoverage,
  hitAtK,
  ndcgAtK,
  precisionAtK,
  recallAtK,
  scoreLists,
} from '../../src/cli/evaluate/metrics.js';
import { splitRatings, type SplitOptions } from '../../src/cli/evaluate/split.js';
import type { Ratings } from '../../src/cli/evaluate/ratings.js';
import {
  itemKnnLists,
  itemNeighbours,
  knnScores,
  mostPopLists,
  randomLists,
} from '../../src/cli/evaluate/baselines.js';
import { prng } from '../../src/kernel/prng.js';

describe('metrics equal hand-computed values', () => {
  const list = ['a', 'b', 'c', 'd', 'e'];
  const held = new Set(['b', 'd', 'x']);
  const log2 = Math.log2;

  it('P@k, R@k, nDCG@k and HR@k of one list at two cut-offs', () => {
    // k = 5: hits at ranks 2 and 4 of 3 held-out items
    expect(precisionAtK(list, held, 5)).toBe(2 / 5);
    expect(recallAtK(list, held, 5)).toBe(2 / 3);
    expect(ndcgAtK(list, held, 5)).toBeCloseTo(0.498189257466, 12);
    expect((1 / log2(3) + 1 / log2(5)) / (1 + 1 / log2(3) + 1 / log2(4))).toBeCloseTo(0.498189257466, 12);
    expect(hitAtK(list, held, 5)).toBe(1);
    // k = 3: the hit at rank 2 only; the ideal DCG is over min(3, 3) places
    expect(precisionAtK(list, held, 3)).toBe(1 / 3);
    expect(recallAtK(list, held, 3)).toBe(1 / 3);
    expect(ndcgAtK(list, held, 3)).toBeCloseTo(0.296081910966, 12);
    // k = 1: a miss
    expect([precisionAtK(list, held, 1), recallAtK(list, held, 1), ndcgAtK(list, held, 1)]).toEqual([0, 0, 0]);
    expect(hitAtK(list, held, 1)).toBe(0);
  });

  it('a list shorter than k counts its empty places as misses; the ideal DCG is over min(k, |held-out|)', () => {
    const rel = new Set(['x', 'y']);
    expect(precisionAtK(['x'], rel, 10)).toBe(0.1);
    expect(recallAtK(['x'], rel, 10)).toBe(0.5);
    expect(ndcgAtK(['x'], rel, 10)).toBeCloseTo(1 / (1 + 1 / log2(3)), 12); // 0.6131…
    expect(ndcgAtK(['y', 'x'], rel, 10)).toBe(1);
    expect([recallAtK(['x'], new Set(), 10), ndcgAtK(['x'], new Set(), 10)]).toEqual([0, 0]);
  });

  it('coverage counts distinct items in the first k of every list over the catalog; scoreLists averages', () => {
    expect(catalogCoverage([[1, 2], [2, 3], []], 1, 10)).toBe(0.2);
    expect(catalogCoverage([[1, 2], [2, 3], []], 2, 10)).toBe(0.3);
    const m = scoreLists(
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
      [new Set(['a']), new Set(['z', 'd'])],
      2,
      8,
    );
    expect(m.precision).toBe((1 / 2 + 1 / 2) / 2);
    expect(m.recall).toBe((1 + 1 / 2) / 2);
    expect(m.ndcg).toBeCloseTo((1 + 1 / log2(3) / (1 + 1 / log2(3))) / 2, 12);
    expect(m.hitRate).toBe(1);
    expect(m.coverage).toBe(4 / 8);
    expect(() => scoreLists([['a']], [], 2, 8)).toThrow(RangeError);
  });
});

/** Ratings from `[reader, item, time]` triples, in the given order (as a file would list them). */
function ratings(triples: readonly [string, string, number][]): Ratings {
  const r: Ratings = { readers: [], items: [], byReader: [], count: 0, duplicates: 0 };
  for (const [u, i, t] of triples) {
    let ui = r.readers.indexOf(u);
    if (ui < 0) ui = r.readers.push(u) - 1;
    r.byReader[ui] ??= { items: [], times: [] };
    let ii = r.items.indexOf(i);
    if (ii < 0) ii = r.items.push(i) - 1;
    r.byReader[ui]!.items.push(ii);
    r.byReader[ui]!.times.push(t);
    r.count++;
  }
  return r;
}

/** Reader key → its held-out and train item keys, for comparing splits across files. */
function byKey(r: Ratings, o: SplitOptions): Record<string, { train: string[]; test: string[] }> {
  const s = splitRatings(r, o);
  return Object.fromEntries(
    s.readers.map((x, u) => [
      r.readers[u]!,
      { train: x.train.map((i) => r.items[i]!), test: x.test.map((i) => r.items[i]!) },
    ]),
  );
}

describe('the per-reader split', () => {
  const sizes = { a: 20, b: 10, c: 3, d: 2, e: 1 } as const;
  const triples: [string, string, number][] = Object.entries(sizes).flatMap(([u, n]) =>
    Array.from({ length: n }, (_, j): [string, string, number] => [u, `${u}${j}`, 1000 + ((j * 7) % n)]),
  );
  const opts: SplitOptions = { kind: 'random', testFraction: 0.2, seed: 42, minRatings: 2 };

  it('holds out round(n × fraction) of each reader (1 ≤ held-out ≤ n − 1); fewer than min-ratings: train only', () => {
    const s = byKey(ratings(triples), opts);
    expect(Object.fromEntries(Object.entries(s).map(([u, x]) => [u, [x.train.length, x.test.length]]))).toEqual({
      a: [16, 4],
      b: [8, 2],
      c: [2, 1],
      d: [1, 1],
      e: [1, 0],
    });
    for (const [u, x] of Object.entries(s)) {
      expect(new Set([...x.train, ...x.test]).size).toBe(sizes[u as keyof typeof sizes]); // disjoint, complete
    }
    const evaluated = splitRatings(ratings(triples), { ...opts, minRatings: 4 }).evaluated;
    expect(evaluated).toEqual([0, 1]); // a, b
    expect(() => splitRatings(ratings(triples), { ...opts, minRatings: 1 })).toThrow(RangeError);
    expect(() => splitRatings(ratings(triples), { ...opts, testFraction: 1 })).toThrow(RangeError);
  });

  it('is seeded: the same seed gives the same split whatever the file order; another seed another', () => {
    const shuffled = triples.slice();
    const next = prng(7);
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    const first = byKey(ratings(triples), opts);
    expect(byKey(ratings(shuffled), opts)).toEqual(first);
    expect(byKey(ratings(triples), opts)).toEqual(first);
    expect(byKey(ratings(triples), { ...opts, seed: 43 }).a!.test).not.toEqual(first.a!.test);
  });

  it('lists train and held-out oldest first; the time split holds out the latest (ties by item key)', () => {
    const r = ratings([
      ['u', 'i5', 50],
      ['u', 'i1', 10],
      ['u', 'i4', 40],
      ['u', 'i3b', 30],
      ['u', 'i3a', 30],
      ['u', 'i2', 20],
      ['u', 'i6', 60],
      ['u', 'i7', 70],
      ['u', 'i9', 90],
      ['u', 'i8', 80],
    ]);
    const time = byKey(r, { ...opts, kind: 'time', testFraction: 0.3 }).u!;
    expect(time).toEqual({ train: ['i1', 'i2', 'i3a', 'i3b', 'i4', 'i5', 'i6'], test: ['i7', 'i8', 'i9'] });
    const random = byKey(r, opts).u!;
    const order = ['i1', 'i2', 'i3a', 'i3b', 'i4', 'i5', 'i6', 'i7', 'i8', 'i9'];
    expect(random.train).toEqual(order.filter((i) => random.train.includes(i)));
    expect(random.test).toEqual(order.filter((i) => random.test.includes(i)));
  });
});

describe('the baselines on a tiny matrix', () => {
  // readers × items (1 = in train), 6 readers, 6 items
  const matrix = [
    [1, 1, 0, 0, 1, 0],
    [1, 1, 1, 0, 0, 0],
    [0, 1, 1, 1, 0, 0],
    [1, 0, 0, 1, 1, 0],
    [0, 1, 0, 0, 0, 0],
    [1, 1, 0, 0, 0, 1],
  ];
  const train = matrix.map((row) => row.flatMap((x, j) => (x ? [j] : [])));
  const readers = [0, 1, 2, 3, 4, 5];

  it('MostPop: by train count, ties by index, without the reader’s own items', () => {
    // counts: item0 4, item1 5, item2 2, item3 2, item4 2, item5 1
    expect(mostPopLists(train, readers, 6, 3)).toEqual([
      [2, 3, 5],
      [3, 4, 5],
      [0, 4, 5],
      [1, 2, 5],
      [0, 2, 3],
      [2, 3, 4],
    ]);
  });

  it('ItemKNN: neighbours and scores equal a brute-force cosine over the dense matrix', () => {
    const rnd = prng(3);
    const big = Array.from({ length: 40 }, () => Array.from({ length: 25 }, () => (rnd() < 0.25 ? 1 : 0)));
    const bigTrain = big.map((row) => row.flatMap((x, j) => (x ? [j] : [])));
    for (const neighbours of [2, 5, 100]) {
      const model = itemNeighbours(bigTrain, 25, neighbours);
      const brute = bruteNeighbours(big, neighbours);
      for (let i = 0; i < 25; i++) {
        const mine = [...model.items.subarray(model.offsets[i]!, model.offsets[i + 1]!)];
        expect(mine, `item ${i}`).toEqual(brute[i]!.map(([j]) => j));
        const sims = [...model.sims.subarray(model.offsets[i]!, model.offsets[i + 1]!)];
        sims.forEach((s, p) => expect(s).toBeCloseTo(brute[i]![p]![1], 12));
      }
      const lists = itemKnnLists(bigTrain, [0, 7, 19, 33], model, 5);
      [0, 7, 19, 33].forEach((u, n) => {
        const scores = bruteScores(bigTrain[u]!, brute);
        const got = knnScores(bigTrain[u]!, model);
        expect([...got.keys()].sort((a, b) => a - b)).toEqual([...scores.keys()].sort((a, b) => a - b));
        for (const [j, s] of scores) expect(got.get(j)).toBeCloseTo(s, 12);
        const ranked = [...scores].filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
        expect(lists[n]).toEqual(ranked.slice(0, 5).map(([j]) => j));
      });
    }
  });

  it('Random: seeded, k distinct items outside the reader’s train set, fewer when the catalog runs out', () => {
    const a = randomLists(train, readers, 6, 2, 42);
    expect(randomLists(train, readers, 6, 2, 42)).toEqual(a);
    a.forEach((list, u) => {
      expect(new Set(list).size).toBe(2);
      for (const j of list) expect(train[u]).not.toContain(j);
    });
    expect(randomLists(train, [5], 6, 10, 1)[0]!.sort()).toEqual([2, 3, 4]);
  });
});

/** Each item's `k` most similar items by cosine over the dense 0/1 matrix: [item, sim], sim > 0, best first, ties by index. */
function bruteNeighbours(m: number[][], k: number): [number, number][][] {
  const n = m[0]!.length;
  const col = (j: number) => m.map((row) => row[j]!);
  const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
  return Array.from({ length: n }, (_, i) => {
    const sims: [number, number][] = [];
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      const c = dot(col(i), col(j));
      if (c > 0) sims.push([j, c / Math.sqrt(dot(col(i), col(i)) * dot(col(j), col(j)))]);
    }
    return sims.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
  });
}

/** Σ sim(i, j) over the reader's items i whose neighbours hold j, j not the reader's. */
function bruteScores(own: number[], nbrs: [number, number][][]): Map<number, number> {
  const out = new Map<number, number>();
  for (const i of own) for (const [j, s] of nbrs[i]!) if (!own.includes(j)) out.set(j, (out.get(j) ?? 0) + s);
  return out;
}
