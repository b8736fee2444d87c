/**
 * Item-to-item neighbours by co-engagement: for an item, the items most engaged with by the same
 * readers — Gorse's "item-to-item by users" (gorse-io/gorse `logics/item_to_item.go`: an IDF-weighted
 * cosine over the readers two items share, shrunk by the number of shared readers). Pure: reads an
 * {@link CompactGraph} (engagement-graph.ts), writes nothing.
 *
 * similarity(i, j) = Σ_{u ∈ U_i ∩ U_j} w_u / √(Σ_{u ∈ U_i} w_u · Σ_{u ∈ U_j} w_u) · n_ij / (n_ij + λ)
 *
 * - `U_i`: the readers holding item i; `n_ij = |U_i ∩ U_j|`.
 * - `w_u = 1 / ln(1 + |I_u|)`: the reader's inverse user frequency (Breese, Heckerman & Kadie 1998,
 *   "Empirical analysis of predictive algorithms for collaborative filtering", §2.2.2; the ItemCF-IUF
 *   form) — a reader who engaged with few items says more about each pair than one who engaged with
 *   thousands. Unlike `ln(N / |I_u|)` it does not depend on the catalog's size, so a new item leaves
 *   every other weight as it was (what lets the builder update incrementally).
 * - `n / (n + λ)`: the shrinkage of similarities supported by few readers (Bell & Koren 2007, "Scalable
 *   collaborative filtering with jointly derived neighborhood interpolation weights", eq. 2; Gorse
 *   shrinks by `count / (count + 100)`). λ = `shrink`.
 *
 * A row keeps the top `k` neighbours with similarity > 0, best first; ties by item id (so a row is a
 * function of the graph alone: an incremental build and a full rebuild write the same rows).
 */
import type { CompactGraph } from './engagement-graph.js';

/** One neighbour of an item. */
export interface Neighbour {
  itemId: string;
  /** The similarity above, in (0, 1]. */
  score: number;
  /** Readers the two items share (`n_ij`): the evidence explain names. */
  shared: number;
}

/** Settings of a similarity row. */
export interface NeighbourSettings {
  /** Neighbours kept per item (Gorse's default for item neighbours: 100). */
  k: number;
  /** λ of the shrinkage n / (n + λ); 0 turns it off. */
  shrink: number;
}

/** The inverse user frequency of a reader holding `degree` items. */
export function readerWeight(degree: number): number {
  return degree > 0 ? 1 / Math.log(1 + degree) : 0;
}

/**
 * Reusable scratch of row computations (one per pass): dense accumulators over item numbers, reset
 * through the list of touched entries, so a row costs its work, not the catalog's size.
 */
export class RowScratch {
  readonly sums: Float64Array;
  readonly counts: Int32Array;
  readonly touched: Int32Array;

  /** @param items item numbers of the graph the pass reads. */
  constructor(items: number) {
    this.sums = new Float64Array(items);
    this.counts = new Int32Array(items);
    this.touched = new Int32Array(items);
  }
}

/** The weighted norms Σ_{u ∈ U_i} w_u of every item of a compact graph. O(interactions). */
export function itemNorms(g: CompactGraph): Float64Array {
  const w = readerWeights(g);
  const norms = new Float64Array(g.items);
  for (let i = 0; i < g.items; i++) {
    let s = 0;
    for (let k = g.itemPtr[i]!; k < g.itemPtr[i + 1]!; k++) s += w[g.itemReaders[k]!]!;
    norms[i] = s;
  }
  return norms;
}

/** Every reader's weight w_u (see the module doc). */
export function readerWeights(g: CompactGraph): Float64Array {
  const w = new Float64Array(g.readers);
  for (let u = 0; u < g.readers; u++) w[u] = readerWeight(g.readerPtr[u + 1]! - g.readerPtr[u]!);
  return w;
}

/** What a pass over one compact graph computes once: reader weights and item norms. */
export interface RowContext {
  g: CompactGraph;
  weights: Float64Array;
  norms: Float64Array;
  scratch: RowScratch;
}

/** The context of a pass over `g`. */
export function rowContext(g: CompactGraph): RowContext {
  return { g, weights: readerWeights(g), norms: itemNorms(g), scratch: new RowScratch(g.items) };
}

/** The neighbour row of item number `i` (see the module doc). Work: Σ_{u ∈ U_i} |I_u| additions. */
export function neighbourRow(c: RowContext, i: number, s: NeighbourSettings): Neighbour[] {
  const { g, weights, norms } = c;
  const { sums, counts, touched } = c.scratch;
  const { itemPtr, itemReaders, readerPtr, readerItems } = g;
  let t = 0;
  for (let k = itemPtr[i]!; k < itemPtr[i + 1]!; k++) {
    const u = itemReaders[k]!;
    const w = weights[u]!;
    for (let m = readerPtr[u]!, end = readerPtr[u + 1]!; m < end; m++) {
      const j = readerItems[m]!;
      if (counts[j] === 0) touched[t++] = j;
      sums[j]! += w;
      counts[j]!++;
    }
  }
  const ni = norms[i]!;
  const top = new TopK(s.k, g.itemIds);
  for (let x = 0; x < t; x++) {
    const j = touched[x]!;
    const n = counts[j]!;
    const denom = Math.sqrt(ni * norms[j]!);
    const score = denom > 0 ? (sums[j]! / denom) * (n / (n + s.shrink)) : 0;
    if (j !== i && score >= top.floor) top.offer(j, score, n);
    sums[j] = 0;
    counts[j] = 0;
  }
  return top.sorted();
}

/**
 * The best `k` of a stream of (item, score) by score desc, then item id asc: a binary min-heap of size k
 * (typed arrays) whose root is the worst kept, so a row of m candidates costs O(m log k) and k objects,
 * not m. `floor` is the score an offer must reach to be considered (0 until k are kept): the caller
 * tests it inline, which skips most offers.
 */
export class TopK {
  private readonly items: Int32Array;
  private readonly scores: Float64Array;
  private readonly shared: Int32Array;
  private n = 0;
  /** Offers scoring below this are not kept (the worst kept score once full; 0 before). */
  floor = 0;

  constructor(
    private readonly k: number,
    private readonly ids: readonly string[],
  ) {
    this.items = new Int32Array(k);
    this.scores = new Float64Array(k);
    this.shared = new Int32Array(k);
  }

  /** Whether entry a ranks below entry b (by position in the heap). */
  private worse(a: number, b: number): boolean {
    const sa = this.scores[a]!;
    const sb = this.scores[b]!;
    return sa < sb || (sa === sb && this.ids[this.items[a]!]! > this.ids[this.items[b]!]!);
  }

  /** Offers item `j` with `score` > 0 (and `n` shared readers). */
  offer(j: number, score: number, n: number): void {
    if (!(score > 0) || score < this.floor || this.k === 0) return;
    if (this.n < this.k) {
      this.set(this.n, j, score, n);
      this.up(this.n++);
    } else {
      const root = this.scores[0]!;
      if (score === root && this.ids[j]! > this.ids[this.items[0]!]!) return;
      this.set(0, j, score, n);
      this.down(0);
    }
    if (this.n === this.k) this.floor = this.scores[0]!;
  }

  /** The kept entries, best first. */
  sorted(): Neighbour[] {
    const order = Array.from({ length: this.n }, (_, x) => x).sort((a, b) => (this.worse(a, b) ? 1 : -1));
    return order.map((x) => ({ itemId: this.ids[this.items[x]!]!, score: this.scores[x]!, shared: this.shared[x]! }));
  }

  private set(x: number, j: number, score: number, n: number): void {
    this.items[x] = j;
    this.scores[x] = score;
    this.shared[x] = n;
  }

  private swap(a: number, b: number): void {
    const j = this.items[a]!;
    const sc = this.scores[a]!;
    const n = this.shared[a]!;
    this.set(a, this.items[b]!, this.scores[b]!, this.shared[b]!);
    this.set(b, j, sc, n);
  }

  private up(x: number): void {
    while (x > 0) {
      const p = (x - 1) >> 1;
      if (!this.worse(x, p)) return;
      this.swap(x, p);
      x = p;
    }
  }

  private down(x: number): void {
    for (;;) {
      let m = x;
      const l = 2 * x + 1;
      const r = l + 1;
      if (l < this.n && this.worse(l, m)) m = l;
      if (r < this.n && this.worse(r, m)) m = r;
      if (m === x) return;
      this.swap(x, m);
      x = m;
    }
  }
}

/** The work of {@link neighbourRow} for item `i`: Σ_{u ∈ U_i} |I_u| (the builder's budget unit). */
export function rowCost(g: CompactGraph, i: number): number {
  let c = 0;
  for (let k = g.itemPtr[i]!; k < g.itemPtr[i + 1]!; k++) {
    const u = g.itemReaders[k]!;
    c += g.readerPtr[u + 1]! - g.readerPtr[u]!;
  }
  return c;
}

/** Every held item's row (a full rebuild), by item id. */
export function allRows(g: CompactGraph, s: NeighbourSettings): Map<string, Neighbour[]> {
  const c = rowContext(g);
  const out = new Map<string, Neighbour[]>();
  for (let i = 0; i < g.items; i++) {
    if (g.itemPtr[i + 1] === g.itemPtr[i]) continue;
    out.set(g.itemIds[i]!, neighbourRow(c, i, s));
  }
  return out;
}

/**
 * The items whose rows a change of the readers `changed` (their histories, so their weights) makes
 * stale: `direct` — the items those readers hold or held (`alsoItems`), whose own sums and norms changed
 * — and `indirect` — every other item sharing a reader with a direct one (a direct item's norm is in
 * their denominators). Recomputing both sets from the current graph gives exactly a full rebuild's rows.
 */
export function staleRows(
  g: CompactGraph,
  changed: Iterable<number>,
  alsoItems: Iterable<number> = [],
): { direct: Set<number>; indirect: Set<number> } {
  const direct = new Set<number>(alsoItems);
  for (const u of changed) for (let m = g.readerPtr[u]!; m < g.readerPtr[u + 1]!; m++) direct.add(g.readerItems[m]!);
  const indirect = new Set<number>();
  for (const i of direct)
    for (let k = g.itemPtr[i]!; k < g.itemPtr[i + 1]!; k++) {
      const u = g.itemReaders[k]!;
      for (let m = g.readerPtr[u]!; m < g.readerPtr[u + 1]!; m++) {
        const j = g.readerItems[m]!;
        if (!direct.has(j)) indirect.add(j);
      }
    }
  return { direct, indirect };
}
