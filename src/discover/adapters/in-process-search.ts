/**
 * InProcessSearch: the VectorSearch of a deployment whose PostgreSQL has no pgvector (the embedded
 * default, and servers without the extension) — a MemoryVectorIndex in every serving process, or, once a
 * snapshot with a graph exists, a ViewedVectorIndex (the snapshot's graph memory-mapped, shared by the
 * host's processes, plus this process's changes), kept current from `item_embeddings`
 * (PostgresEmbeddingFeed) and snapshotted to the data folder (VectorSnapshots).
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
 * 4. **Shared** (`shared` not `off`): a start from a snapshot with a graph views it; a catch-up that finds
 *    a newer such generation in force (this process's own first save, or any process's rebase) opens it,
 *    catches it up from its watermark off to the side and swaps it in. A viewed index's snapshot is a
 *    rebase (viewed-vector-index.ts, in a worker thread): only when enough changed, and only by the
 *    process holding the data folder's rebase lock — at close too, and then also when items were deleted
 *    since the snapshot (their codes leave the files, as a private index's last snapshot drops them).
 */
import { waitAtMost } from '../../kernel/wait.js';
import { fail } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/observability.js';
import type { Sql } from '../../kernel/sql/sql.js';
import type { VectorHit, VectorSearch, VectorSearchStats } from '../vector-search.js';
import { MemoryVectorIndex, type MemoryIndexSettings, type VectorIndex } from './memory-vector-index.js';
import { PostgresEmbeddingFeed, type EmbeddingChange } from './postgres-embedding-feed.js';
import { type LoadedSnapshot, VectorSnapshots } from './vector-snapshot.js';
import { type CodesAt, ViewedVectorIndex } from './viewed-vector-index.js';

/** What the processes of a host share of the in-process index (`FRESHET_DISCOVER_SHARED_INDEX`). */
export type SharedIndex = 'graph' | 'all' | 'off';

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
  /**
   * `FRESHET_DISCOVER_SHARED_INDEX` (viewed-vector-index.ts): `graph` (the default) serves a snapshot's
   * HNSW graph memory-mapped, shared by every process of the host, with the codes read into each
   * process, plus this process's changes since; `all` also leaves the codes in the shared page cache
   * (read per hit); `off` keeps a private copy of everything.
   */
  shared: SharedIndex;
}

/** Least time between two tries of the build lock by a process that did not get it, ms. */
const BUILD_ASK_MS = 10_000;

/** Changes applied between two yields to the event loop while the HNSW graph takes them. */
const APPLY_SLICE = 8;
/** Longest a purge waits for another process's rebase to end (the rebase lock), ms. */
const PURGE_LOCK_WAIT_MS = 30_000;
/** Longest a close waits for its last catch-up before the snapshot (what was deleted meanwhile leaves it), ms. */
const CLOSE_SYNC_MS = 2_000;

/** What the last start did, for logs and the benchmarks. */
export interface StartReport {
  from: 'snapshot' | 'postgres';
  /** Rows read from PostgreSQL (all of them, or the changes since the snapshot's watermark). */
  rows: number;
  ms: number;
}

/** The in-process VectorSearch. Does not own the `Sql` handle. */
export class InProcessSearch implements VectorSearch {
  private index: VectorIndex;
  /** The snapshot generation the index views; null for a private index. */
  private viewing: string | null = null;
  /** Embeddings this process wrote while a switch to a newer generation was being caught up. */
  private wroteDuringSwitch: { itemId: string; vector: Int8Array }[] | null = null;
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
  /** Whether this process holds the data folder's build lock (released once its graph's snapshot is written). */
  private building = false;
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
    const fit = records.filter((r) => r.vector.length === this.dim);
    for (const r of fit) this.index.upsert(r.itemId, r.vector);
    this.wroteDuringSwitch?.push(...fit);
    this.changedSinceSave += records.length;
  }

  stats(): VectorSearchStats {
    const building = this.index.buildProgress();
    return {
      kind: this.index.mode,
      size: this.index.size,
      bytes: this.index.bytes(),
      ...(this.viewing ? { sharedBytes: this.index.sharedBytes(), generation: this.viewing } : {}),
      ...(building ? { building } : {}),
    };
  }

  /**
   * Stops the catch-up timer and a background build, catches up a last time (at most {@link CLOSE_SYNC_MS}:
   * items deleted since the last catch-up leave the snapshot), and writes a last snapshot when anything
   * changed since the previous one.
   */
  close(): Promise<void> {
    return (this.closed ??= (async () => {
      if (this.syncTimer) clearTimeout(this.syncTimer);
      this.syncTimer = null;
      await this.started.catch(() => undefined);
      if (this.startedOk) await this.catchUpWithin(CLOSE_SYNC_MS);
      await this.syncing?.catch(() => undefined);
      await this.saving;
      await this.maybeSave(true);
      this.index.close();
      this.releaseBuild();
    })());
  }

  /**
   * Rewrites the snapshots without what was deleted so far (an erase: src/use-cases/personal-data.ts): when
   * a snapshot is in force, catches up (the deleted items leave the index), writes a generation now, whatever
   * the schedule, scrubbed (a graph that removed nodes is built afresh: usearch keeps a removed node's vector
   * until its slot is reused) — a viewed index under the rebase lock, waited for up to
   * {@link PURGE_LOCK_WAIT_MS} — and removes every other generation. Without a snapshot there is nothing on
   * disk to rewrite. @returns the generations removed.
   * @throws FreshetError `STORE_UNAVAILABLE` when another process keeps the rebase lock longer (run it again).
   */
  async purge(): Promise<number> {
    const snapshots = this.snapshots;
    if (!snapshots || (await snapshots.generation()) === null) return 0;
    await this.sync();
    await this.saving;
    const purging = this.saveNow(snapshots);
    this.saving = purging.then(
      () => undefined,
      () => undefined,
    );
    try {
      return await snapshots.prune(await purging, true);
    } finally {
      this.saving = null;
    }
  }

  /** The purge's snapshot (see {@link purge}): written now and scrubbed. @returns its generation. */
  private async saveNow(snapshots: VectorSnapshots): Promise<string> {
    const locked = this.viewing !== null;
    if (locked) {
      const until = Date.now() + PURGE_LOCK_WAIT_MS;
      while (!snapshots.tryLock('rebase')) {
        if (Date.now() > until)
          throw fail('STORE_UNAVAILABLE', 'another process kept the vector index rebase lock; run the erase again');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    try {
      const writer = this.index.snapshot({ scrub: true });
      const changed = this.changedSinceSave;
      const meta = { identity: this.identity, watermark: this.watermark!, dim: this.dim, settings: this.settings };
      const generation = await snapshots.save(writer, meta);
      this.lastSaveAt = this.now();
      this.savedGraph = writer.graph;
      this.changedSinceSave -= changed;
      return generation;
    } finally {
      if (locked) snapshots.unlock('rebase');
    }
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
      this.index = await this.fromSnapshot(snap);
      this.watermark = snap.watermark;
      const rows = await this.catchUp();
      this.changedSinceSave = rows;
      this.lastSaveAt = this.now();
      this.savedGraph = snap.hasGraph;
      this.startReport = { from: 'snapshot', rows, ms: performance.now() - t };
    } else {
      const index = new MemoryVectorIndex(this.dim, this.settings, this.mayBuild);
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

  /** When this process last tried the build lock (ms, the clock's); -∞ before the first try. */
  private buildAskedAt = Number.NEGATIVE_INFINITY;
  /**
   * Whether this process may build an HNSW graph (MemoryVectorIndex's gate): always when not sharing;
   * when sharing, only the holder of the data folder's build lock — the others stay on the exact scan
   * and view its snapshot when it is written (one build per host, not one per worker).
   */
  private readonly mayBuild = (): boolean => {
    const may = this.mayBuildNow();
    // once per graph this process builds (one per host when sharing: the operator's and the rehearsal's sign)
    if (may) this.log?.info({ shared: this.settings.shared }, 'discover index: building the HNSW graph');
    return may;
  };

  private mayBuildNow(): boolean {
    if (this.settings.shared === 'off' || !this.snapshots) return true;
    if (this.building) return true;
    // asked at every upsert past exactMax: the lock is tried at most every BUILD_ASK_MS
    if (this.now() - this.buildAskedAt < BUILD_ASK_MS) return false;
    this.buildAskedAt = this.now();
    this.building = this.snapshots.tryLock('build');
    return this.building;
  }

  /** Where a viewed index keeps its base's codes. */
  private codesAt(): CodesAt {
    return this.settings.shared === 'all' ? 'file' : 'memory';
  }

  /** The index of snapshot `snap`: viewed when it has a graph and sharing is on, else private. */
  private async fromSnapshot(snap: LoadedSnapshot): Promise<VectorIndex> {
    if (this.settings.shared !== 'off' && snap.hasGraph) {
      const viewed = await ViewedVectorIndex.open(snap, this.settings, this.codesAt());
      this.viewing = snap.generation;
      return viewed;
    }
    this.viewing = null;
    return MemoryVectorIndex.restore(snap, await VectorSnapshots.readCodes(snap), this.settings, this.mayBuild);
  }

  /**
   * Reads the changes since the watermark into the index; returns the rows read. When sharing and a
   * newer snapshot generation with a graph is in force (another process's rebase, or this one's own
   * save), views it instead: caught up from its watermark off to the side, then swapped in.
   */
  private async catchUp(): Promise<number> {
    const at = this.now();
    const next = await this.newerView();
    if (next) this.wroteDuringSwitch = [];
    try {
      const target = next?.index ?? this.index;
      const w = await this.feed.watermark();
      const rows = await this.feed.read(next ? next.snap.watermark : this.watermark, (changes) =>
        this.apply(target, changes),
      );
      if (next) {
        for (const r of this.wroteDuringSwitch ?? []) next.index.upsert(r.itemId, r.vector);
        const old = this.index;
        this.index = next.index;
        this.viewing = next.snap.generation;
        this.savedGraph = true;
        this.changedSinceSave = rows;
        old.close();
        this.log?.info({ generation: next.snap.generation, size: this.index.size }, 'discover index: viewing');
      } else this.changedSinceSave += rows;
      this.watermark = w;
      this.lastSyncAt = at;
      void this.maybeSave();
      return rows;
    } catch (err) {
      next?.index.close();
      throw err;
    } finally {
      this.wroteDuringSwitch = null;
    }
  }

  /** A newer generation with a graph to view, when sharing (see {@link catchUp}); null otherwise. */
  private async newerView(): Promise<{ snap: LoadedSnapshot; index: ViewedVectorIndex } | null> {
    if (this.settings.shared === 'off' || !this.snapshots || !this.startedOk) return null;
    const generation = await this.snapshots.generation();
    if (generation === null || generation === this.viewing) return null;
    const snap = await this.snapshots.load(this.identity, this.dim, this.settings);
    if (!snap?.hasGraph || snap.generation === this.viewing) return null;
    try {
      return { snap, index: await ViewedVectorIndex.open(snap, this.settings, this.codesAt()) };
    } catch (err) {
      this.log?.warn({ err, generation }, 'discover index: could not view the snapshot; keeping the index');
      return null;
    }
  }

  /**
   * Applies changes: deleted items and other dimensions leave the index, the rest is upserted. In
   * HNSW mode an insert costs ~1–5 ms of graph work, so the event loop is let go every
   * {@link APPLY_SLICE} changes (other requests are served meanwhile).
   */
  private async apply(index: VectorIndex, changes: readonly EmbeddingChange[]): Promise<void> {
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i]!;
      if (c.deleted || c.vector.length !== this.dim) index.remove(c.itemId);
      else if (!index.holds(c.itemId, c.vector)) index.upsert(c.itemId, c.vector);
      if (index.mode === 'hnsw' && i % APPLY_SLICE === APPLY_SLICE - 1)
        await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Starts a background snapshot when one is due (see the module doc). A viewed index's snapshot is a
   * rebase (a transient private copy of the graph): only for enough changes, one process of the host at
   * a time (the snapshots' lock).
   */
  private maybeSave(closing = false): Promise<void> | null {
    if (!this.snapshots || this.saving || (this.closed && !closing)) return null;
    // a private index's last snapshot at close is written whatever its size (a restart reads it)
    if (this.index.size < this.settings.snapshotMin && !(closing && !this.viewing)) return null;
    const enoughChanged = this.changedSinceSave >= Math.max(100, this.index.size / 100);
    const due = enoughChanged && (closing || this.now() - this.lastSaveAt >= this.settings.snapshotEveryMs);
    const graphUnsaved = this.index.mode === 'hnsw' && !this.savedGraph;
    const firstSave = this.lastSaveAt === 0 && this.changedSinceSave > 0;
    // a viewed index also rebases at close when items were deleted since its snapshot, whose codes the
    // files still hold (an erased author's among them), as a private index's last snapshot drops them
    const deleted = this.index instanceof ViewedVectorIndex && this.index.removals > 0;
    const wanted = this.viewing
      ? due || (closing && deleted)
      : graphUnsaved || firstSave || due || (closing && this.changedSinceSave > 0);
    if (!wanted) return null;
    this.saving = this.save()
      .catch((err: unknown) => this.log?.warn({ err }, 'discover index: snapshot failed'))
      .finally(() => (this.saving = null));
    return this.saving;
  }

  /** Releases the build lock when this process holds it. */
  private releaseBuild(): void {
    if (!this.building) return;
    this.building = false;
    this.snapshots?.unlock('build');
  }

  /** Writes a snapshot of the index as it is now (a viewed one under the rebase lock, or not at all). */
  private async save(): Promise<void> {
    const snapshots = this.snapshots;
    if (!snapshots || this.watermark === null) return;
    const writer = this.index.snapshot();
    const meta = { identity: this.identity, watermark: this.watermark, dim: this.dim, settings: this.settings };
    const changed = this.changedSinceSave;
    this.lastSaveAt = this.now();
    const locked = this.viewing !== null;
    if (locked && !snapshots.tryLock('rebase')) return;
    try {
      await snapshots.save(writer, meta);
    } finally {
      if (locked) snapshots.unlock('rebase');
    }
    this.savedGraph = writer.graph;
    this.changedSinceSave -= changed;
    if (writer.graph) this.releaseBuild();
  }
}
