/**
 * MemoryVectorIndex: the in-process nearest-neighbour index of item embeddings (int8 codes), on
 * usearch (Unum's single-file vector search engine; the npm package ships prebuilt binaries).
 *
 * - **Slots**: each item id owns a slot; its codes live in one contiguous `Int8Array` (`dim` bytes a
 *   slot), removed slots are zeroed and reused. The codes are what the caller re-ranks with (exact
 *   cosine) and what the exact mode scans.
 * - **Exact mode** (size ≤ `exactMax`, and while the HNSW graph is being built): usearch
 *   `exactSearch` over the codes — a SIMD int8 cosine scan, recall 1 by construction.
 * - **HNSW mode** (above `exactMax`): a usearch HNSW index (Malkov & Yashunin 2016) over i8 vectors,
 *   keys = slots, built in the background in steps of ~{@link BUILD_STEP_MS} ms with the event loop
 *   free between them (searches use the exact scan until it is complete); kept current by every
 *   upsert and removal after that.
 *
 * Searches are synchronous native calls (they hold the event loop for their duration: ~1–3 ms in
 * HNSW mode, ~5–10 ms for an exact scan of 200k codes). Not safe to share between worker threads.
 */
import { availableParallelism } from 'node:os';
import { Index, MetricKind, ScalarKind, exactSearch, type Matches } from 'usearch';
import { fail } from '../../kernel/errors.js';
import { quantize } from '../embedding.js';

/** Tunables of the in-process index. */
export interface MemoryIndexSettings {
  /** Largest size served by the exact scan; above it an HNSW graph is built. */
  exactMax: number;
  /** HNSW links per node (usearch `connectivity`, hnswlib's M). */
  connectivity: number;
  /** Candidate list while inserting (`expansion_add`, hnswlib's ef_construction). */
  expansionAdd: number;
  /** Candidate list while searching (`expansion_search`, hnswlib's ef); a search of k > it uses k. */
  expansionSearch: number;
}

/**
 * A background build step's target length, ms: the nodes added per step adapt (16…4,096) so a step
 * holds the event loop about this long.
 */
const BUILD_STEP_MS = 15;
/** Threads of a background build step (all cores: the event loop waits for the step either way). */
export const BUILD_THREADS = availableParallelism();

/** The native index state a snapshot carries (see vector-snapshot.ts). */
export interface MemoryIndexState {
  dim: number;
  /** Item id per slot; null for a free slot. */
  ids: (string | null)[];
  /** `ids.length × dim` codes. */
  codes: Int8Array;
  /** A saved usearch HNSW file over the same slots, when the graph was complete. */
  hnswPath?: string;
}

/** Lets the event loop run between build steps; unref'd, so a build never keeps a finished process alive. */
const yieldToLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0).unref());

/** The in-process index. See the module doc. */
export class MemoryVectorIndex {
  private ids: (string | null)[] = [];
  private readonly slotOf = new Map<string, number>();
  private free: number[] = [];
  private codes: Int8Array;
  private hnsw: Index | null = null;
  /** Slots below this are in the HNSW graph (the background build's progress); Infinity once complete. */
  private builtUpTo = 0;
  private building: Promise<void> | null = null;
  private closed = false;

  constructor(
    readonly dim: number,
    readonly settings: MemoryIndexSettings,
  ) {
    this.codes = new Int8Array(1024 * dim);
  }

  /** Live embeddings held. */
  get size(): number {
    return this.slotOf.size;
  }

  /** `exact` until the HNSW graph is complete. */
  get mode(): 'exact' | 'hnsw' {
    return this.hnsw && this.builtUpTo === Infinity ? 'hnsw' : 'exact';
  }

  /** Whether `itemId` is held with exactly these codes (a catch-up re-reading a row skips it). */
  holds(itemId: string, codes: Int8Array): boolean {
    const s = this.slotOf.get(itemId);
    if (s === undefined) return false;
    const at = s * this.dim;
    for (let i = 0; i < this.dim; i++) if (this.codes[at + i] !== codes[i]) return false;
    return true;
  }

  /**
   * Adds or replaces the embedding of `itemId`.
   * @throws FreshetError `INVALID_INPUT` when `codes` is not `dim` long.
   */
  upsert(itemId: string, codes: Int8Array): void {
    if (codes.length !== this.dim)
      throw fail('INVALID_INPUT', `embedding of ${itemId} has ${codes.length} components, the index ${this.dim}`);
    let s = this.slotOf.get(itemId);
    if (s === undefined) {
      s = this.free.pop() ?? this.ids.length;
      if (s === this.ids.length) this.ids.push(null);
      this.ids[s] = itemId;
      this.slotOf.set(itemId, s);
      this.ensureCapacity(this.ids.length);
    } else if (this.inGraph(s)) this.hnsw!.remove(BigInt(s));
    this.codes.set(codes, s * this.dim);
    if (this.inGraph(s)) this.hnsw!.add(BigInt(s), codes, 1);
    this.maybeBuild();
  }

  /** Drops `itemId` (no-op when absent). */
  remove(itemId: string): void {
    const s = this.slotOf.get(itemId);
    if (s === undefined) return;
    if (this.inGraph(s)) this.hnsw!.remove(BigInt(s));
    this.slotOf.delete(itemId);
    this.ids[s] = null;
    this.codes.fill(0, s * this.dim, (s + 1) * this.dim);
    this.free.push(s);
  }

  /**
   * The `k` nearest held embeddings to `query` by cosine, best first by the index's own (int8)
   * distance: exact in the exact mode, approximate in HNSW mode. Returns copies of the codes, and
   * min(k, size) of them: a graph search that reaches fewer nodes than asked (a graph of far-apart
   * clusters can leave some unreachable from the entry point at a given `ef`) falls back to the exact
   * scan, as does a search for a quarter of the index or more — so a short answer always means the
   * index holds no more, and the caller may call it exhausted.
   */
  search(query: Float32Array, k: number): { itemId: string; vector: Int8Array }[] {
    if (query.length !== this.dim)
      throw fail('INVALID_INPUT', `query has ${query.length} components, the index ${this.dim}`);
    if (this.size === 0 || k <= 0) return [];
    const q = quantize(query);
    const want = Math.min(k, this.size);
    if (this.mode === 'hnsw' && want * 4 < this.size) {
      const found = this.hitsOf(this.hnsw!.search(q, want, 1).keys, want);
      if (found.length === want) return found;
    }
    // free slots are zero vectors (cosine distance 1): ask for enough to cover them, dropped by hitsOf
    const used = this.ids.length;
    const keys = (
      exactSearch(
        this.codes.subarray(0, used * this.dim),
        q,
        this.dim,
        Math.min(used, want + this.free.length),
        MetricKind.Cos,
        1,
      ) as Matches
    ).keys;
    return this.hitsOf(keys, want);
  }

  /** The held embeddings of slots `keys`, in order, skipping free slots, at most `k`. */
  private hitsOf(keys: BigUint64Array, k: number): { itemId: string; vector: Int8Array }[] {
    const out: { itemId: string; vector: Int8Array }[] = [];
    for (const key of keys) {
      const s = Number(key);
      const id = this.ids[s];
      if (id === null || id === undefined) continue;
      out.push({ itemId: id, vector: this.codes.slice(s * this.dim, (s + 1) * this.dim) });
      if (out.length === k) break;
    }
    return out;
  }

  /** Estimated bytes held: the codes, the id map (~100 B an id), and the HNSW graph when built. */
  bytes(): number {
    const graph = this.hnsw ? this.ids.length * (this.dim + 8 * this.settings.connectivity + 64) : 0;
    return this.codes.byteLength + this.ids.length * 100 + graph;
  }

  /** A background HNSW build's progress (slots added of the slots to add); null when none runs. */
  buildProgress(): { done: number; total: number } | null {
    if (!this.hnsw || this.builtUpTo === Infinity) return null;
    return { done: this.builtUpTo, total: this.ids.length };
  }

  /** Resolves when a pending background HNSW build has finished (at once when none runs). */
  async built(): Promise<void> {
    await this.building;
  }

  /** The state to persist; `saveGraph(path)` writes the HNSW file when the graph is complete. */
  state(): { dim: number; ids: (string | null)[]; codes: Int8Array; saveGraph: ((path: string) => void) | null } {
    const used = this.ids.length;
    const graph = this.mode === 'hnsw' ? this.hnsw! : null;
    return {
      dim: this.dim,
      ids: this.ids.slice(),
      codes: this.codes.slice(0, used * this.dim),
      saveGraph: graph ? (path) => graph.save(path) : null,
    };
  }

  /** An index holding a persisted state (its HNSW file loaded when present, else rebuilt above `exactMax`). */
  static restore(s: MemoryIndexState, settings: MemoryIndexSettings): MemoryVectorIndex {
    const index = new MemoryVectorIndex(s.dim, settings);
    index.ids = s.ids.slice();
    index.ensureCapacity(s.ids.length);
    index.codes.set(s.codes);
    s.ids.forEach((id, slot) => (id === null ? index.free.push(slot) : index.slotOf.set(id, slot)));
    if (s.hnswPath) {
      index.hnsw = index.newGraph();
      index.hnsw.load(s.hnswPath);
      index.builtUpTo = Infinity;
    }
    index.maybeBuild();
    return index;
  }

  /** Stops a background build (the index stays usable in exact mode). */
  close(): void {
    this.closed = true;
  }

  private inGraph(slot: number): boolean {
    return this.hnsw !== null && slot < this.builtUpTo;
  }

  private ensureCapacity(slots: number): void {
    if (slots * this.dim <= this.codes.length) return;
    const next = new Int8Array(Math.max(slots, Math.ceil((this.codes.length / this.dim) * 1.5)) * this.dim);
    next.set(this.codes);
    this.codes = next;
  }

  private newGraph(): Index {
    const { connectivity, expansionAdd, expansionSearch } = this.settings;
    return new Index({
      dimensions: this.dim,
      metric: MetricKind.Cos,
      quantization: ScalarKind.I8,
      connectivity,
      expansion_add: expansionAdd,
      expansion_search: expansionSearch,
      multi: false,
    });
  }

  /** Starts the background HNSW build once the size passes `exactMax`. */
  private maybeBuild(): void {
    if (this.hnsw || this.closed || this.size <= this.settings.exactMax) return;
    this.hnsw = this.newGraph();
    this.builtUpTo = 0;
    this.building = this.build().finally(() => (this.building = null));
  }

  /** Adds every slot to the graph in steps of ~{@link BUILD_STEP_MS} ms, yielding to the event loop between. */
  private async build(): Promise<void> {
    const graph = this.hnsw!;
    let chunk = 64;
    while (!this.closed && this.builtUpTo < this.ids.length) {
      const started = performance.now();
      const from = this.builtUpTo;
      const to = Math.min(this.ids.length, from + chunk);
      const slots: number[] = [];
      for (let s = from; s < to; s++) if (this.ids[s] !== null) slots.push(s);
      if (slots.length > 0) {
        const codes = new Int8Array(slots.length * this.dim);
        slots.forEach((s, i) => codes.set(this.codes.subarray(s * this.dim, (s + 1) * this.dim), i * this.dim));
        graph.add(BigUint64Array.from(slots, BigInt), codes, BUILD_THREADS);
      }
      this.builtUpTo = to;
      const ms = performance.now() - started;
      chunk =
        ms > BUILD_STEP_MS * 1.5
          ? Math.max(16, chunk >> 1)
          : ms < BUILD_STEP_MS / 2
            ? Math.min(4096, chunk * 2)
            : chunk;
      await yieldToLoop();
    }
    if (!this.closed) this.builtUpTo = Infinity;
  }
}
