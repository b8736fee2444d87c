/**
 * One worker process of bench/discover-shared.ts: opens the discover index from a snapshot — viewed

 * (the shared index, viewed-vector-index.ts: its codes in the process, or in the page cache) or restored privately (memory-vector-index.ts) — or
 * nothing (`bare`: Node and the modules alone, the baseline), runs the given queries twice, reports,
 * and stays alive until told to exit, so the parent can read its memory while its siblings live.
 */
import { readFile } from 'node:fs/promises';
import {
  MemoryVectorIndex,
  type MemoryIndexSettings,
  type VectorIndex,
} from '../src/discover/adapters/memory-vector-index.js';
import { VectorSnapshots } from '../src/discover/adapters/vector-snapshot.js';
import { ViewedVectorIndex } from '../src/discover/adapters/viewed-vector-index.js';
import { currentSnapshot } from './discover-shared.js';

/** What the parent sends. */
export interface ChildOrder {
  /** `graph` / `all`: viewed, the codes read into the process or left in the page cache. */
  mode: 'bare' | 'private' | 'graph' | 'all';
  dataDir: string;
  dim: number;
  settings: MemoryIndexSettings;
  /** Float32 queries, `dim` each, one after the other. */
  queriesPath: string;
  /** Nearest asked per search (a first page's pool). */
  k: number;
}

/** What the child answers. */
export interface ChildReport {
  openMs: number;
  /** The queries' search times, ms: the first pass (a viewed index faults its pages in), then the second. */
  searchMs: [number[], number[]];
  privateBytes: number;
}

async function open(o: ChildOrder): Promise<VectorIndex | null> {
  if (o.mode === 'bare') return null;
  const { snap } = await currentSnapshot(o.dataDir, o.dim, o.settings);
  return o.mode === 'private'
    ? MemoryVectorIndex.restore(snap, await VectorSnapshots.readCodes(snap), o.settings)
    : await ViewedVectorIndex.open(snap, o.settings, o.mode === 'graph' ? 'memory' : 'file');
}

process.once('message', async (o: ChildOrder) => {
  const t = performance.now();
  const index = await open(o);
  const openMs = performance.now() - t;
  const buf = await readFile(o.queriesPath);
  const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  const searchMs: [number[], number[]] = [[], []];
  for (const pass of searchMs)
    for (let at = 0; index && at < all.length; at += o.dim) {
      const q = all.subarray(at, at + o.dim);
      const s = performance.now();
      index.search(q, o.k);
      pass.push(performance.now() - s);
    }
  const report: ChildReport = { openMs, searchMs, privateBytes: index?.bytes() ?? 0 };
  process.send!(report);
  process.once('message', () => process.exit(0));
});
