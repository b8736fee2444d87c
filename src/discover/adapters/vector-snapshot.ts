/**
 * Snapshots of the in-process vector index on disk, so a restart loads the index and catches up only
 * what changed since, instead of reading every embedding and rebuilding the HNSW graph — and so every
 * process of a host can serve one memory-mapped copy of the graph (viewed-vector-index.ts).
 *
 * Layout under `<dataDir>/discover-index/`: one folder per snapshot, `<generation>/` holding
 * `codes.i8` (the slots' int8 codes, `dim` bytes a slot), `ids.json` (item id per slot, null for free
 * slots) and `graph.usearch` (the usearch HNSW file, when the graph was complete), and `current.json`
 * naming the generation with its watermark, database identity, dimension and HNSW settings.
 * `current.json` is replaced last, by an atomic rename, so a crash mid-write leaves the previous
 * snapshot in force; older generations are removed a minute after they stop being current (a process
 * still viewing one keeps its mapping and open file: POSIX unlinks a mapped file only once unmapped).
 * Several processes sharing a data folder each write their own generations; the last rename wins, and
 * each is a consistent snapshot with its own watermark. `rebase.lock` (created exclusively) lets one
 * process at a time fold the processes' common changes into a new generation, and `build.lock` one
 * process build a first graph while the others serve the exact scan until its snapshot is there.
 *
 * The folder and its generations are created 0700 and their files 0600, as the data folder's
 * (src/kernel/data-dir-modes.ts): a snapshot holds vectors derived from the items' text.
 *
 * A snapshot is used only when it matches: same database identity, same dimension and same HNSW
 * settings (the graph's shape); otherwise the index is rebuilt from PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, rmSync, statSync } from 'node:fs';
import { readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { FILE_MODE, privateDir, restrictModes } from '../../kernel/data-dir-modes.js';
import { IdTable } from './id-table.js';
import type { MemoryIndexSettings } from './memory-vector-index.js';

/** What `current.json` says. */
interface Manifest {
  version: 1;
  generation: string;
  identity: string;
  watermark: string;
  dim: number;
  graph: { connectivity: number; expansionAdd: number } | null;
  savedAtMs: number;
}

/** The files of one generation. */
export interface SnapshotFiles {
  /** `ids.length × dim` int8 codes, slot after slot. */
  codes: string;
  /** JSON array: item id per slot, null for a free slot. */
  ids: string;
  /** The usearch HNSW file. */
  graph: string;
}

/** A loaded snapshot: its ids, where its files are, and the watermark it was taken at. */
export interface LoadedSnapshot {
  generation: string;
  watermark: string;
  dim: number;
  /** Item id per slot, packed (`toArray()`: null for a free slot). */
  ids: IdTable;
  files: SnapshotFiles;
  /** Whether `files.graph` holds a complete HNSW graph of the same shape as the settings'. */
  hasGraph: boolean;
}

/**
 * What an index hands {@link VectorSnapshots.save}: captured in one tick (so its parts agree), written
 * later. `graph` says whether `write` writes a graph file.
 */
export interface SnapshotWriter {
  graph: boolean;
  write(files: SnapshotFiles): Promise<void>;
}

const FOLDER = 'discover-index';
/** The folder's locks (see {@link VectorSnapshots.tryLock}). */
export type LockName = 'rebase' | 'build';
/** A lock older than this is a crashed holder's, ms. */
const LOCK_STALE_MS = 15 * 60_000;

/** The files of the generation folder `at`. */
export const filesOf = (at: string): SnapshotFiles => ({
  codes: join(at, 'codes.i8'),
  ids: join(at, 'ids.json'),
  graph: join(at, 'graph.usearch'),
});

/**
 * Runs rebase-worker.mjs with `workerData` (a viewed index's rebase, or a graph built afresh from a
 * snapshot's codes: `buildOnly`) in a worker thread, so usearch's synchronous load, build and save never
 * hold the event loop. @throws Error when the worker fails (a file missing or unwritable).
 */
export async function runGraphWorker(workerData: Record<string, unknown>): Promise<void> {
  const worker = new Worker(new URL('./rebase-worker.mjs', import.meta.url), { workerData });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the graph worker exited with ${code} before it finished`)));
    });
  } finally {
    await worker.terminate();
  }
}

/** Reads and writes snapshots under `<dataDir>/discover-index`. */
export class VectorSnapshots {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, FOLDER);
  }

  /** The generation in force (`current.json`), or null when there is none or it cannot be read. */
  async generation(): Promise<string | null> {
    try {
      return (JSON.parse(await readFile(join(this.dir, 'current.json'), 'utf8')) as Manifest).generation;
    } catch {
      return null;
    }
  }

  /**
   * The snapshot in force when it matches `identity`, `dim` and `settings`; null when there is none
   * or it does not match (or cannot be read: a snapshot is a cache, never the truth). The codes stay
   * on disk (see {@link readCodes}).
   */
  async load(identity: string, dim: number, settings: MemoryIndexSettings): Promise<LoadedSnapshot | null> {
    try {
      const m = JSON.parse(await readFile(join(this.dir, 'current.json'), 'utf8')) as Manifest;
      if (m.version !== 1 || m.identity !== identity || m.dim !== dim) return null;
      const files = filesOf(join(this.dir, m.generation));
      const json = await readFile(files.ids);
      const ids = IdTable.fromJson(json) ?? IdTable.from(JSON.parse(json.toString('utf8')) as (string | null)[]);
      if ((await stat(files.codes)).size !== ids.slots * dim) return null;
      const sameGraph =
        m.graph !== null &&
        m.graph.connectivity === settings.connectivity &&
        m.graph.expansionAdd === settings.expansionAdd;
      const hasGraph = sameGraph && existsSync(files.graph);
      return { generation: m.generation, watermark: m.watermark, dim, ids, files, hasGraph };
    } catch {
      return null;
    }
  }

  /** A snapshot's codes, read into memory (a private index). */
  static async readCodes(s: LoadedSnapshot): Promise<Int8Array> {
    const buf = await readFile(s.files.codes);
    return new Int8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /** Writes a snapshot and makes it current. @returns its generation. */
  async save(
    writer: SnapshotWriter,
    meta: { identity: string; watermark: string; dim: number; settings: MemoryIndexSettings },
  ): Promise<string> {
    const generation = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    const at = join(this.dir, generation);
    privateDir(this.dir);
    privateDir(at); // 0700 before any file is written in it: the files are out of other users' reach at once
    await writer.write(filesOf(at)); // begins in this tick: a graph's synchronous save sees the index as captured
    restrictModes(at); // the writers' files (usearch's graph, the codes, the ids) 0600
    const manifest: Manifest = {
      version: 1,
      generation,
      identity: meta.identity,
      watermark: meta.watermark,
      dim: meta.dim,
      graph: writer.graph
        ? { connectivity: meta.settings.connectivity, expansionAdd: meta.settings.expansionAdd }
        : null,
      savedAtMs: Date.now(),
    };
    const tmp = join(this.dir, `current.json.${generation}`);
    await writeFile(tmp, JSON.stringify(manifest), { mode: FILE_MODE });
    await rename(tmp, join(this.dir, 'current.json'));
    await this.prune(generation);
    return generation;
  }

  /**
   * Takes lock `name` of the folder (`rebase`: one process of the host folds changes into a new
   * generation at a time; `build`: one process builds the first HNSW graph while the others wait for
   * its snapshot). A file created exclusively; synchronous (a few µs), so a decision taken in one tick
   * can hold it. @returns whether this call took it (false: another process holds one younger than 15
   * minutes — older is a crashed holder's, and is taken over).
   */
  tryLock(name: LockName): boolean {
    const path = join(this.dir, `${name}.lock`);
    privateDir(this.dir);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        closeSync(openSync(path, 'wx', FILE_MODE));
        return true;
      } catch {
        let age = Number.POSITIVE_INFINITY;
        try {
          age = Date.now() - statSync(path).mtimeMs;
        } catch {
          // gone meanwhile: try again
        }
        if (age < LOCK_STALE_MS) return false;
        rmSync(path, { force: true });
      }
    }
    return false;
  }

  /** Releases lock `name` taken by {@link tryLock}. */
  unlock(name: LockName): void {
    rmSync(join(this.dir, `${name}.lock`), { force: true });
  }

  /**
   * Removes generations other than `keep` and the current one that are older than a minute (another
   * process may be writing a newer one), and leftover manifests of crashed writes; with `all` (an erase's
   * purge), whatever their age: a generation a process is still writing then fails to write, and never
   * becomes current. @returns how many were removed.
   */
  async prune(keep: string, all = false): Promise<number> {
    const cutoff = all ? Number.POSITIVE_INFINITY : Date.now() - 60_000;
    let removed = 0;
    const current = (JSON.parse(await readFile(join(this.dir, 'current.json'), 'utf8')) as Manifest).generation;
    for (const name of await readdir(this.dir)) {
      if (name === 'current.json' || name.endsWith('.lock')) continue;
      const gen = name.startsWith('current.json.') ? name.slice('current.json.'.length) : name;
      const born = parseInt(gen.split('-')[0] ?? '', 36);
      if (gen === keep || gen === current || !(born < cutoff)) continue;
      await rm(join(this.dir, name), { recursive: true, force: true });
      removed++;
    }
    return removed;
  }
}
