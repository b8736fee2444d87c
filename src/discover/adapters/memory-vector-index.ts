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
import { Index, MetricKind, ScalarKind, exactSearch, type Matches } from '../../kernel/usearch.js';
import { fail } from '../../kernel/errors.js';
import { quantize } from '../embedding.js';
import { type LoadedSnapshot, runGraphWorker, type SnapshotWriter } from './vector-snapshot.js';
import { writeFile } from 'node:fs/promises';

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

/** A hit: an item id and a copy of its int8 codes. */
export interface IndexHit {
  itemId: string;
  vector: Int8Array;
}

/**
 * What InProcessSearch serves from: a {@link MemoryVectorIndex} (private to the process), or a
 * ViewedVectorIndex (viewed-vector-index.ts: the host's memory-mapped snapshot plus this process's
 * changes since). Same search contract: see {@link MemoryVectorIndex.search}.
 */
export interface VectorIndex {
  readonly dim: number;
  /** Live embeddings held. */
  readonly size: number;
  /** `exact` until an HNSW graph is complete. */
  readonly mode: 'exact' | 'hnsw';
  holds(itemId: string, codes: Int8Array): boolean;
  upsert(itemId: string, codes: Int8Array): void;
  remove(itemId: string): void;
  search(query: Float32Array, k: number): IndexHit[];
  /** Estimated bytes private to this process. */
  bytes(): number;
  /** Bytes of memory-mapped files this index reads, shared with every process of the host mapping them. */
  sharedBytes(): number;
  buildProgress(): { done: number; total: number } | null;
  built(): Promise<void>;
  /**
   * What to write to snapshot the index, captured now (see vector-snapshot.ts). `scrub` (an erase's purge):
   * a graph that removed nodes is built afresh for the file, so no removed item's vector stays in it.
   */
  snapshot(opts?: { scrub?: boolean }): SnapshotWriter;
  close(): void;
}

/** The usearch options of an HNSW index of int8 codes with the settings' shape (plain data: a worker takes them too). */
export function graphOptions(dim: number, settings: MemoryIndexSettings) {
  const { connectivity, expansionAdd, expansionSearch } = settings;
  return {
    dimensions: dim,
    metric: MetricKind.Cos,
    quantization: ScalarKind.I8,
    connectivity,
    expansion_add: expansionAdd,
    expansion_search: expansionSearch,
    multi: false,
  };
}

/** A usearch HNSW index of int8 codes with the settings' shape (also how a saved graph is loaded or viewed). */
export function newGraph(dim: number, settings: MemoryIndexSettings): Index {
  return new Index(graphOptions(dim, settings));
}

/** Lets the event loop run between build steps; unref'd, so a build never keeps a finished process alive. */
const yieldToLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0).unref());

/** The in-process index. See the module doc. */
export class MemoryVectorIndex implements VectorIndex {
  private ids: (string | null)[] = [];
  private readonly slotOf = new Map<string, number>();
  private free: number[] = [];
  private codes: Int8Array;
  private hnsw: Index | null = null;
  /** Slots below this are in the HNSW graph (the background build's progress); Infinity once complete. */
  private builtUpTo = 0;
  private building: Promise<void> | null = null;
  private closed = false;
  /** Nodes removed from (or replaced in) the HNSW graph: usearch keeps their vectors until their slot is reused. */
  private graphRemovals = 0;

  /**
   * @param mayBuild asked once the size passes `exactMax`, before a graph is built (and again at the
   *   next upsert while it says no): false leaves the index on the exact scan — another process of the
   *   host builds the graph, and this one will view its snapshot (InProcessSearch).
   */
  constructor(
    readonly dim: number,
    readonly settings: MemoryIndexSettings,
    private readonly mayBuild: () => boolean = () => true,
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

  /** Whether `itemId` is held. */
  has(itemId: string): boolean {
    return this.slotOf.has(itemId);
  }

  /** Every held embedding (copies of its codes), in slot order. */
  entries(): IndexHit[] {
    return this.hitsOf(BigUint64Array.from(this.slotOf.values(), BigInt).sort(), this.size);
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
    } else if (this.inGraph(s)) {
      this.hnsw!.remove(BigInt(s));
      this.graphRemovals++;
    }
    this.codes.set(codes, s * this.dim);
    if (this.inGraph(s)) this.hnsw!.add(BigInt(s), codes, 1);
    this.maybeBuild();
  }

  /** Drops `itemId` (no-op when absent). */
  remove(itemId: string): void {
    const s = this.slotOf.get(itemId);
    if (s === undefined) return;
    if (this.inGraph(s)) {
      this.hnsw!.remove(BigInt(s));
      this.graphRemovals++;
    }
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
  search(query: Float32Array, k: number): IndexHit[] {
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
  private hitsOf(keys: BigUint64Array, k: number): IndexHit[] {
    const out: IndexHit[] = [];
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

  /** Nothing is mapped: everything is in {@link bytes}. */
  sharedBytes(): number {
    return 0;
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

  /**
   * The snapshot of the index as it is now: ids and codes copied in this tick; the graph (when
   * complete) saved by `write` — usearch's synchronous save, so call `write` before the index changes
   * again (VectorSnapshots.save does, first thing).
   */
  snapshot(opts: { scrub?: boolean } = {}): SnapshotWriter {
    const used = this.ids.length;
    const ids = this.ids.slice();
    const codes = this.codes.slice(0, used * this.dim);
    const graph = this.mode === 'hnsw' ? this.hnsw! : null;
    // the graph holds removed nodes' vectors: an erase's snapshot builds one afresh from the codes instead
    const rebuild = graph !== null && opts.scrub === true && this.graphRemovals > 0;
    return {
      graph: graph !== null,
      write: async (files) => {
        if (!rebuild) graph?.save(files.graph);
        await writeFile(files.codes, codes);
        await writeFile(files.ids, JSON.stringify(ids));
        if (rebuild)
          await runGraphWorker({
            buildOnly: true,
            dim: this.dim,
            graph: graphOptions(this.dim, this.settings),
            threads: BUILD_THREADS,
            out: files,
          });
      },
    };
  }

  /**
   * A private index holding a snapshot: `codes` its slots' codes, its HNSW file loaded when it has one
   * (else a graph is built above `exactMax`).
   */
  static restore(
    s: LoadedSnapshot,
    codes: Int8Array,
    settings: MemoryIndexSettings,
    mayBuild?: () => boolean,
  ): MemoryVectorIndex {
    const index = new MemoryVectorIndex(s.dim, settings, mayBuild);
    index.ids = s.ids.toArray();
    index.ensureCapacity(index.ids.length);
    index.codes.set(codes);
    index.ids.forEach((id, slot) => (id === null ? index.free.push(slot) : index.slotOf.set(id, slot)));
    if (s.hasGraph) {
      index.hnsw = newGraph(s.dim, settings);
      index.hnsw.load(s.files.graph);
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

  /** Starts the background HNSW build once the size passes `exactMax`. */
  private maybeBuild(): void {
    if (this.hnsw || this.closed || this.size <= this.settings.exactMax || !this.mayBuild()) return;
    this.hnsw = newGraph(this.dim, this.settings);
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
