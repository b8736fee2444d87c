/**
 * The engagement graph the learning room computes on: readers and items joined by their positive
 * interactions (a counted view, a like, a reply, a share), each with a weight and the time of the last
 * signal, held in process with integer ids. Both learners read it — the co-engagement neighbours
 * (neighbours.ts) and the factor model (als.ts) — and the background builder (builder.ts)
 * keeps it current from the interactions' change feed.
 *
 * A reader keeps at most `historyCap` interactions, the newest (by time, then item id): the bound on the
 * work one reader adds to a similarity row (Σ over an item's readers of their history), so a crawler
 * that viewed the whole catalog costs what a heavy reader costs. An interaction whose weight drops to 0
 * (an engagement taken back, "not interested") leaves the graph.
 *
 * Every change says which readers it touched (`apply` returns them): their items are the rows whose
 * similarities changed.
 */

/** A pair's current state: a reader's positive interaction with an item (weight 0: gone). */
export interface Interaction {
  readerId: string;
  itemId: string;
  /** > 0: the pair's weight (interactions.ts `interactionWeight`); 0: the pair is gone. */
  weight: number;
  /** Time of its last signal, epoch ms. */
  atMs: number;
}

/** A string id ↔ dense integer id table that only grows (removed ids keep their number). */
export class IdIndex {
  private readonly byId = new Map<string, number>();
  readonly ids: string[] = [];

  /** The id's number, allocating the next one for a new id. */
  intern(id: string): number {
    let n = this.byId.get(id);
    if (n === undefined) {
      n = this.ids.length;
      this.byId.set(id, n);
      this.ids.push(id);
    }
    return n;
  }

  /** The id's number, or undefined when never seen. */
  get(id: string): number | undefined {
    return this.byId.get(id);
  }

  get size(): number {
    return this.ids.length;
  }
}

/**
 * A read-only snapshot of the graph in compressed rows: reader u's items are
 * `readerItems[readerPtr[u] .. readerPtr[u + 1])` (weights beside them), item i's readers
 * `itemReaders[itemPtr[i] .. itemPtr[i + 1])`.
 */
export interface CompactGraph {
  readers: number;
  items: number;
  itemIds: readonly string[];
  readerPtr: Int32Array;
  readerItems: Int32Array;
  readerWeights: Float32Array;
  itemPtr: Int32Array;
  itemReaders: Int32Array;
}

/** What one reader holds: item number → [weight, atMs]. */
type History = Map<number, { w: number; at: number }>;

/** The graph (see the module doc). */
export class EngagementGraph {
  readonly readers = new IdIndex();
  readonly items = new IdIndex();
  /** Per reader number: its interactions. */
  private readonly histories: History[] = [];
  /** Per item number: the reader numbers holding it. */
  private readonly holders: Set<number>[] = [];
  private edges = 0;
  /** Readers the history cap has trimmed: when one of them falls below the cap, older pairs may be due back. */
  private readonly capped = new Set<number>();

  /** @param historyCap interactions kept per reader (the newest). */
  constructor(readonly historyCap: number) {}

  /** Interactions held. */
  get size(): number {
    return this.edges;
  }

  /**
   * Applies pairs' current states (the change feed's rows: the store's truth, whatever the graph held).
   * @returns the reader numbers whose history changed, and the item numbers that left a history
   *   (taken back, or pushed out by the history cap): both make rows stale (neighbours.ts `staleRows`).
   */
  apply(rows: readonly Interaction[]): { readers: Set<number>; left: Set<number> } {
    const touched = new Set<number>();
    const left = new Set<number>();
    for (const r of rows) {
      const u = this.readers.intern(r.readerId);
      const i = this.items.intern(r.itemId);
      const h = (this.histories[u] ??= new Map());
      this.holders[i] ??= new Set();
      const had = h.get(i);
      if (had && had.at === r.atMs && had.w === r.weight) continue;
      if (r.weight <= 0) {
        if (!had) continue;
        this.unlink(u, i);
        left.add(i);
      } else {
        if (!had) this.link(u, i);
        h.set(i, { w: r.weight, at: r.atMs });
      }
      touched.add(u);
    }
    for (const u of touched) for (const i of this.trim(u)) left.add(i);
    return { readers: touched, left };
  }

  /** Drops every interaction of a reader (an erase). @returns the item numbers it held. */
  dropReader(readerId: string): number[] {
    const u = this.readers.get(readerId);
    const h = u === undefined ? undefined : this.histories[u];
    if (u === undefined || !h) return [];
    const items = [...h.keys()];
    for (const i of items) this.unlink(u, i);
    return items;
  }

  /** Drops every interaction with an item (deleted). @returns the reader numbers that held it. */
  dropItem(itemId: string): number[] {
    const i = this.items.get(itemId);
    const hs = i === undefined ? undefined : this.holders[i];
    if (i === undefined || !hs) return [];
    const readers = [...hs];
    for (const u of readers) this.unlink(u, i);
    return readers;
  }

  /** The item numbers of a reader (empty for an unknown one). */
  itemsOf(u: number): ReadonlyMap<number, { w: number; at: number }> {
    return this.histories[u] ?? EMPTY;
  }

  /** The reader numbers holding an item. */
  readersOf(i: number): ReadonlySet<number> {
    return this.holders[i] ?? EMPTY_SET;
  }

  /**
   * Whether reader `u` was trimmed by the history cap and now holds fewer than the cap: its store may hold
   * older pairs that belong in the graph again (the builder reads them back).
   */
  belowCap(u: number): boolean {
    return this.capped.has(u) && this.degree(u) < this.historyCap;
  }

  /** Interactions of reader `u` (its history length). */
  degree(u: number): number {
    return this.histories[u]?.size ?? 0;
  }

  /**
   * A compact, read-only copy in compressed rows (typed arrays), for passes that read many rows: iterating
   * it costs a few ns per entry where the Maps cost tens. O(interactions) to build.
   */
  compact(): CompactGraph {
    const nr = this.readers.size;
    const ni = this.items.size;
    const readerPtr = new Int32Array(nr + 1);
    const itemPtr = new Int32Array(ni + 1);
    for (let u = 0; u < nr; u++) readerPtr[u + 1] = readerPtr[u]! + (this.histories[u]?.size ?? 0);
    for (let i = 0; i < ni; i++) itemPtr[i + 1] = itemPtr[i]! + (this.holders[i]?.size ?? 0);
    const readerItems = new Int32Array(readerPtr[nr]!);
    const readerWeights = new Float32Array(readerPtr[nr]!);
    const itemReaders = new Int32Array(itemPtr[ni]!);
    for (let u = 0; u < nr; u++) {
      let k = readerPtr[u]!;
      for (const [i, e] of this.histories[u] ?? EMPTY) {
        readerItems[k] = i;
        readerWeights[k++] = e.w;
      }
    }
    for (let i = 0; i < ni; i++) {
      let k = itemPtr[i]!;
      for (const u of this.holders[i] ?? EMPTY_SET) itemReaders[k++] = u;
    }
    return {
      readers: nr,
      items: ni,
      itemIds: this.items.ids,
      readerPtr,
      readerItems,
      readerWeights,
      itemPtr,
      itemReaders,
    };
  }

  private link(u: number, i: number): void {
    this.holders[i]!.add(u);
    this.edges++;
  }

  private unlink(u: number, i: number): void {
    this.histories[u]?.delete(i);
    this.holders[i]?.delete(u);
    this.edges--;
  }

  /**
   * Keeps the reader's newest `historyCap` interactions (by time desc, then item id asc).
   * @returns the item numbers dropped.
   */
  private trim(u: number): number[] {
    const h = this.histories[u];
    if (!h || h.size <= this.historyCap) return [];
    const ids = this.items.ids;
    const order = [...h].sort((a, b) => b[1].at - a[1].at || (ids[a[0]]! < ids[b[0]]! ? -1 : 1));
    const dropped = order.slice(this.historyCap).map(([i]) => i);
    for (const i of dropped) this.unlink(u, i);
    this.capped.add(u);
    return dropped;
  }
}

const EMPTY: ReadonlyMap<number, { w: number; at: number }> = new Map();
const EMPTY_SET: ReadonlySet<number> = new Set();
