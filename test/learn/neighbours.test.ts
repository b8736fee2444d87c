/**
 * Co-engagement neighbours (src/learn/neighbours.ts): each row equals a brute-force computation of the
 * documented formula on a small random matrix, rows keep the top k best first, and the stale set of a
 * change is exactly the rows that change.
 */
import { describe, expect, it } from 'vitest';
import { prng } from '../../src/kernel/prng.js';
import { EngagementGraph, type Interaction } from '../../src/learn/engagement-graph.js';
import { allRows, readerWeight, staleRows, type Neighbour } from '../../src/learn/neighbours.js';

/** A random sparse reader × item matrix (binary), as interactions. */
function randomPairs(seed: number, readers: number, items: number, density: number): Interaction[] {
  const rand = prng(seed);
  const out: Interaction[] = [];
  for (let u = 0; u < readers; u++)
    for (let i = 0; i < items; i++)
      if (rand() < density)
        out.push({ readerId: `r${u}`, itemId: `i${i}`, weight: 1 + Math.floor(rand() * 4), atMs: u * 1000 + i });
  return out;
}

/** The formula of the module doc, written out over plain sets. */
function bruteForce(pairs: readonly Interaction[], k: number, shrink: number): Map<string, Neighbour[]> {
  const holders = new Map<string, Set<string>>();
  const degree = new Map<string, number>();
  for (const p of pairs) {
    (holders.get(p.itemId) ?? holders.set(p.itemId, new Set()).get(p.itemId)!).add(p.readerId);
    degree.set(p.readerId, (degree.get(p.readerId) ?? 0) + 1);
  }
  const w = (u: string) => 1 / Math.log(1 + degree.get(u)!);
  const norm = (i: string) => [...holders.get(i)!].reduce((s, u) => s + w(u), 0);
  const out = new Map<string, Neighbour[]>();
  for (const [i, ui] of holders) {
    const row: Neighbour[] = [];
    for (const [j, uj] of holders) {
      if (j === i) continue;
      const shared = [...ui].filter((u) => uj.has(u));
      if (shared.length === 0) continue;
      const sum = shared.reduce((s, u) => s + w(u), 0);
      const score = (sum / Math.sqrt(norm(i) * norm(j))) * (shared.length / (shared.length + shrink));
      row.push({ itemId: j, score, shared: shared.length });
    }
    row.sort((a, b) => b.score - a.score || (a.itemId < b.itemId ? -1 : 1));
    out.set(i, row.slice(0, k));
  }
  return out;
}

function graphOf(pairs: readonly Interaction[], cap = 10_000): EngagementGraph {
  const g = new EngagementGraph(cap);
  g.apply(pairs);
  return g;
}

function expectRowsClose(actual: Map<string, Neighbour[]>, expected: Map<string, Neighbour[]>): void {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [i, row] of expected) {
    const got = actual.get(i)!;
    expect(
      got.map((n) => n.itemId),
      `row of ${i}`,
    ).toEqual(row.map((n) => n.itemId));
    got.forEach((n, x) => {
      expect(n.score).toBeCloseTo(row[x]!.score, 12);
      expect(n.shared).toBe(row[x]!.shared);
    });
  }
}

describe('co-engagement neighbours', () => {
  it('every row equals a brute-force computation of the formula (k = 5, λ = 3)', () => {
    const pairs = randomPairs(7, 40, 30, 0.15);
    expectRowsClose(allRows(graphOf(pairs).compact(), { k: 5, shrink: 3 }), bruteForce(pairs, 5, 3));
  });

  it('without shrinkage and with k past the catalog: every co-engaged item, best first', () => {
    const pairs = randomPairs(11, 25, 12, 0.3);
    const rows = allRows(graphOf(pairs).compact(), { k: 1000, shrink: 0 });
    expectRowsClose(rows, bruteForce(pairs, 1000, 0));
    for (const row of rows.values())
      for (let x = 1; x < row.length; x++) expect(row[x]!.score).toBeLessThanOrEqual(row[x - 1]!.score);
  });

  it('a reader of many items weighs less than one of few (inverse user frequency)', () => {
    expect(readerWeight(1)).toBeGreaterThan(readerWeight(10));
    expect(readerWeight(10)).toBeGreaterThan(readerWeight(1000));
    // a and b are shared by one reader of 2 items; a and c by one reader of 50 items
    const pairs: Interaction[] = [
      { readerId: 'few', itemId: 'a', weight: 1, atMs: 1 },
      { readerId: 'few', itemId: 'b', weight: 1, atMs: 1 },
      { readerId: 'many', itemId: 'a', weight: 1, atMs: 1 },
      { readerId: 'many', itemId: 'c', weight: 1, atMs: 1 },
      ...Array.from({ length: 48 }, (_, i) => ({ readerId: 'many', itemId: `x${i}`, weight: 1, atMs: 1 })),
    ];
    const row = allRows(graphOf(pairs).compact(), { k: 3, shrink: 0 }).get('a')!;
    expect(row[0]!.itemId).toBe('b');
  });

  it('the history cap keeps each reader’s newest pairs, and a pair taken back leaves the graph', () => {
    const g = new EngagementGraph(3);
    const r = g.apply([1, 2, 3, 4, 5].map((t) => ({ readerId: 'r', itemId: `i${t}`, weight: 1, atMs: t })));
    expect([...g.itemsOf(g.readers.get('r')!).keys()].map((i) => g.items.ids[i]).sort()).toEqual(['i3', 'i4', 'i5']);
    expect([...r.left].map((i) => g.items.ids[i]).sort()).toEqual(['i1', 'i2']);
    const back = g.apply([{ readerId: 'r', itemId: 'i5', weight: 0, atMs: 5 }]);
    expect([...back.left].map((i) => g.items.ids[i])).toEqual(['i5']);
    expect(g.belowCap(g.readers.get('r')!)).toBe(true);
    expect(g.size).toBe(2);
  });

  it('the stale rows of a change are a superset of the rows that change, and the rest stay equal', () => {
    const pairs = randomPairs(5, 30, 40, 0.08);
    const g = graphOf(pairs);
    const before = allRows(g.compact(), { k: 10, shrink: 2 });
    const r = g.apply([
      { readerId: 'r3', itemId: 'i7', weight: 3, atMs: 99_999 },
      { readerId: 'r9', itemId: pairs.find((p) => p.readerId === 'r9')?.itemId ?? 'i1', weight: 0, atMs: 99_999 },
    ]);
    const c = g.compact();
    const after = allRows(c, { k: 10, shrink: 2 });
    const stale = staleRows(c, r.readers, r.left);
    const staleIds = new Set([...stale.direct, ...stale.indirect].map((i) => c.itemIds[i]));
    for (const [item, row] of after) if (!staleIds.has(item)) expect(row, `row of ${item}`).toEqual(before.get(item));
    expect(staleIds.size).toBeLessThan(40); // a change far from most items leaves their rows alone
  });
});
