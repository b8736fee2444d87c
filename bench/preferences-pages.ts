/**
 * Page latency with a full preferences document (issue 22's target: ≤ 1.2× the no-preference figures).
 *
 * Data: 20,000 synthetic items over the 30 days before a fixed virtual "now" (the vocabulary and shape of
 * bench/feed.ts: 6-word titles, 24-word texts, 2 tags from a 1,000-word Zipf vocabulary, 500 authors),
 * 90 % `en`, 5 % `de`, 5 % `fr`. The seen filters start empty (a new deployment's; bench/feed.ts measures
 * them at capacity): the check is then at its cheapest, which makes the no-preference figures the lowest
 * and the ratio the hardest to meet.
 *
 * Two classes of readers, interleaved one for one so both see the same machine: **none** (no preferences)
 * and **full** — 200 muted words (180 words no item holds, 10 two-word phrases, 10 rare words of the
 * vocabulary, every 10th a substring match), 1,000 muted authors (10 of them real: 2 % of the catalog)
 * and `languages: ["en", "de"]`: about 10 % of the catalog is hidden from a full reader. Each reader's
 * exclusions are read once before it is timed (the steady state: the snapshot is cached; the first page
 * after a `PUT` pays one PostgreSQL load, timed apart).
 *
 * Per reader: one for-you `refresh` (no interests), `LOAD_MORES` × `load_more`, a second `refresh`, then
 * discover's first page (no follows, no signals: phase 3). Pages of 20, service level (`forYou.page`, `discover.feed.page`).
 * Printed: p50/p99 of each class and the ratio full / none of each, on PostgreSQL + Redis and on the
 * embedded stores (PGlite + in-process); then the parts of the full reader's cost (the exclusions read
 * alone, cached, for both classes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/compose/config.js';
import { openFreshet, type Freshet } from '../src/compose/open.js';
import { DAY_MS, ManualClock } from '../src/kernel/clock.js';
import type { ItemInput } from '../src/kernel/items/content-store.js';
import { closeRedis } from '../src/kernel/redis/client.js';
import { Keys } from '../src/kernel/redis/keys.js';
import { openPglite, openPostgres, type Sql } from '../src/kernel/sql/sql.js';
import { fmtMs, fmtRatio, printNotes, printTable, summarize, type Summary } from './stats.js';
import {
  BENCH_DATABASE_URL,
  BENCH_REDIS_URL,
  dropPrefix,
  dropSchema,
  openRedis,
  printTitle,
  prng,
  range,
  uniquePrefix,
  uniqueSchema,
  withCleanup,
  type Cleanup,
} from './support.js';

const ITEMS = 20_000;
const AUTHORS = 500;
const VOCABULARY = 1_000;
const PAGE = 20;
const LOAD_MORES = 5;
/** 2026-03-06 12:00 UTC, the virtual "now" of every request. */
export const NOW = Date.UTC(2026, 2, 6, 12);
/** Readers per class (each refreshed once), and warm-up readers per class. */
const READERS = 150;
const WARMUP = 10;
/** No class runs longer than this (a slow machine gets fewer samples). */
const SECONDS = 60;

/** The full document of issue 22's figure: 200 words, 1,000 authors, a language list. */
export function fullDocument(words: readonly string[]): Record<string, unknown> {
  const phrase = (i: number) => {
    if (i < 180) return { phrase: `zorbix${i}`, whole_word: i % 10 !== 0 };
    if (i < 190) return { phrase: `${words[100 + i]} ${words[300 + i]}` };
    return { phrase: words[VOCABULARY - 200 + i]! }; // ranks 991–1000: rare words, a few % of the items
  };
  return {
    muted_words: range(200, phrase),
    muted_authors: range(1000, (i) => ({ author_id: i < 10 ? `a${i * 50}` : `ghost${i}` })),
    languages: ['en', 'de'],
  };
}

/** The vocabulary of bench/feed.ts: 1,000 three-syllable words. */
export function vocabulary(): string[] {
  const syl = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'zu', 'pe'];
  return range(VOCABULARY, (i) => syl[Math.floor(i / 100)]! + syl[Math.floor(i / 10) % 10]! + syl[i % 10]!);
}

/** The synthetic catalog (see the module doc): `ITEMS` items by `AUTHORS` authors over 30 days before `NOW`. */
export function corpus(words: readonly string[]): ItemInput[] {
  const rnd = prng(2026);
  const zipf = () => words[Math.floor(VOCABULARY ** rnd()) - 1]!;
  const phrase = (n: number) => range(n, zipf).join(' ');
  return range(ITEMS, (i) => ({
    id: `it${i}`,
    authorId: `a${i % AUTHORS}`,
    title: phrase(6),
    text: phrase(24),
    url: null,
    tags: range(2, zipf),
    publishedAt: Math.floor(NOW - rnd() * 30 * DAY_MS),
    popularity: Math.floor(Math.exp(rnd() * 7)),
    lang: i % 20 === 0 ? 'de' : i % 20 === 1 ? 'fr' : 'en',
  }));
}

/** One store pair, opened for a bench. */
export interface Stack {
  name: string;
  f: Freshet;
  sql: Sql;
}

/** Opens Freshet on PostgreSQL + Redis (`redis`) or the embedded stores, cleaned up by `cleanup`. */
export async function open(cleanup: Cleanup, redis: boolean): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'freshet-bench-'));
  cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    LOG_LEVEL: 'silent',
    FRESHET_DATA_DIR: dir,
    FRESHET_SERVICE_KEY: 'bench-service-key-0123456789',
    FRESHET_SECRET: 'bench-secret-0123456789abcdef',
  };
  let sql: Sql;
  if (redis) {
    const schema = uniqueSchema();
    cleanup.add(() => dropSchema(schema));
    const keys = new Keys(uniquePrefix('prefs'));
    const client = openRedis();
    cleanup.add(() => closeRedis(client));
    cleanup.add(() => dropPrefix(client, keys.prefix));
    env.FRESHET_REDIS_URL = BENCH_REDIS_URL;
    env.FRESHET_KEY_PREFIX = keys.prefix;
    sql = await openPostgres(BENCH_DATABASE_URL, { schema });
    const f = await openFreshet(loadConfig(env), { clock: new ManualClock(NOW), sql, defaultMetrics: false });
    cleanup.add(() => f.close());
    return { name: 'PostgreSQL + Redis', f, sql };
  }
  sql = await openPglite('memory://');
  const f = await openFreshet(loadConfig(env), { clock: new ManualClock(NOW), sql, defaultMetrics: false });
  cleanup.add(() => f.close());
  return { name: 'PGlite + in-process', f, sql };
}

/** Samples of one class. */
interface Samples {
  refresh: number[];
  loadMore: number[];
  /** The reader's second refresh, after its load_mores (its candidates' verdicts are remembered). */
  again: number[];
  discover: number[];
  /** The exclusions read right after the `PUT` (its PostgreSQL load). */
  cold: number[];
}

const empty = (): Samples => ({ refresh: [], loadMore: [], again: [], discover: [], cold: [] });

const time = async (into: number[], fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  into.push(performance.now() - t);
};

/** One reader's pages, timed into `s` when `measured` (a warm-up reader's are dropped). */
async function session(f: Freshet, reader: string, s: Samples, measured: boolean): Promise<void> {
  const sink = measured ? s : empty();
  await time(sink.refresh, () => f.forYou.page(reader, 'refresh', PAGE, NOW));
  for (let i = 0; i < LOAD_MORES; i++) await time(sink.loadMore, () => f.forYou.page(reader, 'load_more', PAGE, NOW));
  await time(sink.again, () => f.forYou.page(reader, 'refresh', PAGE, NOW));
  await time(sink.discover, () => f.discover.feed.page(reader, PAGE, undefined, NOW));
}

async function measure(stack: Stack, words: readonly string[]): Promise<void> {
  const { f } = stack;
  const t = performance.now();
  const items = corpus(words);
  for (let i = 0; i < items.length; i += 1000) await f.content.upsertItems(items.slice(i, i + 1000), NOW);
  await stack.sql.query('ANALYZE items');
  const doc = fullDocument(words);
  const none = empty();
  const full = empty();
  const deadline = performance.now() + SECONDS * 1000;
  let n = 0;
  for (let i = -WARMUP; i < READERS && performance.now() < deadline; i++) {
    const measured = i >= 0;
    if (measured) n++;
    const plain = `np${i + WARMUP}`;
    const muted = `fp${i + WARMUP}`;
    await f.exclusions.forReader(plain, NOW);
    await f.useCases.setPreferences(muted, doc, NOW);
    await time(measured ? full.cold : [], () => f.exclusions.forReader(muted, NOW)); // the load after the PUT
    await session(f, plain, none, measured);
    await session(f, muted, full, measured);
  }
  const setupS = (performance.now() - t) / 1000;
  const rows: string[][] = [];
  const row = (what: string, a: number[], b: number[]) => {
    const x: Summary = summarize(a);
    const y: Summary = summarize(b);
    rows.push([
      what,
      String(y.n),
      fmtMs(x.p50),
      fmtMs(x.p99),
      fmtMs(y.p50),
      fmtMs(y.p99),
      fmtRatio(y.p50, x.p50),
      fmtRatio(y.p99, x.p99),
    ]);
  };
  row('for-you refresh', none.refresh, full.refresh);
  row('for-you load_more', none.loadMore, full.loadMore);
  row('for-you refresh, again', none.again, full.again);
  row("discover's first page", none.discover, full.discover);
  printTable(
    `${stack.name}: ${n} readers per class, pages of ${PAGE} (ms; target full/none ≤ 1.2×)`,
    ['page', 'n', 'none p50', 'none p99', 'full p50', 'full p99', 'p50 ×', 'p99 ×'],
    rows,
  );
  const parts = await exclusionReads(f, n);
  printNotes(
    `${stack.name}: exclusions read alone (cached snapshot), none p50 ${fmtMs(parts.none.p50)} / p99 ${fmtMs(parts.none.p99)} ms, ` +
      `full p50 ${fmtMs(parts.full.p50)} / p99 ${fmtMs(parts.full.p99)} ms; the first read after a PUT (PostgreSQL load) ` +
      `p50 ${fmtMs(summarize(full.cold).p50)} / p99 ${fmtMs(summarize(full.cold).p99)} ms; run ${setupS.toFixed(0)} s`,
  );
}

/** `forReader` alone, cached, interleaved over the readers of both classes. */
async function exclusionReads(f: Freshet, readers: number): Promise<{ none: Summary; full: Summary }> {
  const a: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < 5; round++)
    for (let i = 0; i < readers; i++) {
      await time(a, () => f.exclusions.forReader(`np${i + WARMUP}`, NOW));
      await time(b, () => f.exclusions.forReader(`fp${i + WARMUP}`, NOW));
    }
  return { none: summarize(a), full: summarize(b) };
}

/** Runs both store pairs (`--stores=redis` or `--stores=embedded` for one). */
export async function runPages(): Promise<void> {
  printTitle('Page latency at 20,000 items: no preferences against a full document');
  const arg = process.argv.find((a) => a.startsWith('--stores='))?.slice('--stores='.length);
  const words = vocabulary();
  for (const redis of [true, false]) {
    if (arg && arg !== (redis ? 'redis' : 'embedded')) continue;
    await withCleanup(async (cleanup) => measure(await open(cleanup, redis), words));
  }
}
