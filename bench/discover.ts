/**
 * Discover feed (note 3): page latency at 20k and 200k items on the PostgreSQL server (no pgvector)
 * and Redis on loopback, through the service (`DiscoverFeed.page`, limit 20).
 *
 * - phase 2 page: a reader with 20 signals who follows nobody — the page is phase 2 (vector search:
 *   probed buckets → Hamming top-pool in SQL → exact cosine in Node), seen check, hydrate, mark seen;
 * - phase 2 next page: the second page of each of those sessions, still phase 2 — its ranked pool comes
 *   from the per-session cache (discover-pool-cache.ts), so no vector search;
 * - phase 3 page: a reader with no signals (newest overall, keyset on `items_live_newest_idx`).
 * Items have random titles from a 3,000-word vocabulary (text-embedded, 256 dims). Target: p99 < 25 ms.
 * Then each part of a page alone (bench/discover-parts.ts) with the Redis PING / SELECT 1 floors.
 * Sizes: `FRESHET_BENCH_DISCOVER_SIZES` (default 20000,200000).
 */
import { loadConfig } from '../src/config.js';
import { openFreshet, type Freshet } from '../src/container.js';
import { ManualClock, DAY_MS } from '../src/domain/clock.js';
import { openPostgres } from '../src/adapters/postgres/sql.js';
import type { ItemInput } from '../src/ports/content-store.js';
import { BENCH_DATABASE_URL, BENCH_REDIS_URL, dropSchema, printTitle, prng, runIfMain, uniquePrefix, uniqueSchema } from './support.js';
import { printTable, summarize, timingRow, TIMING_COLUMNS, type Summary } from './stats.js';
import { discoverParts, pageBreakdown, recallRows } from './discover-parts.js';

const NOW = Date.UTC(2026, 0, 1);
const SIZES = (process.env.FRESHET_BENCH_DISCOVER_SIZES ?? '20000,200000').split(',').map(Number);
const PAGES = 200;

function corpus(n: number): ItemInput[] {
  const rnd = prng(n);
  const vocab = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`);
  // Zipf-ish word choice: a few topics dominate, like real titles
  const word = () => vocab[Math.floor(vocab.length * rnd() ** 2.5)]!;
  return Array.from({ length: n }, (_, i) => ({
    id: `b${i}`,
    authorId: `a${i % 5000}`,
    title: Array.from({ length: 8 }, word).join(' '),
    text: '',
    url: null,
    tags: [],
    publishedAt: NOW - Math.floor(rnd() * 30 * DAY_MS),
    popularity: 0,
  }));
}

/** First pages of readers `reader(i)` (20 warm-up); with each reader's next cursor, for {@link measureNext}. */
async function measure(f: Freshet, reader: (i: number) => string): Promise<Summary & { cursors: (string | null)[] }> {
  const samples: number[] = [];
  const cursors: (string | null)[] = [];
  for (let i = 0; i < PAGES + 20; i++) {
    const t = performance.now();
    const page = await f.discover.feed.page(reader(i), 20, undefined, NOW);
    if (i >= 20) samples.push(performance.now() - t);
    cursors.push(page.nextCursor);
  }
  return { ...summarize(samples), cursors };
}

/** Second pages of the same sessions (phase 2 again: the session's ranked pool is cached, no vector search). */
async function measureNext(f: Freshet, reader: (i: number) => string, cursors: readonly (string | null)[]): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < cursors.length; i++) {
    const t = performance.now();
    await f.discover.feed.page(reader(i), 20, cursors[i] ?? undefined, NOW);
    if (i >= 20) samples.push(performance.now() - t);
  }
  return summarize(samples);
}

async function oneSize(n: number): Promise<{ pages: string[][]; parts: string[][]; breakdown: string[][]; recall: string[][] }> {
  const schema = uniqueSchema();
  const sql = await openPostgres(BENCH_DATABASE_URL, { schema });
  const config = loadConfig({ LOG_LEVEL: 'silent', FRESHET_SERVICE_KEY: 'bench-service-key-0123456789', FRESHET_SECRET: 'bench-secret-0123456789abcdef', FRESHET_REDIS_URL: BENCH_REDIS_URL, FRESHET_KEY_PREFIX: uniquePrefix('disc'), FRESHET_DATA_DIR: '/tmp/freshet-bench-discover' });
  const f = await openFreshet(config, { sql, clock: new ManualClock(NOW), defaultMetrics: false, recoverHot: false });
  try {
    const items = corpus(n);
    const t0 = performance.now();
    for (let i = 0; i < n; i += 1000) await f.content.upsertItems(items.slice(i, i + 1000), NOW);
    const loadS = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    await f.discover.embeddings.embedMissing(NOW, 2000);
    const embedS = (performance.now() - t1) / 1000;
    // what autovacuum does soon after a bulk load (its insert trigger): statistics, and the visibility
    // map that lets the bucket probes be index-only scans (before it: bitmap heap scans, ~4× slower)
    await sql.exec('VACUUM ANALYZE');
    const rnd = prng(7);
    const signals = [];
    for (let r = 0; r < PAGES + 20; r++) for (let k = 0; k < 20; k++) signals.push({ readerId: `r${r}`, itemId: `b${Math.floor(rnd() * n)}`, atMs: NOW - k * 3_600_000, weight: 1 });
    await f.discover.embeddings.addSignals(signals);
    const p2 = await measure(f, (i) => `r${i}`);
    const p2next = await measureNext(f, (i) => `r${i}`, p2.cursors);
    const p3 = await measure(f, (i) => `cold${i}`);
    console.log(`  ${n} items: load ${loadS.toFixed(1)} s, text embeddings ${embedS.toFixed(1)} s`);
    const parts = await discoverParts(f, sql, n, NOW);
    const breakdown = await pageBreakdown(f, sql, n, NOW, PAGES);
    const recall = await recallRows(f, sql, n, NOW, 50);
    return { breakdown, recall, pages: [timingRow(`${n / 1000}k items, phase 2 page`, p2, { p99: 25 }), timingRow(`${n / 1000}k items, phase 2 next page (pool cached)`, p2next, { p99: 25 }), timingRow(`${n / 1000}k items, phase 3 page`, p3, { p99: 25 })], parts };
  } finally {
    await f.close();
    await dropSchema(schema);
  }
}

export async function run(): Promise<void> {
  printTitle('Discover feed: page latency, PostgreSQL 15 (no pgvector) + Redis on loopback, limit 20');
  const rows: string[][] = [];
  const parts: string[][] = [];
  const breakdown: string[][] = [];
  const recall: string[][] = [];
  for (const n of SIZES) {
    const r = await oneSize(n);
    rows.push(...r.pages);
    parts.push(...r.parts);
    breakdown.push(...r.breakdown);
    recall.push(...r.recall);
  }
  printTable('discover page', TIMING_COLUMNS, rows);
  printTable('discover page, each part alone (ratios vs Redis PING)', TIMING_COLUMNS, parts);
  printTable('vector search: recall@20 and top-20 cosine vs an exact scan, SQL latency, by FRESHET_DISCOVER_SCAN_ROWS / PROBES', ['items', 'scan_rows', 'prefix bits', 'probes', 'recall@20', 'cosine vs exact', 'p50 ms', 'p99 ms'], recall);
  printTable('phase-2 page, per dependency call (mean per page; overlapping calls each counted)', ['what', 'calls/page', 'ms/page'], breakdown);
}

runIfMain(import.meta.url, run);
