/**
 * ViewedVectorIndex: the in-process vector index of a process that shares its host's copy of the HNSW
 * graph instead of holding its own (one private copy per worker process cost ~1 KB an item
 * each — 10.6 GB per worker at 10M items).
 *
 * - **Base**: a snapshot generation on disk (vector-snapshot.ts), its `graph.usearch` opened with
 *   usearch's `view` (memory-mapped, read-only: the page cache holds one copy for every process of the
 *   host). Its `codes.i8` (the exact re-rank's and the exact scan's input) either read into the process
 *   at open (`codesAt` `'memory'`, `dim` bytes an item: no cost per search) or read slot by slot with
 *   `pread` from the same page cache (`'file'`: nothing per item, ~4 µs a hit — +0.5 ms a search of
 *   k 120). Private either way: the packed slot ↔ id table (id-table.ts, ~id length + 13 bytes an item).
 * - **Delta**: what changed since the base's watermark — a small private {@link MemoryVectorIndex}
 *   of the upserted embeddings, and the set of base slots removed or superseded (`dead`), never
 *   served. An id lives in the delta when it is there, else in its base slot unless dead.
 * - **Search**: the base graph (asking past dead slots, ×4 a round while short) and the delta, merged
 *   by the int8 query's cosine to the codes (the graph's and the scan's own measure); the base falls
 *   back to an exact scan of the codes in 64k-slot steps where the graph answers short or k is a
 *   quarter of the base or more — the same contract as MemoryVectorIndex.search (a short answer means
 *   exhausted).
 * - **Rebase** ({@link snapshot}): folds the delta into a new generation in a worker thread
 *   (rebase-worker.mjs) — the base graph loaded privately (a transient full copy: one process at a
 *   time, under the snapshots' lock), dead slots removed, the delta added into free slots, saved; the
 *   codes file copied and patched. Every process then views the new generation (InProcessSearch
 *   switches on its catch-up).
 *
 * Searches are synchronous native calls (they hold the event loop for their duration).
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { type Index, MetricKind, exactSearch, type Matches } from '../../kernel/usearch.js';
import { fail } from '../../kernel/errors.js';
import { cosine, quantize } from '../embedding.js';
import type { IdTable } from './id-table.js';
import {
  BUILD_THREADS,
  graphOptions,
  type IndexHit,
  type MemoryIndexSettings,
  MemoryVectorIndex,
  newGraph,
  type VectorIndex,
} from './memory-vector-index.js';
import {
  type LoadedSnapshot,
  runGraphWorker,
  type SnapshotFiles,
  type SnapshotWriter,
  VectorSnapshots,
} from './vector-snapshot.js';

/** Slots read per step of an exact scan of the codes file (16 MiB at 256 dimensions). */
const SCAN_SLOTS = 65_536;

/** Where a viewed index reads its codes from (see the module doc). */
export type CodesAt = 'memory' | 'file';

/** A snapshot viewed, plus this process's changes since. See the module doc. */
export class ViewedVectorIndex implements VectorIndex {
  readonly mode = 'hnsw' as const;
  /** Base slots removed or superseded since the base (each held an id). */
  private readonly dead = new Set<number>();
  private readonly delta: MemoryVectorIndex;
  private fd: number | null;
  private removedFromBase = 0;

  private constructor(
    readonly dim: number,
    private readonly settings: MemoryIndexSettings,
    private readonly graph: Index,
    private readonly table: IdTable,
    private readonly files: SnapshotFiles,
    fd: number | null,
    private readonly mappedBytes: number,
    /** The base's codes when held in memory (`codes: 'memory'`); null: read from the file. */
    private readonly codes: Int8Array | null,
  ) {
    this.fd = fd;
    this.delta = new MemoryVectorIndex(dim, settings);
  }

  /**
   * Views snapshot `s` (which must have a graph of the settings' shape). The codes are read in the
   * thread pool (`'memory'`) and the id table came packed with the snapshot's load, so the event loop
   * waits for little more than usearch's `view` walking the mapping: 98–151 ms at 200k measured cold
   * on a VM that faults pages in slowly (docs/discover.md; reading the codes on the loop added 260 ms).
   * @throws Error when the snapshot has no graph or its files cannot be read.
   */
  static async open(
    s: LoadedSnapshot,
    settings: MemoryIndexSettings,
    codesAt: CodesAt = 'memory',
  ): Promise<ViewedVectorIndex> {
    if (!s.hasGraph) throw new Error(`snapshot ${s.generation} has no HNSW graph to view`);
    const codes = codesAt === 'memory' ? await VectorSnapshots.readCodes(s) : null;
    const table = s.ids;
    const graph = newGraph(s.dim, settings);
    graph.view(s.files.graph);
    const fd = codes ? null : openSync(s.files.codes, 'r');
    try {
      const mapped = (codes ? 0 : fstatSync(fd!).size) + statSync(s.files.graph).size;
      return new ViewedVectorIndex(s.dim, settings, graph, table, s.files, fd, mapped, codes);
    } catch (err) {
      if (fd !== null) closeSync(fd);
      throw err;
    }
  }

  get size(): number {
    return this.table.live - this.dead.size + this.delta.size;
  }

  /** Live base slots: held ids not removed or superseded. */
  private get baseLive(): number {
    return this.table.live - this.dead.size;
  }

  /** Whether base slot `s` is served: it holds an id, not removed or superseded since. */
  private live(s: number): boolean {
    return this.table.occupied(s) && !this.dead.has(s);
  }

  /** The live base slot of `itemId`; -1 when it has none. */
  private baseSlot(itemId: string): number {
    const s = this.table.slotOf(itemId);
    return s >= 0 && !this.dead.has(s) ? s : -1;
  }

  holds(itemId: string, codes: Int8Array): boolean {
    if (this.delta.has(itemId)) return this.delta.holds(itemId, codes);
    const s = this.baseSlot(itemId);
    if (s < 0 || codes.length !== this.dim) return false;
    const held = this.codesOf(s);
    for (let i = 0; i < this.dim; i++) if (held[i] !== codes[i]) return false;
    return true;
  }

  /** @throws FreshetError `INVALID_INPUT` when `codes` is not `dim` long. */
  upsert(itemId: string, codes: Int8Array): void {
    if (codes.length !== this.dim)
      throw fail('INVALID_INPUT', `embedding of ${itemId} has ${codes.length} components, the index ${this.dim}`);
    const s = this.baseSlot(itemId);
    if (s >= 0) this.dead.add(s);
    this.delta.upsert(itemId, codes);
  }

  remove(itemId: string): void {
    const s = this.baseSlot(itemId);
    if (s >= 0) {
      this.dead.add(s);
      this.removedFromBase++;
    }
    this.delta.remove(itemId);
  }

  /**
   * Base embeddings removed (deleted items) since the base, whose codes the snapshot files still hold
   * until a rebase — an erased author's items among them (InProcessSearch rebases at close for them).
   */
  get removals(): number {
    return this.removedFromBase;
  }

  /**
   * The k nearest of base and delta, best first by the int8 query's cosine — the measure the graph and
   * the exact scan rank by, so an exact search (k a quarter of the index or more) is exact here too.
   */
  search(query: Float32Array, k: number): IndexHit[] {
    if (query.length !== this.dim)
      throw fail('INVALID_INPUT', `query has ${query.length} components, the index ${this.dim}`);
    if (this.size === 0 || k <= 0) return [];
    const want = Math.min(k, this.size);
    const q = quantize(query);
    const hits: IndexHit[] = this.searchBase(q, Math.min(want, this.baseLive)).map((slot) => ({
      itemId: this.table.idOf(slot)!,
      vector: this.codesOf(slot),
    }));
    if (this.delta.size === 0) return hits;
    hits.push(...this.delta.search(query, want));
    const q8 = Float32Array.from(q);
    return hits
      .map((h) => ({ h, key: cosine(q8, h.vector) }))
      .sort((a, b) => b.key - a.key)
      .slice(0, want)
      .map((x) => x.h);
  }

  /** `need` live base slots nearest to `q`: the graph, else the exact scan (see the module doc). */
  private searchBase(q: Int8Array, need: number): number[] {
    if (need <= 0) return [];
    if (need * 4 < this.baseLive) {
      for (let ask = need + Math.min(this.dead.size, need); ; ask *= 4) {
        const keys = this.graph.search(q, ask, 1).keys;
        const slots: number[] = [];
        for (const key of keys) {
          const s = Number(key);
          if (this.live(s)) slots.push(s);
          if (slots.length === need) return slots;
        }
        if (keys.length < ask || ask >= this.table.slots) break;
      }
    }
    return this.scanBase(q, need);
  }

  /** The exact `need` nearest live base slots: the codes file scanned in steps of {@link SCAN_SLOTS}. */
  private scanBase(q: Int8Array, need: number): number[] {
    const slots = this.table.slots;
    const buf = this.codes ? Buffer.alloc(0) : Buffer.allocUnsafe(Math.min(SCAN_SLOTS, slots) * this.dim);
    const best: { slot: number; d: number }[] = [];
    for (let from = 0; from < slots; from += SCAN_SLOTS) {
      const n = Math.min(SCAN_SLOTS, slots - from);
      let skipped = 0;
      for (let s = from; s < from + n; s++) if (!this.live(s)) skipped++;
      let codes: Int8Array;
      if (this.codes) codes = this.codes.subarray(from * this.dim, (from + n) * this.dim);
      else {
        readSync(this.openFd(), buf, 0, n * this.dim, from * this.dim);
        codes = new Int8Array(buf.buffer, buf.byteOffset, n * this.dim);
      }
      const m = exactSearch(codes, q, this.dim, Math.min(n, need + skipped), MetricKind.Cos, 1) as Matches;
      m.keys.forEach((key, i) => {
        const s = from + Number(key);
        if (this.live(s)) best.push({ slot: s, d: m.distances[i]! });
      });
    }
    return best
      .sort((a, b) => a.d - b.d)
      .slice(0, need)
      .map((b) => b.slot);
  }

  /** A copy of base slot `slot`'s codes (from memory, or read from the codes file). */
  private codesOf(slot: number): Int8Array {
    if (this.codes) return this.codes.slice(slot * this.dim, (slot + 1) * this.dim);
    const out = new Int8Array(this.dim);
    readSync(this.openFd(), out, 0, this.dim, slot * this.dim);
    return out;
  }

  private openFd(): number {
    if (this.fd === null) throw fail('STORE_UNAVAILABLE', 'the discover index was closed');
    return this.fd;
  }

  /** Private bytes: the id table, the codes when in memory, the delta, and the dead set (~40 B a slot). */
  bytes(): number {
    return this.table.bytes() + (this.codes?.byteLength ?? 0) + this.delta.bytes() + this.dead.size * 40;
  }

  /** The viewed graph file, and the codes file when read from it: mapped or cached once for the host. */
  sharedBytes(): number {
    return this.mappedBytes;
  }

  /** The delta's background HNSW build, when it grew past `exactMax`. */
  buildProgress(): { done: number; total: number } | null {
    return this.delta.buildProgress();
  }

  async built(): Promise<void> {
    await this.delta.built();
  }

  /**
   * The rebase (see the module doc): the dead slots and the delta captured now, folded by `write`; with
   * `scrub` (an erase's purge), the graph is built afresh when slots died, so no removed vector stays in it.
   */
  snapshot(opts: { scrub?: boolean } = {}): SnapshotWriter {
    const dead = [...this.dead];
    const added = this.delta.entries();
    return { graph: true, write: (files) => this.rebase(files, dead, added, opts.scrub === true) };
  }

  /**
   * Writes base − `dead` + `added` as the generation `files`, in a worker thread (rebase-worker.mjs:
   * the graph's load and save never hold this process's event loop).
   * @throws Error when the worker fails (a file missing or unwritable).
   */
  private async rebase(files: SnapshotFiles, dead: number[], added: IndexHit[], scrub: boolean): Promise<void> {
    const codes = new Int8Array(added.length * this.dim);
    added.forEach((h, i) => codes.set(h.vector, i * this.dim));
    await runGraphWorker({
      dim: this.dim,
      graph: graphOptions(this.dim, this.settings),
      threads: BUILD_THREADS,
      base: this.files,
      out: files,
      ids: this.table.packed(),
      dead: Uint32Array.from(dead),
      added: { ids: added.map((h) => h.itemId), codes },
      scrub,
    });
  }

  /** Closes the codes file and stops the delta's build; the mapping goes with the graph object. */
  close(): void {
    this.delta.close();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
