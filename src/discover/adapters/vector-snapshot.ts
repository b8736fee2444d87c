/**
 * Snapshots of the in-process vector index on disk, so a restart loads the index and catches up only
 * what changed since, instead of reading every embedding and rebuilding the HNSW graph.
 *
 * Layout under `<dataDir>/discover-index/`: one folder per snapshot, `<generation>/` holding
 * `codes.i8` (the slots' int8 codes), `ids.json` (item id per slot, null for free slots) and
 * `graph.usearch` (the usearch HNSW file, when the graph was complete), and `current.json` naming the
 * generation with its watermark, database identity, dimension and HNSW settings. `current.json` is
 * replaced last, by an atomic rename, so a crash mid-write leaves the previous snapshot in force;
 * older generations are removed after. Several processes sharing a data folder each write their own
 * generations; the last rename wins, and each is a consistent snapshot with its own watermark.
 *
 * A snapshot is used only when it matches: same database identity, same dimension and same HNSW
 * settings (the graph's shape); otherwise the index is rebuilt from PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MemoryIndexSettings, MemoryIndexState } from './memory-vector-index.js';

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

/** A loaded snapshot. */
export interface LoadedSnapshot {
  state: MemoryIndexState;
  watermark: string;
}

const FOLDER = 'discover-index';

/** Reads and writes snapshots under `<dataDir>/discover-index`. */
export class VectorSnapshots {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, FOLDER);
  }

  /**
   * The snapshot in force when it matches `identity`, `dim` and `settings`; null when there is none
   * or it does not match (or cannot be read: a snapshot is a cache, never the truth).
   */
  async load(identity: string, dim: number, settings: MemoryIndexSettings): Promise<LoadedSnapshot | null> {
    try {
      const m = JSON.parse(await readFile(join(this.dir, 'current.json'), 'utf8')) as Manifest;
      if (m.version !== 1 || m.identity !== identity || m.dim !== dim) return null;
      const at = join(this.dir, m.generation);
      const ids = JSON.parse(await readFile(join(at, 'ids.json'), 'utf8')) as (string | null)[];
      const buf = await readFile(join(at, 'codes.i8'));
      if (buf.length !== ids.length * dim) return null;
      const codes = new Int8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      const sameGraph =
        m.graph && m.graph.connectivity === settings.connectivity && m.graph.expansionAdd === settings.expansionAdd;
      const hnswPath = sameGraph && existsSync(join(at, 'graph.usearch')) ? join(at, 'graph.usearch') : undefined;
      return { state: { dim, ids, codes, ...(hnswPath ? { hnswPath } : {}) }, watermark: m.watermark };
    } catch {
      return null;
    }
  }

  /**
   * Writes a snapshot and makes it current. `saveGraph` (usearch's synchronous save) runs first, in
   * the same tick as the caller captured `ids` and `codes`, so the three agree.
   */
  async save(
    s: { ids: (string | null)[]; codes: Int8Array; saveGraph: ((path: string) => void) | null },
    meta: { identity: string; watermark: string; dim: number; settings: MemoryIndexSettings },
  ): Promise<void> {
    const generation = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    const at = join(this.dir, generation);
    await mkdir(at, { recursive: true });
    s.saveGraph?.(join(at, 'graph.usearch'));
    await writeFile(join(at, 'codes.i8'), s.codes);
    await writeFile(join(at, 'ids.json'), JSON.stringify(s.ids));
    const manifest: Manifest = {
      version: 1,
      generation,
      identity: meta.identity,
      watermark: meta.watermark,
      dim: meta.dim,
      graph: s.saveGraph
        ? { connectivity: meta.settings.connectivity, expansionAdd: meta.settings.expansionAdd }
        : null,
      savedAtMs: Date.now(),
    };
    const tmp = join(this.dir, `current.json.${generation}`);
    await writeFile(tmp, JSON.stringify(manifest));
    await rename(tmp, join(this.dir, 'current.json'));
    await this.prune(generation);
  }

  /**
   * Removes generations other than `keep` and the current one that are older than a minute (another
   * process may be writing a newer one), and leftover manifests of crashed writes.
   */
  private async prune(keep: string): Promise<void> {
    const cutoff = Date.now() - 60_000;
    const current = (JSON.parse(await readFile(join(this.dir, 'current.json'), 'utf8')) as Manifest).generation;
    for (const name of await readdir(this.dir)) {
      const gen = name.startsWith('current.json.') ? name.slice('current.json.'.length) : name;
      const born = parseInt(gen.split('-')[0] ?? '', 36);
      if (name === 'current.json' || gen === keep || gen === current || !(born < cutoff)) continue;
      await rm(join(this.dir, name), { recursive: true, force: true });
    }
  }
}
