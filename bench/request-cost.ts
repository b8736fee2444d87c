/**
 * The cost of one request: for each request kind, the server's CPU per request (every process of
 * `freshet serve`, from /proc), Redis's CPU per request (`INFO cpu`) and the Redis commands — round trips —
 * per request (`INFO commandstats`), beside a bare Fastify `GET /healthz` (bench/bare-fastify.mjs)
 * measured in the same run. Each load is a closed loop of {@link CONCURRENCY} keep-alive connections from
 * a child process (bench/http-load.ts) for {@link LOAD_S} s; the idle CPU of the server and of Redis
 * (their timers: checkpoints, hot refresh, learning ticks) is measured over {@link IDLE_S} s first and
 * subtracted at its rate.
 *
 * The server is the real command, `freshet serve` (one process, tsx), on PostgreSQL (its own schema) and
 * on a Redis of its own (`redis-server` on a free loopback port, no persistence) so that the command
 * counts hold Freshet's commands alone. Data: {@link ITEMS} synthetic items by {@link AUTHORS} authors
 * over the last 48 h, {@link READERS} readers who each follow 10 authors, viewed 10 items and have 5
 * notifications. Every reader is warmed (a refresh, a first discover page, a following read) before
 * anything is measured: the loads measure a returning reader; `--first-visit` adds the rows of readers
 * never seen before (each request a new reader).
 *
 * Prints figures; never asserts. `npx tsx bench/request-cost.ts [--first-visit]`; FRESHET_BENCH_COST_ONLY=<text> runs
 * the floor and the kinds whose name holds the text, FRESHET_BENCH_CPU_PROF=<dir> profiles the server (bench/http.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { HOUR_MS } from '../src/kernel/clock.js';
import { mintReaderToken } from '../src/kernel/http/tokens.js';
import { freePort, startRedisServer } from '../test/support/redis-server.js';
import { serveEnv, startServer, type Server } from './http.js';
import { runLoad, type LoadRequest, type LoadResult, type LoadSession } from './http-load.js';
import { fmtInt, printNotes, printTable } from './stats.js';
import { printTitle, range, runIfMain, withCleanup, type Cleanup, BENCH_SERVICE_KEY, BENCH_SECRET } from './support.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ITEMS = 3_000;
const AUTHORS = 100;
const READERS = 400;
const CONCURRENCY = 8;
const LOAD_S = 4;
const IDLE_S = 3;
/** Requests sent one at a time after each load, to count the round trips a request waits for. */
const SEQUENTIAL = 100;
const PAGE = 20;
const SERVICE_KEY = BENCH_SERVICE_KEY;
const SECRET = BENCH_SECRET;
const NOW = Date.now();
/** Clock ticks a second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/** The server's CPU (µs, every process), Redis's CPU (µs) and the server's Redis counts, at one moment. */
interface Snapshot {
  atMs: number;
  serverUs: number;
  redisUs: number;
  /** The bare Fastify process's CPU (µs). */
  bareUs: number;
  counts: RedisCounts;
}

/** One request kind's load and what it cost, idle subtracted (totals over the load). */
interface Measured {
  what: string;
  result: LoadResult;
  serverUs: number;
  redisUs: number;
  calls: number;
  commands: Map<string, number>;
  /** Round trips per request waited for in turn, from a second load of one request at a time. */
  roundTripsPerRequest: number;
}

/** What the loads run against. */
interface Setup {
  server: Server;
  bare: { url: string; child: ChildProcess };
  redis: Redis;
  tokens: string[];
  /** Where the server answers its Redis counts (bench/redis-count-hook.mjs). */
  countsUrl: string;
  /** What the server and Redis do with no request: per ms of wall time. */
  idle: { serverUsPerMs: number; redisUsPerMs: number; callsPerMs: number };
}

/** Runs the benchmark: prints one table of request kinds. */
export async function run(firstVisit = process.argv.includes('--first-visit')): Promise<void> {
  await withCleanup(async (cleanup) => {
    printTitle(
      `The cost of one request: \`freshet serve\` (1 process) on PostgreSQL + its own Redis, ${CONCURRENCY} connections`,
    );
    const setup = await prepare(cleanup);
    const rows: Measured[] = [];
    const only = process.env.FRESHET_BENCH_COST_ONLY;
    for (const [what, plan] of loads(setup, firstVisit)) {
      if (only === undefined || what.includes('floor') || what.includes(only))
        rows.push(await measure(setup, what, plan));
    }
    report(rows);
    printRedisTotals(await setup.redis.info('commandstats'));
  });
}

/** What Redis ran over the whole run: EVAL against EVALSHA, and its time by command. */
function printRedisTotals(stats: string): void {
  const all = [...stats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)].map(([, name, n, us]) => ({
    name: name!,
    n: Number(n),
    us: Number(us),
  }));
  const calls = (name: string) => all.find((c) => c.name === name)?.n ?? 0;
  const top = [...all]
    .sort((a, b) => b.us - a.us)
    .slice(0, 10)
    .map((c) => `${c.name} ${fmtInt(c.n)} × ${(c.us / c.n).toFixed(1)} µs`);
  printNotes(
    `Over the whole run Redis ran ${fmtInt(calls('eval'))} EVAL (a script's source: the first call of each script on a connection) and ${fmtInt(calls('evalsha'))} EVALSHA.`,
    `Redis's time by command over the whole run (INFO commandstats; a script's own commands are counted inside its EVALSHA too): ${top.join(', ')}.`,
  );
}

/** Starts Redis, PostgreSQL's schema, the server and the bare floor; seeds and warms every reader. */
async function prepare(cleanup: Cleanup): Promise<Setup> {
  const own = await startRedisServer();
  cleanup.add(() => own.stop());
  const redis = new Redis(own.url);
  cleanup.add(() => redis.quit().then(() => undefined));
  const countsPort = await freePort();
  const env = await serveEnv(cleanup, 'cost', {
    FRESHET_REDIS_URL: own.url,
    // the edge's per-caller rate limits would answer 429 to a closed loop of one reader
    FRESHET_RATE_READER: '0',
    FRESHET_RATE_READER_OTHER: '0',
    FRESHET_BENCH_REDIS_COUNTS_PORT: String(countsPort),
  });
  const server = await startServer(env, 1, [join(ROOT, 'bench/redis-count-hook.mjs')]);
  cleanup.add(() => server.stop());
  const bare = await startBare();
  cleanup.add(() => void bare.child.kill('SIGTERM'));
  const tokens = await Promise.all(range(READERS, (i) => mintReaderToken(SECRET, `r_${i}`, 3600)));
  await seed(server.url);
  await warm(server.url, tokens);
  const partial = { server, bare, redis, tokens, countsUrl: `http://127.0.0.1:${countsPort}/` };
  await quiet(partial);
  const a = await snapshot(partial);
  await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000));
  const b = await snapshot(partial);
  const ms = b.atMs - a.atMs;
  const idle = {
    serverUsPerMs: (b.serverUs - a.serverUs) / ms,
    redisUsPerMs: (b.redisUs - a.redisUs) / ms,
    callsPerMs: (b.counts.calls - a.counts.calls) / ms,
  };
  return { ...partial, idle };
}

/** `node bench/bare-fastify.mjs`, resolved once it prints its URL. */
function startBare(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(ROOT, 'bench/bare-fastify.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (b: Buffer) =>
      resolve({ url: (JSON.parse(b.toString()) as { url: string }).url, child }),
    );
    child.once('exit', (code) => reject(new Error(`bare-fastify exited with ${code}`)));
  });
}

/** Sends one JSON request with the service key (or `token`); throws on a non-2xx answer. */
async function call(url: string, req: LoadRequest, token = SERVICE_KEY): Promise<unknown> {
  const res = await fetch(url + req.path, {
    method: req.method,
    headers: { authorization: `Bearer ${token}`, ...(req.body ? { 'content-type': 'application/json' } : {}) },
    ...(req.body ? { body: JSON.stringify(req.body) } : {}),
  });
  const body = (await res.json()) as { data: unknown };
  if (!res.ok) throw new Error(`${req.method} ${req.path}: ${res.status} ${JSON.stringify(body)}`);
  return body.data;
}

/** Items, follows and notifications through the API (service key). */
async function seed(url: string): Promise<void> {
  const items = range(ITEMS, (i) => ({
    id: `c_${i}`,
    author_id: `a_${i % AUTHORS}`,
    title: `Cost item ${i} word${i % 50} topic${i % 17}`,
    text: `text of item ${i} about topic${i % 17}`,
    tags: [`t${i % 20}`],
    published_at: Math.floor((NOW - (i % 48) * HOUR_MS - (i % 60) * 60_000) / 1000),
    popularity: i % 97,
  }));
  for (let from = 0; from < ITEMS; from += 500)
    await call(url, { method: 'POST', path: '/v1/items', body: items.slice(from, from + 500) });
  const edges = range(READERS * 10, (n) => ({
    follower_id: `r_${Math.floor(n / 10)}`,
    followee_id: `a_${(n * 7) % AUTHORS}`,
  }));
  await call(url, { method: 'POST', path: '/v1/follows', body: { edges } });
  for (let r = 0; r < READERS; r += 50) {
    await Promise.all(
      range(Math.min(50, READERS - r) * 5, (n) => {
        const reader = r + Math.floor(n / 5);
        const body = {
          recipient_id: `r_${reader}`,
          type: 'mention',
          actor_id: `a_${(reader + n) % AUTHORS}`,
          item_id: `c_${(reader * 5 + n) % ITEMS}`,
        };
        return call(url, { method: 'POST', path: '/v1/notifications', body });
      }),
    );
  }
}

/** Each reader: 10 views, a refresh, a first discover page, a following read (untimed). */
async function warm(url: string, tokens: readonly string[]): Promise<void> {
  for (let r = 0; r < tokens.length; r += 20) {
    await Promise.all(
      tokens.slice(r, r + 20).map(async (t, j) => {
        const reader = r + j;
        const views = range(10, (v) => ({ item_id: `c_${(reader * 31 + v * 13) % ITEMS}`, visitor_id: `r_${reader}` }));
        await call(url, { method: 'POST', path: '/v1/views', body: views });
        await call(url, { method: 'POST', path: '/v1/feeds/for-you', body: { action: 'refresh', limit: PAGE } }, t);
        await call(url, { method: 'GET', path: `/v1/feeds/discover?limit=${PAGE}` }, t);
        await call(url, { method: 'GET', path: `/v1/feeds/following?limit=${PAGE}` }, t);
      }),
    );
  }
}

/** Every process of the tree rooted at `root` (its pid and its descendants'), from /proc. */
function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended between the listing and the read
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parent) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

/** User + system CPU (µs) of the processes, from /proc/<pid>/stat (utime and stime, in USER_HZ ticks). */
function processCpuUs(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // ended: its CPU is gone from the sum (a serve process does not end mid-run)
    }
  }
  return (ticks * 1e6) / USER_HZ;
}

/** Redis's CPU (µs, user + system over all its threads) from `INFO cpu`. */
async function redisCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

/** The counts of bench/redis-count-hook.mjs in the server. */
interface RedisCounts {
  /** Commands sent on their own, plus pipelines. */
  calls: number;
  /** Calls started while none was in flight (see the hook). */
  roundTrips: number;
  commands: Record<string, number>;
}

async function redisCounts(countsUrl: string): Promise<RedisCounts> {
  return (await (await fetch(countsUrl)).json()) as RedisCounts;
}

/** The server's and Redis's counters now. */
async function snapshot(s: Pick<Setup, 'server' | 'bare' | 'redis' | 'countsUrl'>): Promise<Snapshot> {
  const counts = await redisCounts(s.countsUrl);
  const redisUs = await redisCpuUs(s.redis);
  const serverUs = processCpuUs(processTree(s.server.child.pid!));
  return { atMs: performance.now(), serverUs, redisUs, bareUs: processCpuUs([s.bare.child.pid!]), counts };
}

/**
 * Waits (up to 90 s) until the server is quiet: 1 s with under 2 % of a core and at most 2 round trips
 * (what the seeding left — fan-out jobs, the first learning tick — done).
 */
async function quiet(s: Pick<Setup, 'server' | 'bare' | 'redis' | 'countsUrl'>): Promise<void> {
  let last = await snapshot(s);
  for (const end = performance.now() + 90_000; performance.now() < end; ) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = await snapshot(s);
    const calm = now.serverUs - last.serverUs < 20_000 && now.counts.calls - last.counts.calls <= 2;
    if (calm) return;
    last = now;
  }
  console.warn('the server did not become quiet within 90 s: its idle rates hold background work');
}

/** {@link SEQUENTIAL} requests one at a time: the server's round trips per request. */
async function sequentialRoundTrips(s: Setup, url: string, sessions: LoadSession[]): Promise<number> {
  const a = await snapshot(s);
  const r = await runLoad({ url, concurrency: 1, iterations: SEQUENTIAL, seconds: LOAD_S, warmup: 0, sessions });
  const b = await snapshot(s);
  return (b.counts.roundTrips - a.counts.roundTrips) / Math.max(1, r.summary.n);
}

/** Runs one load between two snapshots; the idle rates times its wall time are taken off. */
async function measure(
  s: Setup,
  what: string,
  plan: () => Promise<{ url: string; sessions: LoadSession[] }>,
): Promise<Measured> {
  const { url, sessions } = await plan();
  await quiet(s);
  const a = await snapshot(s);
  const result = await runLoad({
    url,
    concurrency: CONCURRENCY,
    iterations: 1_000_000,
    seconds: LOAD_S,
    warmup: 0,
    sessions,
  });
  const b = await snapshot(s);
  const ms = b.atMs - a.atMs;
  const commands = new Map<string, number>();
  for (const [name, n] of Object.entries(b.counts.commands)) {
    const d = n - (a.counts.commands[name] ?? 0);
    if (d > 0) commands.set(name, d);
  }
  const bare = url === s.bare.url;
  return {
    what,
    result,
    serverUs: bare ? b.bareUs - a.bareUs : b.serverUs - a.serverUs - s.idle.serverUsPerMs * ms,
    redisUs: b.redisUs - a.redisUs - s.idle.redisUsPerMs * ms,
    calls: b.counts.calls - a.counts.calls - s.idle.callsPerMs * ms,
    commands,
    roundTripsPerRequest: await sequentialRoundTrips(s, url, sessions.slice(sessions.length / 2)),
  };
}

type Plan = () => Promise<{ url: string; sessions: LoadSession[] }>;

/** Sessions of one request each, cycling over the readers' tokens (enough for any load of LOAD_S s). */
function cycle(tokens: readonly string[], request: (reader: number, n: number) => LoadRequest): LoadSession[] {
  return range(60_000, (n) => ({
    headers: { authorization: `Bearer ${tokens[n % tokens.length]}` },
    request: request(n % tokens.length, n),
    times: 1,
  }));
}

/** The request kinds, each with its sessions (built untimed, just before its load). */
function loads(s: Setup, firstVisit: boolean): [string, Plan][] {
  const url = s.server.url;
  const get = (path: string) => (): LoadRequest => ({ method: 'GET', path });
  const forYou = (action: string) => (): LoadRequest => ({
    method: 'POST',
    path: '/v1/feeds/for-you',
    body: { action, limit: PAGE },
  });
  const plan =
    (make: (reader: number, n: number) => LoadRequest, tokens = s.tokens) =>
    async () => ({ url, sessions: cycle(tokens, make) });
  const health = (target: string) => async () => ({ url: target, sessions: cycle([''], get('/healthz')) });
  const kinds: [string, Plan][] = [
    ['bare Fastify GET /healthz (the floor)', health(s.bare.url)],
    ['GET /healthz', health(url)],
    ['for-you refresh (20)', plan(forYou('refresh'))],
    ['for-you load_more (20)', plan(forYou('load_more'))],
    ['discover first page (20)', plan(get(`/v1/feeds/discover?limit=${PAGE}`))],
    ['discover next page (20)', async () => ({ url, sessions: await nextPages(url, s.tokens) })],
    ['following (20)', plan(get(`/v1/feeds/following?limit=${PAGE}`))],
    ['views, a batch of 20 (service key)', async () => ({ url, sessions: viewBatches() })],
    ['hot (20)', plan(get(`/v1/hot?limit=${PAGE}`))],
    ['notifications (20)', plan(get(`/v1/feeds/notifications?limit=${PAGE}`))],
  ];
  if (!firstVisit) return kinds;
  const fresh = async (tag: string) => Promise.all(range(6_000, (i) => mintReaderToken(SECRET, `${tag}_${i}`, 3600)));
  const once =
    (tag: string, make: () => LoadRequest): Plan =>
    async () => ({ url, sessions: cycle(await fresh(tag), make) });
  return [
    ...kinds,
    ['first visit: for-you refresh (20)', once('nf', forYou('refresh'))],
    ['first visit: discover first page (20)', once('nd', get(`/v1/feeds/discover?limit=${PAGE}`))],
  ];
}

/** Batches of 20 views with the service key, each view by a visitor of its own (none a repeat). */
function viewBatches(): LoadSession[] {
  return range(20_000, (n) => ({
    headers: { authorization: `Bearer ${SERVICE_KEY}` },
    request: {
      method: 'POST',
      path: '/v1/views',
      body: range(PAGE, (j) => ({ item_id: `c_${(n * PAGE + j) % ITEMS}`, visitor_id: `v_${n}_${j}` })),
    },
    times: 1,
  }));
}

/** Each reader's discover second page: its first page's `next_cursor` (fetched untimed). */
async function nextPages(url: string, tokens: readonly string[]): Promise<LoadSession[]> {
  const cursors: string[] = [];
  for (let r = 0; r < tokens.length; r += 20) {
    const pages = await Promise.all(
      tokens.slice(r, r + 20).map((t) => call(url, { method: 'GET', path: `/v1/feeds/discover?limit=${PAGE}` }, t)),
    );
    for (const p of pages) cursors.push((p as { next_cursor: string | null }).next_cursor ?? '');
  }
  return cycle(tokens, (reader) => ({
    method: 'GET',
    path: `/v1/feeds/discover?limit=${PAGE}${cursors[reader] ? `&cursor=${encodeURIComponent(cursors[reader])}` : ''}`,
  }));
}

/** Prints the table: per request, idle subtracted; ratios against the bare floor of the same run. */
function report(rows: readonly Measured[]): void {
  const per = (m: Measured, total: number) => total / Math.max(1, m.result.summary.n);
  const floor = per(rows[0]!, rows[0]!.serverUs);
  printTable(
    `per request, idle subtracted; ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}`,
    [
      'request',
      'n',
      'per s',
      'p50 ms',
      'server CPU µs',
      '× floor',
      'Redis CPU µs',
      'Redis calls',
      'round trips',
      'commands per request',
      'statuses',
    ],
    rows.map((m) => [
      m.what,
      fmtInt(m.result.summary.n),
      fmtInt((m.result.summary.n * 1000) / m.result.summary.elapsedMs),
      m.result.summary.p50.toFixed(2),
      fmtInt(per(m, m.serverUs)),
      `${(per(m, m.serverUs) / floor).toFixed(1)} ×`,
      fmtInt(Math.max(0, per(m, m.redisUs))),
      Math.max(0, per(m, m.calls)).toFixed(2),
      m.roundTripsPerRequest.toFixed(2),
      [...m.commands]
        .sort((x, y) => y[1] - x[1])
        .slice(0, 5)
        .map(([name, n]) => `${name} ${per(m, n).toFixed(2)}`)
        .join(', '),
      Object.entries(m.result.statuses)
        .map(([st, n]) => `${st}:${n}`)
        .join(' ') + (m.result.refreshed ? ` refreshed:${m.result.refreshed}` : ''),
    ]),
  );
  printNotes(
    `Server CPU: user + system time of every freshet serve process (/proc/<pid>/stat); Redis CPU: INFO cpu of a Redis that serves this server alone; Redis calls: what the server sends (a command on its own, or a pipeline: a Lua script is one however many commands it runs inside Redis), counted in the server by bench/redis-count-hook.mjs; round trips: the calls a request waits for in turn (calls sent together count once), from ${SEQUENTIAL} more requests sent one at a time.`,
    `The client (${CONCURRENCY} keep-alive connections, bench/http-load.ts), the server, Redis and PostgreSQL share the machine; the idle rates of the server and Redis (${IDLE_S} s with no request) are taken off each load.`,
  );
}

runIfMain(import.meta.url, () => run());
