/**
 * The yardsticks `freshet evaluate` measures the feeds against, on the same split in the same run
 * (docs/evaluation.md "Baselines"). Pure, in process, over integer item indices; each list leaves out the
 * reader's train items and is best first:
 * - **Random**: k items drawn uniformly (seeded) from the catalog;
 * - **MostPop**: the items with the most train ratings (ties by item index);
 * - **ItemKNN**: item-based top-N (Deshpande & Karypis, "Item-based top-N recommendation algorithms",
 *   ACM TOIS 22(1), 2004; implicit's ItemItemRecommender): the cosine of two items over the binary
 *   reader × item train matrix, |U_i ∩ U_j| / √(|U_i|·|U_j|); each item keeps its `neighbours` most similar
 *   items (ties by index); a reader's score for item j is Σ sim(i, j) over its train items i that keep j.
 *   Items of score 0 are not listed, so a list may be shorter than k.
 * Sparse and typed: the co-counts of an item are accumulated over its readers' items into one reused
 * array, so the work is Σ over readers of (train items)² — ml-latest-small in a few seconds.
 */
import { prng } from '../../kernel/prng.js';

/** Each item's kept neighbours, CSR: those of item i are `items/sims[offsets[i] .. offsets[i + 1])`, best first. */
export interface ItemNeighbours {
  offsets: Int32Array;
  items: Int32Array;
  sims: Float64Array;
}

/** Random lists: per reader (in `readers` order), up to `k` distinct catalog items outside its train set. */
export function randomLists(
  train: readonly (readonly number[])[],
  readers: readonly number[],
  nItems: number,
  k: number,
  seed: number,
): number[][] {
  const next = prng(seed);
  return readers.map((u) => {
    const own = new Set(train[u]);
    const want = Math.min(k, nItems - own.size);
    const picked = new Set<number>();
    while (picked.size < want) {
      const j = Math.floor(next() * nItems);
      if (!own.has(j)) picked.add(j);
    }
    return [...picked];
  });
}

/** How many readers have each item in train. */
export function trainCounts(train: readonly (readonly number[])[], nItems: number): Int32Array {
  const counts = new Int32Array(nItems);
  for (const items of train) for (const j of items) counts[j]!++;
  return counts;
}

/** MostPop lists: per reader, the `k` items with the most train ratings (ties by index) outside its train set. */
export function mostPopLists(
  train: readonly (readonly number[])[],
  readers: readonly number[],
  nItems: number,
  k: number,
): number[][] {
  const counts = trainCounts(train, nItems);
  const order = Array.from({ length: nItems }, (_, j) => j).sort((a, b) => counts[b]! - counts[a]! || a - b);
  return readers.map((u) => {
    const own = new Set(train[u]);
    const list: number[] = [];
    for (let i = 0; i < order.length && list.length < k; i++) if (!own.has(order[i]!)) list.push(order[i]!);
    return list;
  });
}

/**
 * Each item's `neighbours` most similar items by cosine over the binary train matrix (see the module doc).
 * @param onItem progress: called after each item with the number done.
 */
export function itemNeighbours(
  train: readonly (readonly number[])[],
  nItems: number,
  neighbours: number,
  onItem?: (done: number) => void,
): ItemNeighbours {
  const counts = trainCounts(train, nItems);
  // readers of each item (CSR), from the train lists
  const start = new Int32Array(nItems + 1);
  for (let j = 0; j < nItems; j++) start[j + 1] = start[j]! + counts[j]!;
  const readersOf = new Int32Array(start[nItems]!);
  const fill = start.slice(0, nItems);
  train.forEach((items, u) => {
    for (const j of items) readersOf[fill[j]!++] = u;
  });
  const co = new Float64Array(nItems);
  const touched = new Int32Array(nItems);
  const offsets = new Int32Array(nItems + 1);
  const keptItems: number[] = [];
  const keptSims: number[] = [];
  const top = new TopK(neighbours);
  for (let i = 0; i < nItems; i++) {
    let n = 0;
    for (let p = start[i]!; p < start[i + 1]!; p++)
      for (const j of train[readersOf[p]!]!)
        if (j !== i) {
          if (co[j] === 0) touched[n++] = j;
          co[j]!++;
        }
    top.clear();
    for (let t = 0; t < n; t++) {
      const j = touched[t]!;
      top.offer(j, co[j]! / Math.sqrt(counts[i]! * counts[j]!));
      co[j] = 0;
    }
    for (const [j, s] of top.best()) {
      keptItems.push(j);
      keptSims.push(s);
    }
    offsets[i + 1] = keptItems.length;
    onItem?.(i + 1);
  }
  return { offsets, items: Int32Array.from(keptItems), sims: Float64Array.from(keptSims) };
}

/**
 * A reader's ItemKNN scores: for each item j kept as a neighbour by one of its train items `own` (and not
 * itself one of them), Σ sim(i, j) over those train items i, summed in the order of `own`.
 */
export function knnScores(own: readonly number[], model: ItemNeighbours): Map<number, number> {
  const mine = new Set(own);
  const score = new Map<number, number>();
  for (const i of own)
    for (let p = model.offsets[i]!; p < model.offsets[i + 1]!; p++) {
      const j = model.items[p]!;
      if (!mine.has(j)) score.set(j, (score.get(j) ?? 0) + model.sims[p]!);
    }
  return score;
}

/** ItemKNN lists: per reader, the `k` best-scored items outside its train set (score > 0; ties by index). */
export function itemKnnLists(
  train: readonly (readonly number[])[],
  readers: readonly number[],
  model: ItemNeighbours,
  k: number,
): number[][] {
  const top = new TopK(k);
  return readers.map((u) => {
    top.clear();
    for (const [j, s] of knnScores(train[u]!, model)) if (s > 0) top.offer(j, s);
    return top.best().map(([j]) => j);
  });
}

/**
 * The `size` best of the (item, score) pairs offered: higher score first, ties by lower item index. A
 * binary min-heap whose root is the worst kept pair, so each offer costs O(1) when it loses, O(log size)
 * when it enters.
 */
class TopK {
  private readonly items: number[] = [];
  private readonly scores: number[] = [];
  constructor(private readonly size: number) {}

  clear(): void {
    this.items.length = 0;
    this.scores.length = 0;
  }

  /** Whether pair a ranks below pair b (lower score, or the same score and a higher index). */
  private worse(a: number, b: number): boolean {
    const sa = this.scores[a]!;
    const sb = this.scores[b]!;
    return sa < sb || (sa === sb && this.items[a]! > this.items[b]!);
  }

  offer(item: number, score: number): void {
    if (this.size === 0) return;
    if (this.items.length < this.size) {
      this.items.push(item);
      this.scores.push(score);
      for (let c = this.items.length - 1; c > 0; ) {
        const p = (c - 1) >> 1;
        if (!this.worse(c, p)) break;
        this.swap(c, p);
        c = p;
      }
      return;
    }
    const rootScore = this.scores[0]!;
    if (score < rootScore || (score === rootScore && item > this.items[0]!)) return;
    this.items[0] = item;
    this.scores[0] = score;
    for (let p = 0; ; ) {
      const l = 2 * p + 1;
      const r = l + 1;
      let m = p;
      if (l < this.items.length && this.worse(l, m)) m = l;
      if (r < this.items.length && this.worse(r, m)) m = r;
      if (m === p) break;
      this.swap(p, m);
      p = m;
    }
  }

  /** The kept pairs, best first. */
  best(): [number, number][] {
    const pairs = this.items.map((item, i): [number, number] => [item, this.scores[i]!]);
    return pairs.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  }

  private swap(a: number, b: number): void {
    [this.items[a], this.items[b]] = [this.items[b]!, this.items[a]!];
    [this.scores[a], this.scores[b]] = [this.scores[b]!, this.scores[a]!];
  }
}
