/**
 * For-you feed benchmark: the whole path of note 1 on real stores.
 *
 * Data: 20,000 synthetic items published over the 30 days before a fixed virtual "now" (titles,
 * tags and text drawn from a 1,000-word Zipf vocabulary; popularity log-uniform), so a few
 * thousand fall inside the recall horizon (5.4 days by default) and recall always has its N = 500.
 * Readers with interests (3 mid-frequency words) and without. Seen filters use the default
 * geometry (1,000,000/day, 1 %, 7 days) and start with all 7 days at capacity (half their bits set
 * at random), so the seen check does its full work. After the load, `ANALYZE items` (as autovacuum
 * would do on a server; PGlite has none), with hydration and recall timed before and after.
 *
 * (a) PostgreSQL + Redis, service level, sequential: `forYou.page(reader, 'refresh', 20, now)`
 *     (target p50 ≤ 10 ms, p99 ≤ 25 ms) for readers with and without interests, each reader once;
 *     then the parts, each alone: lease, interests, recall SQL, seen check, cache replace,
 *     hydration, impressions; floors: Redis PING and PostgreSQL `SELECT 1`.
 * (b) PostgreSQL + Redis over HTTP on loopback: the Fastify app listens on 127.0.0.1:<random>;
 *     a closed-loop client in a child process (bench/http-load.ts, keep-alive, reader tokens)
 *     refreshes each reader once, then sends it 20 `load_more`s of 20 (target p50 ≤ 2 ms,
 *     p99 ≤ 10 ms), with 1 and 10 concurrent connections. Baselines in the same run: `GET /healthz`
 *     on the same server and client (the HTTP floor) and a bare ioredis `MULTI LPOP key 20; LLEN`.
 *     Then the load_more parts alone: cache pop, hydration, impressions, token check.
 * (c) PGlite + in-process stores (the embedded default), service level: refresh and load_more
 *     (the in-process seen filters start empty).
 * (d) refresh against the catalog size, 20k and 200k items (2M with `--sizes=20k,200k,2m`), on both
 *     store pairs: bench/feed-scale.ts (also runnable alone). `--scale-only` runs (d) alone.
 * Run alone with `npx tsx bench/feed.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeRedis, type RedisClient } from '../src/kernel/redis/client.js';
import { Keys } from '../src/kernel/redis/keys.js';
import { openPglite, openPostgres, type Sql } from '../src/kernel/sql/sql.js';
import { loadConfig } from '../src/compose/config.js';
import { openFreshet, type Freshet } from '../src/compose/open.js';
import { seenSettingsLayout } from '../src/seen/wire.js';
import { DAY_MS, ManualClock } from '../src/kernel/clock.js';
import type { ItemInput } from '../src/kernel/items/content-store.js';
import { buildApp } from '../src/server/app.js';
import { mintReaderToken } from '../src/kernel/http/tokens.js';
import { runScale } from './feed-scale.js';
import { runLoad, type LoadPlan, type LoadResult, type LoadSession } from './http-load.js';
import {
  TIMING_COLUMNS,
  fmtInt,
  fmtMs,
  fmtRatio,
  printNotes,
  printTable,
  throughput,
  timeLoop,
  timingRow,
  type LoopOptions,
  type Summary,
  type Targets,
} from './stats.js';
import {
  BENCH_DATABASE_URL,
  BENCH_REDIS_URL,
  cyclic,
  dropPrefix,
  dropSchema,
  openRedis,
  printTitle,
  prng,
  fillLayoutAtCapacity,
  range,
  runIfMain,
  uniquePrefix,
  uniqueSchema,
  withCleanup,
  type Cleanup,
  BENCH_SERVICE_KEY,
  BENCH_SECRET,
} from './support.js';

const ITEMS = 20_000;
const SPREAD_DAYS = 30;
const VOCABULARY = 1_000;
const AUTHORS = 500;
const PAGE = 20;
/** load_mores per reader after its refresh (20 × 20 = 400 of the ~480 it has cached). */
const LOAD_MORES_PER_READER = 20;
/** 2026-03-06 12:00 UTC, the virtual "now" of every request. */
const NOW = Date.UTC(2026, 2, 6, 12);
const SERVICE_KEY = BENCH_SERVICE_KEY;
const SECRET = BENCH_SECRET;

const REFRESH_TARGETS: Targets = { p50: 10, p99: 25 };
const LOAD_MORE_TARGETS: Targets = { p50: 2, p99: 10 };
/** Readers refreshed per class (each once), warm-up readers, and the time bound of each service-level loop. */
const REFRESH_READERS = 300;
const REFRESH_WARMUP = 10;
const SERVICE_SECONDS = 8;
const PART_LOOP: LoopOptions = { warmup: 20, iterations: 500, seconds: 3 };
const FAST_LOOP: LoopOptions = { warmup: 50, iterations: 3000, seconds: 3 };
const HTTP_C1 = { concurrency: 1, iterations: 2000, seconds: 5, warmup: 50 };
const HTTP_C10 = { concurrency: 10, iterations: 6000, seconds: 6, warmup: 20 };

/** One wired Freshet on real stores. */
interface Stack {
  name: string;
  f: Freshet;
  sql: Sql;
  /** Redis stacks only: a client on the same server, and the stack's key prefix. */
  redis?: RedisClient;
  keys?: Keys;
}

/** The synthetic corpus and the words readers may be interested in. */
interface Corpus {
  items: ItemInput[];
  words: string[];
}

/** Hands out reader ids never used before (`<tag><n>`). */
class Readers {
  private n = 0;
  constructor(private readonly tag: string) {}
  take(count: number): string[] {
    return range(count, () => `${this.tag}${this.n++}`);
  }
}

export async function run(): Promise<void> {
  if (!process.argv.includes('--scale-only')) await runParts();
  await runScale();
}

async function runParts(): Promise<void> {
  printTitle('for-you feed — 20,000 items over 30 days; PostgreSQL + Redis, and the embedded stores');
  const corpus = makeCorpus();
  await withCleanup(async (cleanup) => {
    const server = await openServerStack(cleanup);
    await prepare(server, corpus);
    const floors = await measureFloors(server);
    await measureServiceRefresh(server, corpus, floors);
    await measureHttp(server, corpus, floors, cleanup);
  });
  await withCleanup(async (cleanup) => {
    const embedded = await openEmbeddedStack(cleanup);
    await prepare(embedded, corpus);
    await measureEmbedded(embedded, corpus);
  });
}

// ---------------------------------------------------------------- data

/** 1,000 pronounceable words (three syllables each), e.g. `kalomi`. */
function vocabulary(): string[] {
  const syl = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'zu', 'pe'];
  return range(VOCABULARY, (i) => syl[Math.floor(i / 100)]! + syl[Math.floor(i / 10) % 10]! + syl[i % 10]!);
}

function makeCorpus(): Corpus {
  const rnd = prng(2026);
  const words = vocabulary();
  const zipf = () => words[Math.floor(VOCABULARY ** rnd()) - 1]!; // P(rank r) ∝ 1/r
  const phrase = (n: number) => range(n, zipf).join(' ');
  const items = range(
    ITEMS,
    (i): ItemInput => ({
      id: `it${i}`,
      authorId: `a${i % AUTHORS}`,
      title: phrase(6),
      text: phrase(24),
      url: null,
      tags: range(2, zipf),
      publishedAt: Math.floor(NOW - rnd() * SPREAD_DAYS * DAY_MS),
      popularity: Math.floor(Math.exp(rnd() * 7)),
    }),
  );
  return { items, words };
}

/** Three interest words of mid frequency (ranks 20–300) for reader `n`. */
function interestsOf(corpus: Corpus, n: number): string[] {
  return range(3, (j) => corpus.words[20 + ((n * 37 + j * 101) % 280)]!);
}

/**
 * Loads the corpus through the content store, then runs `ANALYZE items` as autovacuum would soon
 * after a bulk load on a server (so plans do not change in the middle of the run; PGlite has no
 * autovacuum at all). Hydration and recall are timed before and after: without statistics the
 * hydration plan is much slower.
 */
async function prepare(stack: Stack, corpus: Corpus): Promise<void> {
  const t = performance.now();
  for (let from = 0; from < corpus.items.length; from += 1000) {
    await stack.f.content.upsertItems(corpus.items.slice(from, from + 1000), NOW);
  }
  const seconds = (performance.now() - t) / 1000;
  const inHorizon = corpus.items.filter((it) => it.publishedAt >= NOW - stack.f.config.forYou.recall.horizonMs).length;
  const before = await timeQueries(stack);
  await stack.sql.query('ANALYZE items');
  const after = await timeQueries(stack);
  const p50s = (q: { hydrate: Summary; recall: Summary }) =>
    `hydrate 20 ${fmtMs(q.hydrate.p50)} ms, recall ${fmtMs(q.recall.p50)} ms`;
  printNotes(
    `${stack.name}: loaded ${fmtInt(corpus.items.length)} items in ${seconds.toFixed(1)} s ` +
      `(${fmtInt(corpus.items.length / seconds)} items/s); ${fmtInt(inHorizon)} inside the ` +
      `${(stack.f.config.forYou.recall.horizonMs / DAY_MS).toFixed(1)}-day recall horizon`,
    `${stack.name}: p50 right after the load: ${p50s(before)}; after ANALYZE items: ${p50s(after)} ` +
      `(all figures below are after ANALYZE)`,
  );
}

/** Hydration of a page and a recall without interests (the two queries whose plans use statistics). */
async function timeQueries(stack: Stack): Promise<{ hydrate: Summary; recall: Summary }> {
  const page = range(PAGE, (i) => `it${i * 997}`);
  const query = { ...stack.f.config.forYou.recall, readerId: 'plan_probe', interests: [], nowMs: NOW };
  return {
    hydrate: await timeLoop(() => stack.f.content.getItems(page), PART_LOOP),
    recall: await timeLoop(() => stack.f.recall.recall(query), { warmup: 5, iterations: 100, seconds: 2 }),
  };
}

/** Gives each reader of `ids` three interest words. */
async function giveInterests(stack: Stack, corpus: Corpus, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i++) await stack.f.content.setInterests(ids[i]!, interestsOf(corpus, i), NOW);
}

// ---------------------------------------------------------------- stacks

function benchEnv(dataDir: string, extra: Record<string, string>): Record<string, string> {
  return {
    LOG_LEVEL: 'silent',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: SECRET,
    ...extra,
  };
}

function tempDir(cleanup: Cleanup): string {
  const dir = mkdtempSync(join(tmpdir(), 'freshet-bench-'));
  cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function openFreshetOn(sql: Sql, env: Record<string, string>, cleanup: Cleanup): Promise<Freshet> {
  const f = await openFreshet(loadConfig(env), { clock: new ManualClock(NOW), sql, defaultMetrics: false });
  cleanup.add(() => f.close());
  return f;
}

/** PostgreSQL (fresh schema) + Redis (fresh prefix), seen filters at capacity for all 7 days. */
async function openServerStack(cleanup: Cleanup): Promise<Stack> {
  const dataDir = tempDir(cleanup);
  const schema = uniqueSchema();
  cleanup.add(() => dropSchema(schema));
  const redis = openRedis();
  cleanup.add(() => closeRedis(redis));
  const keys = new Keys(uniquePrefix('feed'));
  cleanup.add(() => dropPrefix(redis, keys.prefix));
  const sql = await openPostgres(BENCH_DATABASE_URL, { schema });
  const f = await openFreshetOn(
    sql,
    benchEnv(dataDir, { FRESHET_REDIS_URL: BENCH_REDIS_URL, FRESHET_KEY_PREFIX: keys.prefix }),
    cleanup,
  );
  await fillSeenDays(redis, keys, f);
  return { name: 'PostgreSQL + Redis', f, sql, redis, keys };
}

/** Every day of the window at capacity: half the bits of each day bitmap set at random. */
async function fillSeenDays(redis: RedisClient, keys: Keys, f: Freshet): Promise<void> {
  await fillLayoutAtCapacity(redis, keys, seenSettingsLayout(f.config.seen), NOW);
}

/** PGlite in memory + in-process seen filters and cache (empty filters: nothing to pre-fill). */
async function openEmbeddedStack(cleanup: Cleanup): Promise<Stack> {
  const dataDir = tempDir(cleanup);
  const sql = await openPglite('memory://');
  const f = await openFreshetOn(sql, benchEnv(dataDir, {}), cleanup);
  return { name: 'PGlite + in-process', f, sql };
}

// ---------------------------------------------------------------- (a) service-level refresh

/** The same-run floors: one Redis round trip and one PostgreSQL round trip. */
interface Floors {
  ping: Summary;
  select1: Summary;
}

async function measureFloors(stack: Stack): Promise<Floors> {
  return {
    ping: await timeLoop(() => stack.redis!.ping(), FAST_LOOP),
    select1: await timeLoop(() => stack.sql.query('SELECT 1'), FAST_LOOP),
  };
}

/** Refreshes each reader of `ids` once, in order (until the time bound). */
function timeRefresh(stack: Stack, ids: readonly string[], seconds: number): Promise<Summary> {
  return timeLoop((i) => stack.f.forYou.page(ids[i]!, 'refresh', PAGE, NOW), { iterations: ids.length, seconds });
}

/** 20 `load_more`s for each of the first `sessions` readers of `ids` (refreshed before), in order. */
function timeLoadMores(stack: Stack, ids: readonly string[], sessions: number): Promise<Summary> {
  const reader = (i: number) => ids[Math.floor(i / LOAD_MORES_PER_READER)]!;
  return timeLoop((i) => stack.f.forYou.page(reader(i), 'load_more', PAGE, NOW), {
    iterations: Math.min(sessions, ids.length) * LOAD_MORES_PER_READER,
    seconds: SERVICE_SECONDS,
  });
}

/** Refresh of fresh readers with interests, then without (each once), after a few warm-up readers. */
async function timeRefreshes(stack: Stack, corpus: Corpus, readers: Readers) {
  const withInterests = readers.take(REFRESH_READERS);
  const without = readers.take(REFRESH_READERS);
  await giveInterests(stack, corpus, withInterests);
  await timeRefresh(stack, readers.take(REFRESH_WARMUP), SERVICE_SECONDS);
  const interests = await timeRefresh(stack, withInterests, SERVICE_SECONDS);
  const none = await timeRefresh(stack, without, SERVICE_SECONDS);
  return { interests, none, withInterests };
}

async function measureServiceRefresh(stack: Stack, corpus: Corpus, floors: Floors): Promise<void> {
  const { interests, none, withInterests } = await timeRefreshes(stack, corpus, new Readers('r'));
  const parts = await refreshParts(stack, corpus, withInterests);
  const share = (s: Summary) => fmtRatio(s.p50, interests.p50);
  const rows = [
    timingRow('refresh, reader with interests', interests, REFRESH_TARGETS, floors.ping, ''),
    timingRow('refresh, reader without interests', none, REFRESH_TARGETS, floors.ping, ''),
    ...parts.map(([what, s]) => timingRow(`  part: ${what}`, s, {}, floors.ping, share(s))),
    timingRow('floor: Redis PING', floors.ping, {}, floors.ping, share(floors.ping)),
    timingRow('floor: PostgreSQL SELECT 1', floors.select1, {}, floors.ping, share(floors.select1)),
  ];
  printTable(
    '(a) refresh, service level, PostgreSQL + Redis (ms; ratios against PING; last column: p50 / refresh-with-interests p50)',
    [...TIMING_COLUMNS, 'of refresh'],
    rows,
  );
}

/**
 * The steps of one refresh, each timed alone. Recall cycles through the readers with interests
 * (with their own terms: how many items match, hence whether the fill query runs too, varies by
 * reader); the other steps use the first reader's recalled candidates.
 */
async function refreshParts(stack: Stack, corpus: Corpus, readers: readonly string[]): Promise<[string, Summary][]> {
  const { f } = stack;
  const reader = readers[0]!;
  const terms = readers.map((_, i) => interestsOf(corpus, i));
  const query = (i: number, interests: readonly string[]) => ({
    ...f.config.forYou.recall,
    readerId: cyclic(readers, i),
    interests,
    nowMs: NOW,
  });
  const recalled = await f.recall.recall(query(0, terms[0]!));
  const page = recalled.slice(0, PAGE);
  const rest = recalled.slice(PAGE);
  return [
    [
      'lease SET NX PX + release',
      await timeLoop(async () => {
        await f.cache.acquireLease('lease_probe', 'token', 5000);
        await f.cache.releaseLease('lease_probe', 'token');
      }, PART_LOOP),
    ],
    ['getInterests (SQL)', await timeLoop(() => f.content.getInterests(reader), PART_LOOP)],
    ['recall SQL, interests', await timeLoop((i) => f.recall.recall(query(i, cyclic(terms, i))), PART_LOOP)],
    ['recall SQL, no interests', await timeLoop((i) => f.recall.recall(query(i, [])), PART_LOOP)],
    [`seen check, ${recalled.length} × 7 days`, await timeLoop(() => f.seen.seen(reader, recalled, NOW), PART_LOOP)],
    [
      `cache replace (${rest.length} ids)`,
      await timeLoop(() => f.cache.replace('replace_probe', rest, 60_000), PART_LOOP),
    ],
    ['hydrate 20 items (SQL)', await timeLoop(() => f.content.getItems(page), PART_LOOP)],
    [
      'markSeen 20',
      await timeLoop(
        (i) =>
          f.seen.markSeen(
            'mark_probe',
            page.map((id) => `${id}_${i}`),
            NOW,
          ),
        PART_LOOP,
      ),
    ],
  ];
}

// ---------------------------------------------------------------- (b) HTTP load_more

/** Starts the app on a random loopback port; closed by `cleanup`. */
async function listen(stack: Stack, cleanup: Cleanup): Promise<string> {
  const app = await buildApp(stack.f, { logger: false, closeStores: false });
  cleanup.add(() => app.close());
  return app.listen({ port: 0, host: '127.0.0.1' });
}

/** One session per reader: `times` × the feed request with `action`, under the reader's token. */
async function feedSessions(
  ids: readonly string[],
  action: 'refresh' | 'load_more',
  times: number,
): Promise<LoadSession[]> {
  return Promise.all(
    ids.map(async (id) => ({
      headers: { authorization: `Bearer ${await mintReaderToken(SECRET, id, 3600)}` },
      request: { method: 'POST' as const, path: '/v1/feeds/for-you', body: { action, limit: PAGE } },
      times,
    })),
  );
}

function healthSessions(count: number): LoadSession[] {
  return range(count, () => ({ headers: {}, request: { method: 'GET', path: '/healthz' }, times: 1 }));
}

/** A plan's result and the server's own mean time per request meanwhile (Fastify's `elapsedTime`). */
interface Served {
  load: LoadResult;
  serverMeanMs: number;
}

/**
 * Runs `plan` against the app of `stack`, reading the app's request-duration histogram (reset
 * first) to tell the server's own time from the client's and the network's.
 */
async function serve(stack: Stack, plan: LoadPlan): Promise<Served> {
  const histogram = stack.f.metrics.httpDuration;
  histogram.reset();
  const load = await runLoad(plan);
  const { values } = await histogram.get();
  const total = (suffix: string) =>
    values.filter((v) => v.metricName?.endsWith(suffix)).reduce((a, v) => a + v.value, 0);
  return { load, serverMeanMs: (total('_sum') * 1000) / total('_count') };
}

/** Refreshes enough fresh readers over HTTP for a load_more plan, then runs the load_mores. */
async function loadMoreOverHttp(
  url: string,
  stack: Stack,
  corpus: Corpus,
  readers: Readers,
  shape: typeof HTTP_C1,
): Promise<{ refresh: Served; loadMore: Served }> {
  const ids = readers.take(Math.ceil(shape.iterations / LOAD_MORES_PER_READER) + shape.concurrency);
  await giveInterests(
    stack,
    corpus,
    ids.filter((_, i) => i % 2 === 0),
  );
  const refresh = await serve(stack, {
    url,
    ...shape,
    iterations: ids.length,
    seconds: 30,
    sessions: await feedSessions(ids, 'refresh', 1),
  });
  const loadMore = await serve(stack, {
    url,
    ...shape,
    sessions: await feedSessions(ids, 'load_more', LOAD_MORES_PER_READER),
  });
  return { refresh, loadMore };
}

/** Service-level load_mores (no HTTP) of readers refreshed just before, untimed. */
async function timeServiceLoadMore(stack: Stack, readers: Readers): Promise<Summary> {
  const ids = readers.take(Math.ceil(PART_LOOP.iterations / LOAD_MORES_PER_READER));
  for (const id of ids) await stack.f.forYou.page(id, 'refresh', PAGE, NOW);
  return timeLoadMores(stack, ids, ids.length);
}

/** A list of ids big enough that `LPOP key 20` never empties it during the loop. */
async function timeBareLpop(stack: Stack): Promise<Summary> {
  const key = `${stack.keys!.prefix}bare:list`;
  const ids = range(PAGE * (FAST_LOOP.iterations + (FAST_LOOP.warmup ?? 0)), (i) => `it${i % ITEMS}`);
  for (let from = 0; from < ids.length; from += 10_000)
    await stack.redis!.rpush(key, ...ids.slice(from, from + 10_000));
  return timeLoop(() => stack.redis!.multi().lpop(key, PAGE).llen(key).exec(), FAST_LOOP);
}

async function measureHttp(stack: Stack, corpus: Corpus, floors: Floors, cleanup: Cleanup): Promise<void> {
  const url = await listen(stack, cleanup);
  const readers = new Readers('h');
  const health1 = await serve(stack, { url, ...HTTP_C1, sessions: healthSessions(HTTP_C1.iterations) });
  const health10 = await serve(stack, { url, ...HTTP_C10, sessions: healthSessions(HTTP_C10.iterations) });
  const c1 = await loadMoreOverHttp(url, stack, corpus, readers, HTTP_C1);
  const c10 = await loadMoreOverHttp(url, stack, corpus, readers, HTTP_C10);
  const service = await timeServiceLoadMore(stack, readers);
  const lpop = await timeBareLpop(stack);
  const parts = await loadMoreParts(stack);
  const row = (what: string, r: Served, base: Served, targets: Targets = {}) =>
    timingRow(
      what,
      r.load.summary,
      targets,
      base.load.summary,
      `${fmtInt(throughput(r.load.summary))}/s`,
      fmtMs(r.serverMeanMs),
    );
  const plain = (what: string, s: Summary) => timingRow(what, s, {}, health1.load.summary);
  printTable(
    '(b) over HTTP on loopback, PostgreSQL + Redis (ms; ratios against GET /healthz at the same concurrency)',
    [...TIMING_COLUMNS, 'throughput', 'server mean'],
    [
      row('load_more, 1 connection', c1.loadMore, health1, LOAD_MORE_TARGETS),
      row('load_more, 10 connections', c10.loadMore, health10, LOAD_MORE_TARGETS),
      row('refresh, 1 connection', c1.refresh, health1),
      row('refresh, 10 connections', c10.refresh, health10),
      row('GET /healthz, 1 connection (HTTP floor)', health1, health1),
      row('GET /healthz, 10 connections', health10, health10),
      timingRow('load_more, service level (no HTTP)', service, LOAD_MORE_TARGETS, health1.load.summary),
      plain('ioredis MULTI LPOP key 20 + LLEN (Redis floor)', lpop),
      plain('Redis PING', floors.ping),
      ...parts.map(([what, s]) => plain(`  load_more part: ${what}`, s)),
    ],
  );
  printHttpNotes([c1.refresh, c1.loadMore, c10.refresh, c10.loadMore, health1, health10].map((r) => r.load));
}

/** Status counts and silent refreshes of every HTTP plan (a sanity check, not an assertion). */
function printHttpNotes(results: readonly LoadResult[]): void {
  const statuses: Record<string, number> = {};
  let refreshed = 0;
  for (const r of results) {
    for (const [s, n] of Object.entries(r.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
    refreshed += r.refreshed;
  }
  const list = Object.entries(statuses)
    .map(([s, n]) => `${s}: ${fmtInt(n)}`)
    .join(', ');
  printNotes(
    `HTTP statuses: ${list}; load_mores that fell back to a refresh: ${fmtInt(refreshed)}`,
    `client: a child process, keep-alive node:http, reader tokens (HS256 JWT checked on every request); ` +
      `each reader refreshes once, then ${LOAD_MORES_PER_READER} load_mores of ${PAGE}`,
    `server mean: the app's own time per request (Fastify elapsedTime, from its request histogram); ` +
      `the rest of p50 is the client, the loopback and waiting for the event loop`,
  );
}

/** The steps of one load_more, each timed alone. */
async function loadMoreParts(stack: Stack): Promise<[string, Summary][]> {
  const { f } = stack;
  const page = range(PAGE, (i) => `it${i}`);
  await f.cache.replace(
    'pop_probe',
    range(PAGE * (PART_LOOP.iterations + 100), (i) => `it${i % ITEMS}`),
    600_000,
  );
  const bearer = `Bearer ${await mintReaderToken(SECRET, 'token_probe', 3600)}`;
  return [
    ['cache pop 20 (EVALSHA LPOP + LLEN)', await timeLoop(() => f.cache.pop('pop_probe', PAGE), PART_LOOP)],
    ['hydrate 20 items (SQL)', await timeLoop(() => f.content.getItems(page), PART_LOOP)],
    [
      'markSeen 20',
      await timeLoop(
        (i) =>
          f.seen.markSeen(
            'mark_probe',
            page.map((id) => `${id}_m${i}`),
            NOW,
          ),
        PART_LOOP,
      ),
    ],
    ['reader token check (JWT HS256)', await timeLoop(() => f.tokens.verify(bearer), FAST_LOOP)],
  ];
}

// ---------------------------------------------------------------- (c) embedded

async function measureEmbedded(stack: Stack, corpus: Corpus): Promise<void> {
  const select1 = await timeLoop(() => stack.sql.query('SELECT 1'), FAST_LOOP);
  const { interests, none, withInterests } = await timeRefreshes(stack, corpus, new Readers('e'));
  const loadMore = await timeLoadMores(stack, withInterests, interests.n);
  printTable(
    '(c) embedded default: PGlite + in-process stores, service level (ms; ratios against PGlite SELECT 1)',
    TIMING_COLUMNS,
    [
      timingRow('refresh, reader with interests', interests, REFRESH_TARGETS, select1),
      timingRow('refresh, reader without interests', none, REFRESH_TARGETS, select1),
      timingRow('load_more', loadMore, LOAD_MORE_TARGETS, select1),
      timingRow('floor: PGlite SELECT 1', select1, {}, select1),
    ],
  );
  printNotes(
    `embedded seen filters start empty (in process, a check costs no I/O); ${fmtMs(select1.p50)} ms is one PGlite query`,
  );
}

runIfMain(import.meta.url, run);
