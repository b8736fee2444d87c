/**
 * HTTP throughput of `freshet serve` with 1 and N worker processes (issue 11 "All cores serving"), on
 * PostgreSQL + Redis on loopback. The server is the real command (`serve --workers N`, a child process
 * started with tsx), so what is measured is what an operator runs; the load comes from the closed-loop
 * generator of bench/http-load.ts in another child process (keep-alive connections).
 *
 * For each worker count, in the same run against the same server:
 * - `GET /healthz` at 10 connections — the HTTP floor;
 * - `load_more` at 10 connections: readers (reader tokens, wall time) refreshed first (untimed), then
 *   20 `load_more`s of 20 each — target ≥ 50 % of the healthz throughput;
 * - views at 50 connections, service key, every view by a distinct visitor: single `POST /v1/views`,
 *   and batches of 20 — target ≥ 25 % of a bare `EVALSHA` of the view script (views/s), measured by
 *   this process on its own connection before the HTTP runs.
 *
 * Every run uses its own schema, key prefix and data folder and removes them at the end. Prints
 * figures; never asserts. `npx tsx bench/http.ts [workers…]` (default: 1 and the number of cores).
 * Set FRESHET_BENCH_CPU_PROF=<dir> to write a CPU profile of every server process into <dir>, and
 * FRESHET_BENCH_HTTP_ONLY=load_more (or views, batched) to run the floor and that load only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/compose/config.js';
import { openFreshet } from '../src/compose/open.js';
import { bareHotView } from './hot.js';
import { HOUR_MS } from '../src/kernel/clock.js';
import { Keys } from '../src/kernel/redis/keys.js';
import { closeRedis, type RedisClient } from '../src/kernel/redis/client.js';
import { openPostgres } from '../src/kernel/sql/sql.js';
import { mintReaderToken } from '../src/kernel/http/tokens.js';
import { closedLoop, fmtInt, fmtMs, fmtPct, printNotes, printTable, throughput, type Summary } from './stats.js';
import {
  BENCH_DATABASE_URL,
  BENCH_REDIS_URL,
  dropPrefix,
  dropSchema,
  openRedis,
  printTitle,
  range,
  runIfMain,
  uniquePrefix,
  uniqueSchema,
  withCleanup,
  type Cleanup,
  BENCH_SERVICE_KEY,
  BENCH_SECRET,
} from './support.js';
import { runLoad, type LoadResult, type LoadSession } from './http-load.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'src/cli/main.ts');
const ITEMS = 3_000;
const PAGE = 20;
const LOAD_MORES_PER_READER = 20;
const BATCH = 20;
/** Rounds per worker count, and the length of each load in a round (s). */
const ROUNDS = 3;
const ROUND_S = 2.5;
/** Readers refreshed for each round's load_mores (20 each: more than a round can send). */
const READERS_PER_ROUND = 250;
const SERVICE_KEY = BENCH_SERVICE_KEY;
const SECRET = BENCH_SECRET;
/** Wall time at start: reader tokens read at the server clock, so the items are recent on it. */
const NOW = Date.now();
const itemId = (i: number) => `hb_${i % ITEMS}`;

/** The environment of the server and of the seeding Freshet. */
interface Setup {
  env: Record<string, string>;
  redis: RedisClient;
  keys: Keys;
}

/** Runs the benchmark for each worker count (default: the command line's, else 1 and the number of cores). */
export async function run(workerCounts = defaultWorkerCounts()): Promise<void> {
  await withCleanup(async (cleanup) => {
    printTitle(
      `HTTP throughput of \`freshet serve --workers N\` (N = ${workerCounts.join(', ')}), PostgreSQL + Redis, ${ROUNDS} interleaved rounds`,
    );
    const setup = await prepare(cleanup);
    const rows: string[][] = [];
    for (const workers of workerCounts) rows.push(...(await measure(setup, workers)));
    printTable(
      'per second over all rounds; "vs floor" = median [min–max] over the rounds of the load against its floor measured in the same round',
      ['workers', 'what', 'n', 'per second', 'vs floor', 'target', 'p50 ms', 'p99 ms', 'statuses'],
      rows,
    );
    printNotes(
      `Each round runs, one after the other for ${ROUND_S} s each: the bare EVALSHA (this process, server idle), GET /healthz, load_more, single views, batched views; the ratios pair loads of the same round, so a machine shared with other work disturbs both sides alike.`,
      'Client, server workers, Redis and PostgreSQL share the machine: with more workers than free cores the figures measure the machine, so read the ratios.',
    );
  });
}

function defaultWorkerCounts(): number[] {
  const fromArgs = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
  if (fromArgs.length > 0) return fromArgs;
  const cores = availableParallelism();
  return cores > 1 ? [1, cores] : [1];
}

/** A schema, a prefix, a data folder; the items written and registered for views. */
async function prepare(cleanup: Cleanup): Promise<Setup> {
  const redis = openRedis();
  cleanup.add(() => closeRedis(redis));
  const keys = new Keys(uniquePrefix('http'));
  cleanup.add(() => dropPrefix(redis, keys.prefix));
  const env = await serveEnv(cleanup, 'http', { FRESHET_REDIS_URL: BENCH_REDIS_URL, FRESHET_KEY_PREFIX: keys.prefix });
  // the server's own database URL: its search_path names the schema serveEnv made
  const sql = await openPostgres(env.FRESHET_DATABASE_URL!);
  const f = await openFreshet(loadConfig(env), { sql, defaultMetrics: false });
  try {
    const items = range(ITEMS, (i) => ({
      id: itemId(i),
      authorId: `a${i % 100}`,
      title: `Bench item ${i} word${i % 50}`,
      text: `text of item ${i}`,
      url: null,
      tags: [`t${i % 20}`],
      publishedAt: NOW - (i % 48) * HOUR_MS,
      popularity: i % 97,
    }));
    for (let from = 0; from < items.length; from += 500)
      await f.content.upsertItems(items.slice(from, from + 500), NOW);
    await f.hot.resolve(
      items.map((i) => i.id),
      NOW,
    );
    await sql.exec('ANALYZE items');
  } finally {
    await f.close();
  }
  return { env, redis, keys };
}

/** The floor of views: {@link bareHotView} (bench/hot.ts), 50 callers, one connection. */
async function bareEvalsha({ redis, keys, env }: Setup, tag: string): Promise<Summary> {
  const view = await bareHotView(redis, keys, loadConfig(env).hot, NOW);
  let seq = 0;
  return closedLoop(
    async () => {
      const n = seq++;
      await view(itemId(n), `bare_${tag}_${n}`);
    },
    { concurrency: 50, iterations: 300_000, seconds: ROUND_S, warmup: 20 },
  );
}

/** The loads of one worker count, one result per round. */
interface Rounds {
  bare: Summary[];
  health: LoadResult[];
  loadMore: LoadResult[];
  views: LoadResult[];
  batched: LoadResult[];
}

/** Starts `serve --workers N`, runs the rounds, stops it; returns the table rows. */
async function measure(setup: Setup, workers: number): Promise<string[][]> {
  const server = await startServer(setup.env, workers);
  try {
    const url = server.url;
    const tokens = await refreshReaders(url, `r${workers}`, ROUNDS * READERS_PER_ROUND);
    const only = process.env.FRESHET_BENCH_HTTP_ONLY;
    const runs = (what: string) => only === undefined || only === what;
    const r: Rounds = { bare: [], health: [], loadMore: [], views: [], batched: [] };
    for (let i = 0; i < ROUNDS; i++) {
      const tag = `w${workers}r${i}`;
      r.bare.push(await bareEvalsha(setup, tag));
      r.health.push(
        await runLoad({
          url,
          concurrency: 10,
          iterations: 200_000,
          seconds: ROUND_S,
          warmup: 20,
          sessions: range(10, () => ({
            headers: {},
            request: { method: 'GET' as const, path: '/healthz' },
            times: 20_000,
          })),
        }),
      );
      if (runs('load_more'))
        r.loadMore.push(await loadMores(url, tokens.slice(i * READERS_PER_ROUND, (i + 1) * READERS_PER_ROUND)));
      if (runs('views')) r.views.push(await viewLoad(url, `v${tag}`, 1));
      if (runs('batched')) r.batched.push(await viewLoad(url, `b${tag}`, BATCH));
    }
    return rows(String(workers), r);
  } finally {
    await server.stop();
  }
}

/** Requests a second over several runs. */
const perSecond = (ss: readonly Summary[], per = 1) =>
  (ss.reduce((n, s) => n + s.n, 0) * per * 1000) / ss.reduce((t, s) => t + s.elapsedMs, 0);

/** Median [min–max] of the per-round ratios `load / floor`. */
function ratios(load: readonly Summary[], floor: readonly Summary[], per = 1): string {
  if (load.length === 0) return '–';
  const rs = load.map((s, i) => (throughput(s) * per) / throughput(floor[i]!)).sort((a, b) => a - b);
  return `${fmtPct(rs[Math.floor(rs.length / 2)]!)} [${fmtPct(rs[0]!)}–${fmtPct(rs[rs.length - 1]!)}]`;
}

function rows(w: string, r: Rounds): string[][] {
  const last = <T>(xs: readonly T[]) => xs[xs.length - 1];
  const row = (
    what: string,
    loads: readonly LoadResult[],
    floor: readonly Summary[],
    target: string,
    per = 1,
  ): string[] => {
    const ss = loads.map((l) => l.summary);
    const tail = last(ss);
    return [
      w,
      what,
      fmtInt(ss.reduce((n, s) => n + s.n, 0) * per),
      ss.length ? fmtInt(perSecond(ss, per)) : '–',
      ratios(ss, floor, per),
      target,
      tail ? fmtMs(tail.p50) : '–',
      tail ? fmtMs(tail.p99) : '–',
      statuses(loads),
    ];
  };
  const health = r.health.map((h) => h.summary);
  return [
    [
      w,
      'bare EVALSHA hotView-9, 50 callers (views floor)',
      fmtInt(r.bare.reduce((n, s) => n + s.n, 0)),
      fmtInt(perSecond(r.bare)),
      '100 %',
      '',
      fmtMs(last(r.bare)!.p50),
      fmtMs(last(r.bare)!.p99),
      '',
    ],
    row('GET /healthz, 10 connections (HTTP floor)', r.health, health, ''),
    row('  the same GET /healthz against the bare EVALSHA (ceiling of single views)', r.health, r.bare, ''),
    row('load_more of 20, 10 connections', r.loadMore, health, '≥ 50 %'),
    row('views: POST /v1/views, 1 view, 50 connections', r.views, r.bare, '≥ 25 %'),
    row(`views: POST /v1/views, batches of ${BATCH}, 50 connections`, r.batched, r.bare, '≥ 25 %', BATCH),
  ];
}

/** Status counts over the rounds (and load_mores that fell back to a refresh). */
function statuses(loads: readonly LoadResult[]): string {
  const counts: Record<string, number> = {};
  let refreshed = 0;
  for (const l of loads) {
    for (const [s, n] of Object.entries(l.statuses)) counts[s] = (counts[s] ?? 0) + n;
    refreshed += l.refreshed;
  }
  return (
    Object.entries(counts)
      .map(([s, n]) => `${s}:${n}`)
      .join(' ') + (refreshed ? ` refreshed:${refreshed}` : '')
  );
}

/** Mints tokens for `count` new readers and refreshes each once (untimed); returns their bearer headers. */
async function refreshReaders(url: string, tag: string, count: number): Promise<string[]> {
  const tokens = await Promise.all(range(count, (i) => mintReaderToken(SECRET, `${tag}_${i}`, 3600)));
  await runLoad({
    url,
    concurrency: 10,
    iterations: count,
    seconds: 120,
    warmup: 0,
    sessions: feedSessions(tokens, 'refresh', 1),
  });
  return tokens;
}

function feedSessions(tokens: readonly string[], action: 'refresh' | 'load_more', times: number): LoadSession[] {
  return tokens.map((t) => ({
    headers: { authorization: `Bearer ${t}` },
    request: { method: 'POST', path: '/v1/feeds/for-you', body: { action, limit: PAGE } },
    times,
  }));
}

/** 20 load_mores of 20 for each of the given (refreshed) readers, 10 connections. */
function loadMores(url: string, tokens: readonly string[]): Promise<LoadResult> {
  return runLoad({
    url,
    concurrency: 10,
    iterations: tokens.length * LOAD_MORES_PER_READER,
    seconds: ROUND_S,
    warmup: 0,
    sessions: feedSessions(tokens, 'load_more', LOAD_MORES_PER_READER),
  });
}

/** Views with the service key, each by a distinct visitor, `per` views a request (1: a single object). */
function viewLoad(url: string, tag: string, per: number): Promise<LoadResult> {
  const headers = { authorization: `Bearer ${SERVICE_KEY}` };
  const view = (n: number) => ({ item_id: itemId(n), visitor_id: `${tag}_${n}` });
  const sessions: LoadSession[] = range(Math.ceil(60_000 / per), (n) => ({
    headers,
    request: { method: 'POST', path: '/v1/views', body: per === 1 ? view(n) : range(per, (j) => view(n * per + j)) },
    times: 1,
  }));
  return runLoad({ url, concurrency: 50, iterations: sessions.length, seconds: ROUND_S, warmup: 5, sessions });
}

/**
 * The environment of a `freshet serve` on a data folder and a PostgreSQL schema of its own (both removed by
 * `cleanup`), the service key and secret of the benchmarks, warnings only; `extra` is added last.
 */
export async function serveEnv(
  cleanup: Cleanup,
  tag: string,
  extra: Record<string, string>,
): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(join(tmpdir(), `freshet-bench-${tag}-`));
  cleanup.add(() => rmSync(dataDir, { recursive: true, force: true }));
  const schema = uniqueSchema();
  cleanup.add(() => dropSchema(schema));
  await (await openPostgres(BENCH_DATABASE_URL, { schema })).close(); // the schema exists before the server uses it
  const sep = BENCH_DATABASE_URL.includes('?') ? '&' : '?';
  return {
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: '0',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: SECRET,
    FRESHET_DATABASE_URL: `${BENCH_DATABASE_URL}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    ...extra,
  };
}

/** A running `freshet serve`. */
export interface Server {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `freshet serve --workers N` (tsx) and resolves once it logs its URL; `preload` adds modules
 * imported before the server's (`--import`, as bench/request-cost.ts counts Redis round trips).
 */
export async function startServer(
  env: Record<string, string>,
  workers: number,
  preload: string[] = [],
): Promise<Server> {
  const prof = process.env.FRESHET_BENCH_CPU_PROF;
  const execArgv = [
    ...preload.flatMap((m) => ['--import', m]),
    '--import',
    'tsx',
    ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
  ];
  const child = spawn(process.execPath, [...execArgv, MAIN, 'serve', '--workers', String(workers)], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error('serve did not start within 60 s')), 60_000);
    child.stdout!.on('data', (b: Buffer) => {
      buffered += b.toString();
      for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
        let entry: { msg?: string; url?: string };
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          continue; // not a log line
        }
        if (entry.msg === (workers > 1 ? 'freshet workers listening' : 'freshet listening')) {
          clearTimeout(timer);
          resolve(entry.url!);
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before listening`)));
  });
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

runIfMain(import.meta.url, () => run());
