/**
 * Discover feed (note 3, issue 12): the phase-2 nearest-neighbour index on a real-text corpus, on the
 * PostgreSQL server (no pgvector: the in-process usearch index) and Redis on loopback.
 *
 * Corpus (bench/discover-corpus.ts): the HN titles + MIND news of /work/shared/data (22,100 texts),
 * padded with perturbed copies to 20k / 200k (and 1M with `--1m` or FRESHET_BENCH_DISCOVER_SIZES),
 * text-embedded by Freshet's own embedder (256 dims, int8). Per size it prints:
 * - **index**: start (every embedding read from PostgreSQL), HNSW build (usearch's multi-threaded add on
 *   every core, in the serving path's background steps; progress every 30 s; bounded by
 *   FRESHET_BENCH_DISCOVER_BUILD_S, default 3,600 s — past it the row says how far the graph got and the
 *   rest of that size runs on the exact scan, labelled so), memory per item (the index's estimate, the
 *   process RSS growth, the snapshot's bytes on disk), a restart from the snapshot, and the catch-up of
 *   1,000 embeddings written by another process;
 * - **recall@20** of `DiscoverIndex.nearest` (the whole path: search, exact re-rank, filters) against an
 *   exact cosine scan of every stored vector in the same run, for diffuse readers (decayed mean of 20
 *   random items), MIND-history readers and item queries (100 each; 50 at 1M); an item tied with the
 *   exact 20th counts as found. Targets: ≥ 0.95 at 20k and 200k, ≥ 0.9 at 1M;
 * - **pages** through the service (`DiscoverFeed.page`, limit 20): a phase-2 first page of readers with
 *   20 signals (target p50 ≤ 10 ms, p99 ≤ 25 ms at 200k) — their first session, which also creates their
 *   per-reader seen filters, and a new session of the same readers a minute later — the next page of the
 *   first sessions (the pool cache), a phase-3 page; then each part of a page alone (bench/discover-parts.ts).
 */
import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/compose/config.js';
import { openFreshet, type Freshet } from '../src/compose/open.js';
import { ManualClock, DAY_MS } from '../src/kernel/clock.js';
import { openPostgres, type Sql } from '../src/kernel/sql/sql.js';
import type { ItemInput } from '../src/kernel/items/content-store.js';
import { InProcessSearch } from '../src/discover/adapters/in-process-search.js';
import { BUILD_THREADS } from '../src/discover/adapters/memory-vector-index.js';
import { PostgresDiscoverIndex } from '../src/discover/adapters/postgres-discover-index.js';
import { LazyVectorSearch } from '../src/discover/adapters/choose-search.js';
import { embedText, quantize } from '../src/discover/embedding.js';
import { vectorSearchSettings } from '../src/discover/wire.js';
import {
  BENCH_DATABASE_URL,
  BENCH_REDIS_URL,
  dropSchema,
  printTitle,
  prng,
  runIfMain,
  uniquePrefix,
  uniqueSchema,
} from './support.js';
import { printTable, summarize, timingRow, TIMING_COLUMNS, type Summary } from './stats.js';
import { discoverParts } from './discover-parts.js';
import { SHARED_COLUMNS, rebaseMs, sharedVsPrivate } from './discover-shared.js';
import { benchQueries, mindHistories, padded, realTexts, type BenchQuery } from './discover-corpus.js';

const NOW = Date.UTC(2026, 0, 1);
const SIZES = (
  process.env.FRESHET_BENCH_DISCOVER_SIZES ?? (process.argv.includes('--1m') ? '20000,200000,1000000' : '20000,200000')
)
  .split(',')
  .map(Number);
const PAGES = 200;
const DIM = 256;
/** Longest the HNSW build of one size may take before the run goes on without it, s. */
const BUILD_S = Number(process.env.FRESHET_BENCH_DISCOVER_BUILD_S ?? 3600);
/** How often a running build prints its progress, ms. */
const PROGRESS_MS = 30_000;

const label = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1000}k`);

/**
 * Phase-2 first pages of readers `reader(i)` (20 warm-up) at `nowMs` (a new session each), with each
 * session's next cursor.
 */
async function firstPages(
  f: Freshet,
  reader: (i: number) => string,
  nowMs = NOW,
): Promise<Summary & { cursors: (string | null)[] }> {
  const samples: number[] = [];
  const cursors: (string | null)[] = [];
  for (let i = 0; i < PAGES + 20; i++) {
    const t = performance.now();
    const page = await f.discover.feed.page(reader(i), 20, undefined, nowMs);
    if (i >= 20) samples.push(performance.now() - t);
    cursors.push(page.nextCursor);
  }
  return { ...summarize(samples), cursors };
}

/** Second pages of the same sessions (their ranked pool is cached: no vector search). */
async function nextPages(
  f: Freshet,
  reader: (i: number) => string,
  cursors: readonly (string | null)[],
): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < cursors.length; i++) {
    const t = performance.now();
    await f.discover.feed.page(reader(i), 20, cursors[i] ?? undefined, NOW);
    if (i >= 20) samples.push(performance.now() - t);
  }
  return summarize(samples);
}

/** The exact top 20 cosines' cutoff (the 20th best) for each query: a scan of every code. */
function exactCutoffs(codes: Int8Array, n: number, queries: readonly BenchQuery[]): number[] {
  const norms = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let d = i * DIM, e = d + DIM; d < e; d++) s += codes[d]! * codes[d]!;
    norms[i] = Math.sqrt(s);
  }
  return queries.map(({ vector: q }) => {
    let qn = 0;
    for (let d = 0; d < DIM; d++) qn += q[d]! * q[d]!;
    qn = Math.sqrt(qn);
    const top = new Float64Array(20).fill(-2); // ascending: top[0] is the 20th best
    for (let i = 0; i < n; i++) {
      let dot = 0;
      for (let d = 0, o = i * DIM; d < DIM; d++, o++) dot += q[d]! * codes[o]!;
      const c = norms[i] === 0 ? 0 : dot / (norms[i]! * qn);
      if (c <= top[0]!) continue;
      let j = 0;
      while (j < 19 && top[j + 1]! < c) top[j] = top[++j]!;
      top[j] = c;
    }
    return top[0]!;
  });
}

/**
 * recall@20 of `index.nearest` per query kind, with its latency; `mode` says which search answers (read
 * before and after: an unfinished graph may complete meanwhile).
 */
async function recall(
  index: PostgresDiscoverIndex,
  { queries, cutoffs }: { queries: BenchQuery[]; cutoffs: number[] },
  n: number,
  mode: () => string,
): Promise<string[][]> {
  const before = mode();
  const byKind = new Map<string, { hits: number; total: number; ms: number[] }>();
  for (let i = 0; i < queries.length; i++) {
    const q = queries[i]!;
    const t = performance.now();
    const found = await index.nearest({
      vector: q.vector,
      untilMs: NOW + DAY_MS,
      readerId: 'nobody',
      limit: 20,
      after: null,
      minSimilarity: -1,
    });
    const ms = performance.now() - t;
    const k = byKind.get(q.kind) ?? byKind.set(q.kind, { hits: 0, total: 0, ms: [] }).get(q.kind)!;
    k.hits += found.filter((r) => r.key >= cutoffs[i]! - 1e-9).length;
    k.total += 20;
    k.ms.push(ms);
  }
  const target = n >= 1e6 ? 0.9 : 0.95;
  const answered = before === mode() ? before : `${before} → ${mode()}`;
  return [...byKind].map(([kind, k]) => {
    const s = summarize(k.ms);
    const r = k.hits / k.total;
    return [
      label(n),
      `${kind} (${answered})`,
      String(k.ms.length),
      r.toFixed(3),
      `≥ ${target}${r >= target ? '' : ' MISSED'}`,
      s.p50.toFixed(2),
      s.p99.toFixed(2),
    ];
  });
}

/** Bytes of the files under `dir`. */
function folderBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) n += statSync(join(e.parentPath, e.name)).size;
  return n;
}

async function loadCorpus(
  f: Freshet,
  n: number,
): Promise<{ ids: string[]; codes: Int8Array; loadS: number; embedS: number }> {
  const texts = padded(await realTexts(), n);
  const rnd = prng(n);
  const items: ItemInput[] = texts.map((t, i) => ({
    id: t.id,
    authorId: `a${i % 5000}`,
    title: t.title,
    text: t.text,
    url: null,
    tags: t.tags,
    publishedAt: NOW - Math.floor(rnd() * 30 * DAY_MS),
    popularity: 0,
  }));
  const t0 = performance.now();
  for (let i = 0; i < n; i += 1000) {
    await f.content.upsertItems(items.slice(i, i + 1000), NOW);
    if (i % 100_000 === 0 && i > 0)
      console.log(
        `  ${label(n)}: ${i.toLocaleString('en')} items written (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
      );
  }
  const loadS = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  await f.discover.embeddings.embedMissing(NOW, 2000);
  const embedS = (performance.now() - t1) / 1000;
  const codes = new Int8Array(n * DIM);
  texts.forEach((t, i) => codes.set(quantize(embedText(t, DIM)), i * DIM));
  return { ids: texts.map((t) => t.id), codes, loadS, embedS };
}

/**
 * Waits for the background HNSW build, printing its progress every {@link PROGRESS_MS}, at most
 * {@link BUILD_S}. @returns whether the graph is complete.
 */
async function awaitGraph(vectors: InProcessSearch, n: number): Promise<boolean> {
  const started = performance.now();
  const built = vectors.ready().then(() => true);
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const tick = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PROGRESS_MS)));
    const done = await Promise.race([built, tick]);
    clearTimeout(timer);
    if (done) return true;
    const s = (performance.now() - started) / 1000;
    const p = vectors.stats().building;
    if (p) console.log(`  ${label(n)}: HNSW build ${((100 * p.done) / p.total).toFixed(1)} % after ${s.toFixed(0)} s`);
    if (s >= BUILD_S) return false;
  }
}

async function oneSize(
  n: number,
): Promise<{ index: string[][]; recall: string[][]; pages: string[][]; parts: string[][]; shared: string[][] }> {
  const schema = uniqueSchema();
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-bench-discover-'));
  const sql: Sql = await openPostgres(BENCH_DATABASE_URL, { schema });
  // FRESHET_DISCOVER_* of the environment apply (e.g. FRESHET_DISCOVER_EXACT_MAX=5000 puts 20k on the graph)
  const tuning = Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] => e[0].startsWith('FRESHET_DISCOVER_') && e[1] !== undefined,
    ),
  );
  const config = loadConfig({
    ...tuning,
    LOG_LEVEL: 'silent',
    FRESHET_SERVICE_KEY: 'bench-service-key-0123456789',
    FRESHET_SECRET: 'bench-secret-0123456789abcdef',
    FRESHET_REDIS_URL: BENCH_REDIS_URL,
    FRESHET_KEY_PREFIX: uniquePrefix('disc'),
    FRESHET_DATA_DIR: dataDir,
  });
  // not warmed at open: the index is started below, after the load, to time its start
  const f = await openFreshet(config, {
    sql,
    clock: new ManualClock(NOW),
    defaultMetrics: false,
    recoverHot: false,
    warmDiscover: false,
  });
  try {
    const { ids, codes, loadS, embedS } = await loadCorpus(f, n);
    await sql.exec('VACUUM ANALYZE');
    console.log(`  ${label(n)} items: load ${loadS.toFixed(1)} s, text embeddings ${embedS.toFixed(1)} s`);
    // the index: start (read everything), then the background HNSW build
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const vectors = await (f.discover.vectors as unknown as { get(): Promise<InProcessSearch> }).get();
    await vectors.sync();
    const readMs = performance.now() - t0;
    console.log(
      `  ${label(n)}: index started (${(readMs / 1000).toFixed(1)} s); HNSW build on ${BUILD_THREADS} threads`,
    );
    const complete = await awaitGraph(vectors, n);
    const buildMs = performance.now() - t0 - readMs;
    const stats = vectors.stats();
    // the graph's snapshot is written in the background; the next catch-up views it (the default)
    for (
      let waited = 0;
      stats.kind === 'hnsw' && config.discover.sharedIndex !== 'off' && !vectors.stats().generation;
      waited++
    ) {
      if (waited > 600) throw new Error('the index did not come to view its snapshot within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
      await vectors.sync();
    }
    const rssPerItem = (process.memoryUsage().rss - rss0) / n;
    const progress = stats.building ? `${((100 * stats.building.done) / stats.building.total).toFixed(1)} %` : '';
    const build =
      stats.kind === 'hnsw'
        ? `${(buildMs / 1000).toFixed(1)} s`
        : complete
          ? `none (exact ≤ ${config.discover.exactMax})`
          : `unfinished after ${(buildMs / 1000).toFixed(0)} s (${progress}; exact scan serves below)`;
    // another process writes 1,000 embeddings; this one catches up
    // (its own index is never searched, so never started: no second index competes for the CPU)
    const writer = new PostgresDiscoverIndex(
      sql,
      new LazyVectorSearch(sql, DIM, vectorSearchSettings(config.discover, config.dataDir)),
    );
    const rnd = prng(3);
    // item j takes the embedding of item (j × 7919) mod n
    const changed = Array.from({ length: 1000 }, () => Math.floor(rnd() * n)).map((j) => ({
      j,
      vector: codes.slice(((j * 7919) % n) * DIM, (((j * 7919) % n) + 1) * DIM),
    }));
    await writer.putEmbeddings(
      changed.map((c) => ({ itemId: ids[c.j]!, vector: c.vector, source: 'client' as const })),
      NOW,
    );
    const t1 = performance.now();
    await vectors.sync();
    const catchUpMs = performance.now() - t1;
    for (const c of changed) codes.set(c.vector, c.j * DIM);
    const mode = () => `${vectors.stats().kind}${vectors.stats().generation ? ', shared' : ''}`;
    const queries = await queriesFor(ids, codes, n, config.discover.halfLifeMs);
    const recallRows = await recall(new PostgresDiscoverIndex(sql, vectors), queries, n, mode);
    // pages through the service: readers with 20 signals, then readers with none
    const signals = [];
    for (let r = 0; r < PAGES + 20; r++)
      for (let k = 0; k < 20; k++)
        signals.push({ readerId: `r${r}`, itemId: ids[Math.floor(rnd() * n)]!, atMs: NOW - k * 3_600_000, weight: 1 });
    await f.discover.embeddings.addSignals(signals);
    const p2 = await firstPages(f, (i) => `r${i}`);
    const p2next = await nextPages(f, (i) => `r${i}`, p2.cursors);
    // the same readers a minute later: a new session (no cached pool: a full vector search), but their
    // seen filters exist — a returning reader, where the first session's row includes creating them
    const p2again = await firstPages(f, (i) => `r${i}`, NOW + 60_000);
    const p3 = await firstPages(f, (i) => `cold${i}`);
    const targets = n === 200_000 ? { p50: 10, p99: 25 } : { p99: 25 };
    const pages = [
      timingRow(`${label(n)}: phase-2 first page (${mode()})`, p2, targets),
      timingRow(`${label(n)}: phase-2 first page, returning reader (new session)`, p2again, targets),
      timingRow(`${label(n)}: phase-2 next page (pool cached)`, p2next, { p99: 25 }),
      timingRow(`${label(n)}: phase-3 page`, p3, { p99: 25 }),
    ];
    const parts = await discoverParts(f, sql, n, NOW);
    // a restart: a new process loads the snapshot and catches up
    await vectors.close();
    const snapBytes = folderBytes(join(dataDir, 'discover-index'));
    const restarted = new InProcessSearch(sql, DIM, vectorSearchSettings(config.discover, config.dataDir).memory);
    await restarted.sync();
    const rs = restarted.startReport!;
    await restarted.close();
    // N worker processes: a private index each, or one shared (first-page searches: k = 120); a rebase
    const memory = vectorSearchSettings(config.discover, config.dataDir).memory;
    const hnsw = stats.kind === 'hnsw';
    const vectorsOf = queries.queries.map((q) => q.vector);
    const shared = hnsw ? await sharedVsPrivate(dataDir, n, DIM, memory, vectorsOf, 120, label(n)) : [];
    const moved = changed.map((c) => ({ itemId: ids[(c.j * 31) % n]!, vector: c.vector }));
    const rebase = hnsw ? await rebaseMs(dataDir, DIM, memory, moved) : null;
    const index = [
      [label(n), 'start: read every embedding from PostgreSQL', `${(readMs / 1000).toFixed(2)} s`],
      [
        label(n),
        `HNSW build (M ${config.discover.hnswM}, ef_construction ${config.discover.hnswEfConstruction}, ${BUILD_THREADS} threads; exact scan serves meanwhile)`,
        build,
      ],
      [
        label(n),
        'memory per item: index estimate / process RSS growth / snapshot on disk',
        `${(stats.bytes / n).toFixed(0)} / ${rssPerItem.toFixed(0)} / ${(snapBytes / n).toFixed(0)} B`,
      ],
      [label(n), 'catch-up of 1,000 embeddings another process wrote', `${catchUpMs.toFixed(1)} ms`],
      ...(rebase === null
        ? []
        : [
            [
              label(n),
              'shared index: a rebase of 1,000 changes (worker thread) / longest event-loop wait meanwhile',
              `${(rebase.ms / 1000).toFixed(2)} s / ${rebase.loopMaxMs.toFixed(1)} ms`,
            ],
          ]),
      [
        label(n),
        `restart: snapshot loaded + ${rs.rows} changed rows caught up (from ${rs.from})`,
        `${(rs.ms / 1000).toFixed(2)} s`,
      ],
    ];
    return { index, recall: recallRows, pages, parts, shared };
  } finally {
    await f.discover.close();
    await f.close();
    await dropSchema(schema);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The benchmark's queries of the three kinds with their exact top-20 cutoffs (a scan of every code). */
async function queriesFor(
  ids: string[],
  codes: Int8Array,
  n: number,
  halfLifeMs: number,
): Promise<{ queries: BenchQuery[]; cutoffs: number[] }> {
  const queries = benchQueries(
    ids,
    Array.from({ length: n }, (_, i) => codes.subarray(i * DIM, (i + 1) * DIM)),
    await mindHistories(),
    n >= 1e6 ? 50 : 100,
    halfLifeMs,
  );
  return { queries, cutoffs: exactCutoffs(codes, n, queries) };
}

export async function run(): Promise<void> {
  printTitle(
    'Discover phase 2: in-process usearch index, real-text corpus (HN + MIND, padded), PostgreSQL 15 + Redis on loopback',
  );
  // each size's tables as soon as it is done (a 1M run takes long)
  for (const n of SIZES) {
    const r = await oneSize(n);
    printTable(
      `${label(n)}: vector index: start, build, memory, catch-up, restart`,
      ['items', 'what', 'value'],
      r.index,
    );
    printTable(
      `${label(n)}: recall@20 of nearest() vs an exact cosine scan (same run), latency of nearest()`,
      ['items', 'queries', 'n', 'recall@20', 'target', 'p50 ms', 'p99 ms'],
      r.recall,
    );
    if (r.shared.length > 0)
      printTable(
        `${label(n)}: the index in N worker processes: a private copy each, or one snapshot viewed by all`,
        SHARED_COLUMNS,
        r.shared,
      );
    printTable(`${label(n)}: discover page (limit 20)`, TIMING_COLUMNS, r.pages);
    printTable(`${label(n)}: discover page, each part alone (ratios vs Redis PING)`, TIMING_COLUMNS, r.parts);
  }
}

runIfMain(import.meta.url, run);
