/**
 * The discover index of N worker processes on one host (issue 20): each with a private copy of the
 * HNSW graph and codes (`FRESHET_DISCOVER_SHARED_INDEX=off`), or all viewing one snapshot's graph
 * memory-mapped with the codes read into each process (`graph`, the default) or left in the page cache
 * (`all`). Run by bench/discover.ts on its snapshot. Per mode and N it forks N
 * processes (bench/discover-shared-child.ts) that open the index and run the benchmark's queries, then
 * reads each one's PSS (proportional set size: a page shared by P processes counts 1/P in each) and
 * RSS from /proc/<pid>/smaps_rollup while all N live, minus a bare Node process's measured in the same
 * run. Prints the index's memory per process and per host, bytes per item, the open time and the
 * search p50/p99 (k = a first page's pool) of the queries' first pass (a viewed index faults its pages
 * in) and second.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { MemoryIndexSettings } from '../src/discover/adapters/memory-vector-index.js';
import { type LoadedSnapshot, VectorSnapshots } from '../src/discover/adapters/vector-snapshot.js';
import { ViewedVectorIndex } from '../src/discover/adapters/viewed-vector-index.js';
import type { ChildOrder, ChildReport } from './discover-shared-child.js';
import { summarize } from './stats.js';

const CHILD = new URL('./discover-shared-child.ts', import.meta.url).pathname;

/**
 * The snapshot in force in `dataDir`, which must have a graph, with the manifest's identity and
 * watermark (the benchmark's processes open it without a database to ask).
 * @throws Error when there is none with a graph.
 */
export async function currentSnapshot(
  dataDir: string,
  dim: number,
  settings: MemoryIndexSettings,
): Promise<{ snapshots: VectorSnapshots; snap: LoadedSnapshot; manifest: { identity: string; watermark: string } }> {
  const manifest = JSON.parse(readFileSync(join(dataDir, 'discover-index', 'current.json'), 'utf8')) as {
    identity: string;
    watermark: string;
  };
  const snapshots = new VectorSnapshots(dataDir);
  const snap = await snapshots.load(manifest.identity, dim, settings);
  if (!snap?.hasGraph) throw new Error('no snapshot with a graph in force');
  return { snapshots, snap, manifest };
}

/** PSS and RSS of process `pid`, bytes (Linux: /proc/<pid>/smaps_rollup). */
function memoryOf(pid: number): { pss: number; rss: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { pss: kb('Pss'), rss: kb('Rss') };
}

/** N children of one mode: their reports and memory while all live. */
async function runChildren(
  n: number,
  order: ChildOrder,
): Promise<{ reports: ChildReport[]; memory: { pss: number; rss: number }[] }> {
  const children: ChildProcess[] = Array.from({ length: n }, () => fork(CHILD, [], { stdio: 'inherit' }));
  try {
    const reports = await Promise.all(
      children.map(
        (c) =>
          new Promise<ChildReport>((resolve, reject) => {
            c.once('message', (m) => resolve(m as ChildReport));
            c.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
            c.send(order);
          }),
      ),
    );
    const memory = children.map((c) => memoryOf(c.pid!));
    return { reports, memory };
  } finally {
    for (const c of children) {
      c.removeAllListeners('exit');
      if (c.connected) c.send('exit');
    }
    await Promise.all(
      children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(0) : c.once('exit', resolve)))),
    );
  }
}

const mb = (b: number) => (b / 2 ** 20).toFixed(1);

/**
 * The table's rows for the snapshot in `dataDir` (`items` embeddings, `dim` dimensions), with
 * `queries` run by every process (k = `k`).
 */
export async function sharedVsPrivate(
  dataDir: string,
  items: number,
  dim: number,
  settings: MemoryIndexSettings,
  queries: readonly Float32Array[],
  k: number,
  label: string,
): Promise<string[][]> {
  const queriesPath = join(dataDir, 'bench-queries.f32');
  const all = new Float32Array(queries.length * dim);
  queries.forEach((q, i) => all.set(q, i * dim));
  writeFileSync(queriesPath, all);
  const order = (mode: ChildOrder['mode']): ChildOrder => ({ mode, dataDir, dim, settings, queriesPath, k });
  const bare = (await runChildren(1, order('bare'))).memory[0]!;
  const rows: string[][] = [];
  for (const mode of ['private', 'graph', 'all'] as const)
    for (const n of [1, 4]) {
      const { reports, memory } = await runChildren(n, order(mode));
      const pss = memory.reduce((s, m) => s + m.pss - bare.pss, 0);
      const rss = memory.reduce((s, m) => s + m.rss - bare.rss, 0) / n;
      const first = summarize(reports.flatMap((r) => r.searchMs[0]));
      const second = summarize(reports.flatMap((r) => r.searchMs[1]));
      rows.push([
        label,
        mode,
        String(n),
        `${mb(pss)} MB (${(pss / n / items).toFixed(0)} B/item/process)`,
        `${mb(rss)} MB`,
        `${mb(reports[0]!.privateBytes)} MB`,
        `${Math.max(...reports.map((r) => r.openMs)).toFixed(0)} ms`,
        `${first.p50.toFixed(2)} / ${first.p99.toFixed(2)}`,
        `${second.p50.toFixed(2)} / ${second.p99.toFixed(2)}`,
      ]);
    }
  return rows;
}

/** The columns of {@link sharedVsPrivate}'s rows. */
export const SHARED_COLUMNS = [
  'items',
  'index',
  'processes',
  'PSS of the host, above bare Node',
  'RSS per process, above bare Node',
  'private estimate per process',
  'open (slowest)',
  'search p50 / p99 ms, first pass',
  'second pass',
];

/**
 * A rebase of the snapshot in `dataDir` after `changes` upserts (the embeddings of other slots): opens it
 * viewed, applies them, and times the new generation's write (graph loaded privately, dead slots removed,
 * the delta added, saved; codes copied and patched — in a worker thread) and the longest the event loop
 * waited meanwhile. @returns both, ms.
 */
export async function rebaseMs(
  dataDir: string,
  dim: number,
  settings: MemoryIndexSettings,
  changes: readonly { itemId: string; vector: Int8Array }[],
): Promise<{ ms: number; loopMaxMs: number }> {
  const { snapshots, snap, manifest } = await currentSnapshot(dataDir, dim, settings);
  const index = await ViewedVectorIndex.open(snap, settings);
  try {
    for (const c of changes) index.upsert(c.itemId, c.vector);
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const t = performance.now();
    await snapshots.save(index.snapshot(), {
      identity: manifest.identity,
      watermark: manifest.watermark,
      dim,
      settings,
    });
    const ms = performance.now() - t;
    loop.disable();
    return { ms, loopMaxMs: loop.max / 1e6 };
  } finally {
    index.close();
  }
}
