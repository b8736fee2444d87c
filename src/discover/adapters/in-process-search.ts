/**
 * InProcessSearch: the VectorSearch of a deployment whose PostgreSQL has no pgvector (the embedded
 * default, and servers without the extension) — a MemoryVectorIndex in every serving process, kept
 * current from `item_embeddings` (PostgresEmbeddingFeed) and snapshotted to the data folder
 * (VectorSnapshots).
 *
 * Life cycle:
 * 1. **Start** (begun by the constructor; the app warms it at open, src/discover/wire.ts): load the
 *    snapshot in force when it matches this database, dimension and HNSW settings, then catch up from
 *    its watermark; otherwise read every embedding of a live item (keyset pages of 5,000) into a new
 *    index. {@link isReady} says whether it is done; a search before that waits for it. A failed start
 *    (the store was down) is retried by the next search or {@link warm}.
 * 2. **Catch-up** on a timer: every `syncMs` after the previous one ended (an unref'd timer, stopped by
 *    {@link close}), so what another process committed is searchable within about `syncMs` plus one
 *    catch-up (1,000 changes: ~0.1 s in exact mode, seconds in HNSW mode). A search finding the last
 *    catch-up older than `syncMs` (the timer is behind, or a catch-up is running) starts one if none
 *    runs and waits for it at most `syncWaitMs`, then answers from the index as it is. Embeddings this
 *    process writes are indexed at once (`wrote`). A failed catch-up is logged and the index served as
 *    it is (the search's SQL filter reports a store that is down).
 * 3. **Snapshots** (with a data folder, at `snapshotMin` embeddings or more): after the first start
 *    that read everything or completed an HNSW graph, then when at least 1 % of the size (≥ 100) changed
 *    and `snapshotEveryMs` passed since the last, and on close. Writing runs in the background; the
 *    graph's save is a synchronous native write (~0.1 s per 100k items).
 */
import { waitAtMost } from '../../kernel/wait.js';
import { fail } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/observability.js';
import type { Sql } from '../../kernel/sql/sql.js';
import type { VectorHit, VectorSearch, VectorSearchStats } from '../vector-search.js';
import { MemoryVectorIndex, type MemoryIndexSettings } from './memory-vector-index.js';
import { PostgresEmbeddingFeed, type EmbeddingChange } from './postgres-embedding-feed.js';
import { VectorSnapshots } from './vector-snapshot.js';

/** Tunables of the in-process search (config `FRESHET_DISCOVER_*`). */
export interface InProcessSettings extends MemoryIndexSettings {
  /** Time between two catch-ups (the timer), ms; also how old a catch-up a search accepts without asking for one. */
  syncMs: number;
  /** Longest a search waits for a catch-up it asked for, ms (then it answers from the index as it is). */
  syncWaitMs: number;
  /** Data folder for snapshots; null: none (every start reads every embedding). */
  dataDir: string | null;
  /** Fewest embeddings worth a snapshot (below it a start reads them from PostgreSQL). */
  snapshotMin: number;
  /** Least time between two snapshots, ms. */
  snapshotEveryMs: number;
}

/** Changes applied between two yields to the event loop while the HNSW graph takes them. */
const APPLY_SLICE = 8;

/** What the last start did, for logs and the benchmarks. */
export interface StartReport {
  from: 'snapshot' | 'postgres';
  /** Rows read from PostgreSQL (all of them, or the changes since the snapshot's watermark). */
  rows: number;
  ms: number;
}

/** The in-process VectorSearch. Does not own the `Sql` handle. */
export class InProcessSearch implements VectorSearch {
  private index: MemoryVectorIndex;
  private readonly feed: PostgresEmbeddingFeed;
  private readonly snapshots: VectorSnapshots | null;
  private identity = '';
  private watermark: string | null = null;
  private started: Promise<void>;
  private syncing: Promise<void> | null = null;
  private lastSyncAt = 0;
  private changedSinceSave = 0;
  private lastSaveAt = 0;
  /** Whether the snapshot in force holds a complete HNSW graph (the expensive part to rebuild). */
  private savedGraph = false;
  private saving: Promise<void> | null = null;
  private closed: Promise<void> | null = null;
  /** Whether the start completed (snapshot loaded or everything read). */
  private startedOk = false;
  private syncTimer: NodeJS.Timeout | null = null;
  /** How the index was started (once {@link isReady}). */
  startReport: StartReport | null = null;

  constructor(
    sql: Sql,
    readonly dim: number,
    readonly settings: InProcessSettings,
    private readonly log?: Logger,
    /** Wall time in ms (the catch-up and snapshot schedule); injectable for tests. */
    private readonly now: () => number = Date.now,
  ) {
    this.feed = new PostgresEmbeddingFeed(sql);
    this.snapshots = settings.dataDir ? new VectorSnapshots(settings.dataDir) : null;
    this.index = new MemoryVectorIndex(dim, settings);
    this.started = this.begin();
  }

  /** Whether the start is done: a search answers without waiting for it. */
  isReady(): boolean {
    return this.startedOk;
  }

  /** Restarts a failed start in the background (a no-op while starting and once started). */
  warm(): void {
    if (this.startedOk || this.closed) return;
    void this.ensureStarted().catch(() => undefined);
  }

  /** Resolves once started (snapshot loaded or everything read) and, when one is due, the HNSW graph built. */
  async ready(): Promise<void> {
    await this.ensureStarted();
    await this.index.built();
  }

  async search(query: Float32Array, k: number): Promise<VectorHit[]> {
    if (query.length !== this.dim)
      throw fail('INVALID_INPUT', `query has ${query.length} components, the index ${this.dim}`);
    await this.ensureStarted();
    if (this.now() - this.lastSyncAt >= this.settings.syncMs) await this.catchUpWithin(this.settings.syncWaitMs);
    return this.index.search(query, k);
  }

  /** Asks for a catch-up (joining one that runs) and waits for it at most `budgetMs`; never throws. */
  private async catchUpWithin(budgetMs: number): Promise<void> {
    const catching = this.sync().catch((err: unknown) =>
      this.log?.warn({ err }, 'discover index: catch-up failed; serving the index as it is'),
    );
    if (budgetMs <= 0) return;
    await waitAtMost(catching, budgetMs);
  }

  /** Schedules the next timed catch-up `syncMs` from now (unref'd: it never keeps a process alive). */
  private scheduleSync(): void {
    if (this.closed || this.syncTimer) return;
    this.syncTimer = setTimeout(() => {
      this.syncTimer = null;
      void this.sync()
        .catch((err: unknown) => this.log?.warn({ err }, 'discover index: catch-up failed; the next one retries'))
        .finally(() => this.scheduleSync());
    }, this.settings.syncMs).unref();
  }

  /** Catches up with every change committed before the call (see the module doc). */
  async sync(): Promise<void> {
    await this.ensureStarted();
    this.syncing ??= this.catchUp()
      .then(() => undefined)
      .finally(() => (this.syncing = null));
    return this.syncing;
  }

  wrote(records: readonly { itemId: string; vector: Int8Array }[]): void {
    for (const r of records) if (r.vector.length === this.dim) this.index.upsert(r.itemId, r.vector);
    this.changedSinceSave += records.length;
  }

  stats(): VectorSearchStats {
    const building = this.index.buildProgress();
    return {
      kind: this.index.mode,
      size: this.index.size,
      bytes: this.index.bytes(),
      ...(building ? { building } : {}),
    };
  }

  /** Stops the catch-up timer and a background build, and writes a last snapshot when anything changed since the previous one. */
  close(): Promise<void> {
    return (this.closed ??= (async () => {
      if (this.syncTimer) clearTimeout(this.syncTimer);
      this.syncTimer = null;
      await this.started.catch(() => undefined);
      await this.syncing?.catch(() => undefined);
      await this.saving;
      if (this.changedSinceSave > 0)
        await this.save().catch((err: unknown) => this.log?.warn({ err }, 'discover index: final snapshot failed'));
      this.index.close();
    })());
  }

  /** The start promise; a failed start (the store was down) is retried by the next caller. */
  private async ensureStarted(): Promise<void> {
    try {
      await this.started;
    } catch {
      this.started = this.begin();
      await this.started;
    }
  }

  /** Starts; when done, marks the index ready and starts the catch-up timer. */
  private begin(): Promise<void> {
    const started = this.start().then(() => {
      this.startedOk = true;
      this.scheduleSync();
    });
    started.catch((err: unknown) =>
      this.log?.warn({ err }, 'discover index: start failed; the next search or warm-up retries'),
    );
    return started;
  }

  private async start(): Promise<void> {
    const t = performance.now();
    this.identity = await this.feed.identity();
    const snap = await this.snapshots?.load(this.identity, this.dim, this.settings);
    if (snap) {
      this.index = MemoryVectorIndex.restore(snap.state, this.settings);
      this.watermark = snap.watermark;
      const rows = await this.catchUp();
      this.changedSinceSave = rows;
      this.lastSaveAt = this.now();
      this.savedGraph = snap.state.hnswPath !== undefined;
      this.startReport = { from: 'snapshot', rows, ms: performance.now() - t };
    } else {
      const index = new MemoryVectorIndex(this.dim, this.settings);
      const w = await this.feed.watermark();
      const rows = await this.feed.read(null, (changes) => this.apply(index, changes));
      this.index = index;
      this.watermark = w;
      this.lastSyncAt = this.now();
      this.changedSinceSave = rows;
      this.startReport = { from: 'postgres', rows, ms: performance.now() - t };
    }
    this.log?.info({ ...this.startReport, size: this.index.size, mode: this.index.mode }, 'discover index started');
    void this.index.built().then(() => this.maybeSave());
  }

  /** Reads the changes since the watermark into the index; returns the rows read. */
  private async catchUp(): Promise<number> {
    const at = this.now();
    const w = await this.feed.watermark();
    const rows = await this.feed.read(this.watermark, (changes) => this.apply(this.index, changes));
    this.watermark = w;
    this.lastSyncAt = at;
    this.changedSinceSave += rows;
    this.maybeSave();
    return rows;
  }

  /**
   * Applies changes: deleted items and other dimensions leave the index, the rest is upserted. In
   * HNSW mode an insert costs ~1–5 ms of graph work, so the event loop is let go every
   * {@link APPLY_SLICE} changes (other requests are served meanwhile).
   */
  private async apply(index: MemoryVectorIndex, changes: readonly EmbeddingChange[]): Promise<void> {
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i]!;
      if (c.deleted || c.vector.length !== this.dim) index.remove(c.itemId);
      else if (!index.holds(c.itemId, c.vector)) index.upsert(c.itemId, c.vector);
      if (index.mode === 'hnsw' && i % APPLY_SLICE === APPLY_SLICE - 1)
        await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Starts a background snapshot when one is due (see the module doc). */
  private maybeSave(): void {
    if (!this.snapshots || this.saving || this.closed || this.index.size < this.settings.snapshotMin) return;
    const graphUnsaved = this.index.mode === 'hnsw' && !this.savedGraph;
    const firstSave = this.lastSaveAt === 0 && this.changedSinceSave > 0;
    const enough =
      this.changedSinceSave >= Math.max(100, this.index.size / 100) &&
      this.now() - this.lastSaveAt >= this.settings.snapshotEveryMs;
    if (!graphUnsaved && !firstSave && !enough) return;
    this.saving = this.save()
      .catch((err: unknown) => this.log?.warn({ err }, 'discover index: snapshot failed'))
      .finally(() => (this.saving = null));
  }

  private async save(): Promise<void> {
    if (!this.snapshots || this.watermark === null) return;
    const state = this.index.state();
    const meta = { identity: this.identity, watermark: this.watermark, dim: this.dim, settings: this.settings };
    const changed = this.changedSinceSave;
    this.lastSaveAt = this.now();
    await this.snapshots.save(state, meta);
    this.savedGraph = state.saveGraph !== null;
    this.changedSinceSave -= changed;
  }
}
