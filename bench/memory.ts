/**
 * Redis memory per active reader (and PostgreSQL growth per reader and day), measured on what a real
 * reading session leaves behind.
 *
 * For each reader count (`--readers=1000,10000`; default 1,000) and each Redis (`--backends=standalone,
 * cluster`; default both): a fresh PostgreSQL schema, a fresh key prefix, and the in-process Fastify app
 * listening on 127.0.0.1:<random> over `openFreshet` with default settings (only the request deadlines
 * raised to 5 s, so a loaded machine gives no 503s; they change nothing stored), its background workers
 * and a fan-out worker running, on a manual clock at the wall time of the start. The catalog: 8,000 items
 * by 500 authors published during the hour before that "now" (`POST /v1/items`), and 5,000 seed views by
 * 100 visitors so the hot ranking has data. Then each reader runs one session over real HTTP (service key
 * + `X-Freshet-Reader`; bench/memory-session.ts, a client in a child process), 16 at a time: 8 for-you pages of 20 (1 refresh + 7
 * load_more), 3 discover pages of 20 following `next_cursor`, 50 follows and 2 following reads, 10 views,
 * 1 "not interested". A light reader then opens one discover page of 20.
 *
 * Then every key under the prefix is SCANned (on every master of the cluster), sized with
 * `MEMORY USAGE key SAMPLES 0` and grouped by key family (src/kernel/redis/key-families.ts): keys count
 * as the reader's own when they name a reader of the sessions (`{u:<reader>}`, or the visitor of a hot
 * rate-limit or budget key), else as shared (seen day filters, hot ranking and counters, the authors'
 * outboxes, the fan-out queue, the seed visitors' keys), shown as their share per reader. Printed: the
 * family table, bytes per reader, the largest keys, the light reader's keys, per-node keys, memory and
 * commands processed with their spread (max/mean) on the cluster, the projection to 1M and 10M readers,
 * what a seen checkpoint then moves out of Redis, and the growth of the PostgreSQL tables
 * (`pg_total_relation_size` before and after the sessions) per reader.
 *
 * The standalone Redis (FRESHET_BENCH_REDIS_URL) is shared: its node figures (used memory, commands)
 * count other clients too; the key figures are the prefix's only. The cluster is started by the
 * benchmark on free loopback ports (redis-server on PATH) and stopped at the end. Every loop is bounded
 * by a count and a time: no session starts after `FRESHET_BENCH_MEMORY_SECONDS` (default 0.07 s per
 * reader asked for: 70 s for 1,000), so a slow machine measures fewer readers (the printout says so) —
 * the per-reader figures do not depend on the count. Nothing asserts. Run alone with
 * `npx tsx bench/memory.ts` (about 3 minutes on 2 cores); `FRESHET_BENCH_MEMORY_SECONDS=600` lets all
 * 1,000 sessions run (about 2 minutes each on a loaded 2-core machine).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/compose/config.js';
import { buildApp } from '../src/server/app.js';
import { openFreshet, type Freshet } from '../src/compose/open.js';
import { ManualClock } from '../src/kernel/clock.js';
import { keyFamilyOf } from '../src/kernel/redis/key-families.js';
import { closeRedis, createRedis, type RedisClient } from '../src/kernel/redis/client.js';
import { openPostgres, type Sql } from '../src/kernel/sql/sql.js';
import {
  Api,
  PAGE,
  SESSION,
  measureKeys,
  nodeStats,
  runSessionsInChild,
  seedCatalog,
  startCluster,
  type CatalogPlan,
  type KeySize,
  type NodeStats,
} from './memory-session.js';
import { fmtInt, printNotes, printTable } from './stats.js';
import {
  BENCH_DATABASE_URL,
  BENCH_REDIS_URL,
  dropPrefix,
  dropSchema,
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

const SERVICE_KEY = BENCH_SERVICE_KEY;
const SECRET = BENCH_SECRET;
/** The manual clock's time: the wall time at start, whole seconds. */
const NOW = Math.floor(Date.now() / 1000) * 1000;
const CATALOG: Omit<CatalogPlan, 'nowMs'> = { items: 8_000, authors: 500, views: 5_000, visitors: 100 };
/** Sessions running at once (each one request at a time). */
const CONCURRENCY = 16;
/** Default time bound of a pool of sessions, per reader asked for (s): a slow machine measures fewer readers. */
const SECONDS_PER_READER = 0.07;
/** The reader who opens one discover page only. */
const LIGHT_READER = 'light0';

type BackendKind = 'standalone' | 'cluster';

/** Where the run's Redis is: the app's settings, a plain connection to each master and its `host:port`. */
interface Backend {
  kind: BackendKind;
  env: Record<string, string>;
  nodes: RedisClient[];
  names: string[];
}

/** One wired app over a backend. */
interface Stack {
  f: Freshet;
  api: Api;
  sql: Sql;
  schema: string;
  prefix: string;
  url: string;
}

export async function run(): Promise<void> {
  const model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '?';
  console.log(`CPU: ${model}`);
  for (const readers of flagList('readers', ['1000']).map(parseCount)) {
    for (const kind of flagList('backends', ['standalone', 'cluster']) as BackendKind[]) {
      await withCleanup((cleanup) => measure(kind, readers, cleanup));
    }
  }
}

/** `--name=a,b` from the command line, else `fallback`. */
function flagList(name: string, fallback: string[]): string[] {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg
    ? arg
        .slice(name.length + 3)
        .split(',')
        .filter(Boolean)
    : fallback;
}

/** `1000` or `10k` → a count. */
function parseCount(s: string): number {
  const n = /^\d+k$/i.test(s) ? Number(s.slice(0, -1)) * 1000 : Number(s);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--readers: "${s}" is not a count`);
  return n;
}

/** One measured run: one backend, `readers` sessions. */
async function measure(kind: BackendKind, readers: number, cleanup: Cleanup): Promise<void> {
  printTitle(`Redis memory per active reader — ${kind} Redis, ${readers.toLocaleString('en-US')} readers, PostgreSQL`);
  const backend = await openBackend(kind, cleanup);
  const stack = await openStack(backend, cleanup);
  const t0 = performance.now();
  const catalog = await seedCatalog(stack.api, { ...CATALOG, nowMs: NOW });
  await stack.f.following.queue.idle(60_000);
  const seedS = (performance.now() - t0) / 1000;
  const nodesBefore = await Promise.all(backend.nodes.map(nodeStats));
  const pgBefore = await tableSizes(stack);
  const seconds = Number(process.env.FRESHET_BENCH_MEMORY_SECONDS ?? Math.max(30, SECONDS_PER_READER * readers));
  const plan = {
    url: stack.url,
    serviceKey: SERVICE_KEY,
    readers: range(readers, (i) => `r${i}`),
    catalog,
    concurrency: CONCURRENCY,
    seconds,
    lightReader: LIGHT_READER,
  };
  const sessions = await runSessionsInChild(plan);
  await stack.f.following.queue.idle(60_000);
  const nodesAfter = await Promise.all(backend.nodes.map(nodeStats));
  const keys = await measureKeys(backend.nodes, stack.prefix);
  const readerSet = new Set(sessions.readers);
  const topOwn = largest(keys.filter((k) => scopeOf(k.rest, readerSet) === 'reader'));
  // the value's own length beside its MEMORY USAGE (NaN unless a string)
  const topOwnLength = topOwn
    ? await backend.nodes[topOwn.node]!.strlen(stack.prefix + topOwn.rest).catch(() => NaN)
    : NaN;
  await stack.f.seenCheckpointer?.checkpoint();
  const keysAfterCheckpoint = await measureKeys(backend.nodes, stack.prefix);
  const report: Report = {
    kind,
    readers: readerSet,
    topOwnLength,
    asked: readers,
    seconds,
    sessionMs: sessions.elapsedMs,
    seedS,
    requests: stack.api.requests + sessions.requests,
    statuses: [...stack.api.statuses, ...sessions.statuses].reduce(
      (m, [k, c]) => m.set(k, (m.get(k) ?? 0) + c),
      new Map<string, number>(),
    ),
    failures: [...stack.api.failures, ...sessions.failures],
    nodeNames: backend.names,
    nodesBefore,
    nodesAfter,
    keys,
    keysAfterCheckpoint,
    pgBefore,
    pgAfter: await tableSizes(stack),
  };
  printReport(report);
}

/** The standalone server (a fresh prefix on the shared one) or a 3-master cluster started here. */
async function openBackend(kind: BackendKind, cleanup: Cleanup): Promise<Backend> {
  if (kind === 'standalone') {
    const node = createRedis({ url: BENCH_REDIS_URL });
    cleanup.add(() => closeRedis(node));
    return { kind, env: { FRESHET_REDIS_URL: BENCH_REDIS_URL }, nodes: [node], names: [new URL(BENCH_REDIS_URL).host] };
  }
  const cluster = await startCluster();
  cleanup.add(() => cluster.stop());
  const nodes = cluster.nodes.map((n) => createRedis({ url: `redis://${n.host}:${n.port}` }));
  cleanup.add(() => Promise.all(nodes.map(closeRedis)));
  const names = cluster.nodes.map((n) => `${n.host}:${n.port}`);
  return { kind, env: { FRESHET_REDIS_CLUSTER_NODES: names.join(',') }, nodes, names };
}

/**
 * Freshet on a fresh schema and prefix, its workers and a fan-out worker started (as `freshet serve`
 * does), the app listening on a random loopback port, and the client. Every part is undone by `cleanup`
 * (the cluster's keys go with the cluster).
 */
async function openStack(backend: Backend, cleanup: Cleanup): Promise<Stack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-bench-'));
  cleanup.add(() => rmSync(dataDir, { recursive: true, force: true }));
  const schema = uniqueSchema();
  cleanup.add(() => dropSchema(schema));
  const prefix = uniquePrefix('memory');
  if (backend.kind === 'standalone') cleanup.add(() => dropPrefix(backend.nodes[0]!, prefix));
  const env = {
    LOG_LEVEL: 'silent',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: SECRET,
    FRESHET_KEY_PREFIX: prefix,
    FRESHET_REDIS_TIMEOUT_MS: '5000',
    FRESHET_SQL_TIMEOUT_MS: '5000',
    ...backend.env,
  };
  const sql = await openPostgres(BENCH_DATABASE_URL, { schema, timeoutMs: 60_000 });
  const f = await openFreshet(loadConfig(env), { clock: new ManualClock(NOW), sql, defaultMetrics: false });
  cleanup.add(() => Promise.race([f.close(), sleep(20_000)])); // bounded: a store gone on Ctrl-C must not hold the cleanup
  f.startWorkers();
  f.following.startWorker();
  const app = await buildApp(f, { logger: false, closeStores: false });
  cleanup.add(() => app.close());
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const api = new Api(url, SERVICE_KEY, CONCURRENCY);
  cleanup.add(() => api.close());
  return { f, api, sql, schema, prefix, url };
}

/** `pg_total_relation_size` (table, indexes, TOAST) of every table of the run's schema. */
async function tableSizes(stack: Stack): Promise<Map<string, number>> {
  const rows = await stack.sql.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'r'`,
    [stack.schema],
  );
  return new Map(rows.map((r) => [r.name, Number(r.bytes)]));
}

// ---------------------------------------------------------------- report

/** Everything one run measured. */
interface Report {
  kind: BackendKind;
  readers: ReadonlySet<string>;
  /** Readers asked for, and the time bound of their sessions (s). */
  asked: number;
  seconds: number;
  sessionMs: number;
  seedS: number;
  requests: number;
  statuses: Map<string, number>;
  failures: string[];
  nodeNames: string[];
  nodesBefore: NodeStats[];
  nodesAfter: NodeStats[];
  keys: KeySize[];
  /** STRLEN of the largest key of a reader (NaN when not a string). */
  topOwnLength: number;
  keysAfterCheckpoint: KeySize[];
  pgBefore: Map<string, number>;
  pgAfter: Map<string, number>;
}

type Scope = 'reader' | 'shared' | 'light';

/** Where a key names its reader: a `{u:<id>}` tag, or the visitor of a hot rate-limit or budget key. */
const OWNER_PATTERNS = [/\{u:([^}]+)\}/, /:ratelimit:[^:]+:([^:]+)$/, /:budget:([^:]+):\d+$/];

function scopeOf(rest: string, readers: ReadonlySet<string>): Scope {
  const id = OWNER_PATTERNS.map((p) => p.exec(rest)?.[1]).find((x) => x !== undefined);
  if (id === LIGHT_READER) return 'light';
  return id !== undefined && readers.has(id) ? 'reader' : 'shared';
}

/** Keys of one family and scope. */
interface Group {
  family: string;
  owner: string;
  scope: Scope;
  keys: number;
  bytes: number;
}

function groupKeys(keys: readonly KeySize[], readers: ReadonlySet<string>): Group[] {
  const groups = new Map<string, Group>();
  for (const k of keys) {
    const family = keyFamilyOf(k.rest);
    const scope = scopeOf(k.rest, readers);
    const id = `${family?.name ?? '?'}|${scope}`;
    const g = groups.get(id) ?? {
      family: family?.name ?? `(no family) ${k.rest}`,
      owner: family?.owner ?? '?',
      scope,
      keys: 0,
      bytes: 0,
    };
    g.keys++;
    g.bytes += k.bytes;
    groups.set(id, g);
  }
  const order = { reader: 0, shared: 1, light: 2 };
  return [...groups.values()].sort((a, b) => order[a.scope] - order[b.scope] || b.bytes - a.bytes);
}

const largest = (keys: readonly KeySize[]) =>
  keys.reduce<KeySize | undefined>((m, k) => (m && m.bytes >= k.bytes ? m : k), undefined);
const sum = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0);
const bytesOf = (gs: readonly Group[]) => sum(gs.map((g) => g.bytes));

function fmtBytes(b: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  for (; Math.abs(b) >= 1024 && i < units.length - 1; i++) b /= 1024;
  return `${i === 0 ? b.toFixed(0) : b.toFixed(1)} ${units[i]}`;
}

function printReport(r: Report): void {
  const n = r.readers.size;
  const groups = groupKeys(r.keys, r.readers);
  const own = groups.filter((g) => g.scope === 'reader');
  const shared = groups.filter((g) => g.scope === 'shared');
  const row = (g: Group) => [
    g.family,
    g.owner,
    g.scope,
    fmtInt(g.keys),
    fmtInt(g.bytes),
    fmtInt(g.bytes / n),
    `${((100 * g.bytes) / bytesOf(own)).toFixed(1)} %`,
  ];
  const total = (what: string, gs: Group[]) => [
    what,
    '',
    '',
    fmtInt(sum(gs.map((g) => g.keys))),
    fmtInt(bytesOf(gs)),
    fmtInt(bytesOf(gs) / n),
    '',
  ];
  printTable(
    `Redis keys under the prefix after ${fmtInt(n)} sessions, by family (MEMORY USAGE SAMPLES 0; share = of the readers' own bytes)`,
    ['family', 'owner', 'scope', 'keys', 'total bytes', 'bytes/reader', 'share'],
    [
      ...own.map(row),
      ...shared.map((g) => row(g).slice(0, 6)),
      total("readers' own keys", own),
      total('shared keys, share per reader', shared),
      total('all (light reader excluded)', [...own, ...shared]),
    ],
  );
  printKeyNotes(r, own, shared);
  printCheckpointMove(r);
  printNodes(r);
  const pgPerDay = printPostgres(r);
  printProjection(bytesOf(own) / n, bytesOf(shared), pgPerDay);
}

function printKeyNotes(r: Report, own: Group[], shared: Group[]): void {
  const n = r.readers.size;
  const top = largest(r.keys);
  const topOwn = largest(r.keys.filter((k) => scopeOf(k.rest, r.readers) === 'reader'));
  const light = r.keys.filter((k) => scopeOf(k.rest, r.readers) === 'light');
  const lightFamilies = groupKeys(light, r.readers)
    .map((g) => `${g.family} ${fmtInt(g.bytes)}`)
    .join(', ');
  const statuses = [...r.statuses].map(([s, c]) => `${s}: ${fmtInt(c)}`).join(', ');
  printNotes(
    `per reader: ${fmtInt(bytesOf(own) / n)} B of its own keys (${fmtBytes(bytesOf(own) / n)}) + ${fmtInt(bytesOf(shared) / n)} B share of the shared keys = ${fmtInt(bytesOf([...own, ...shared]) / n)} B`,
    `largest key: ${top?.rest ?? '–'} ${fmtInt(top?.bytes ?? 0)} B; largest key of a reader: ${topOwn?.rest ?? '–'} ${fmtInt(topOwn?.bytes ?? 0)} B` +
      (Number.isFinite(r.topOwnLength)
        ? ` (a string of ${fmtInt(r.topOwnLength)} B: ×${((topOwn?.bytes ?? 0) / r.topOwnLength).toFixed(2)})`
        : ''),
    `light reader (one discover page of ${PAGE}): ${light.length} keys, ${fmtInt(sum(light.map((k) => k.bytes)))} B (${lightFamilies || 'none'})`,
    `sessions: ${fmtInt(n)} readers in ${(r.sessionMs / 1000).toFixed(1)} s` +
      (n < r.asked
        ? ` (the ${r.seconds.toFixed(0)} s bound stopped them after ${fmtInt(n)} of ${fmtInt(r.asked)})`
        : '') +
      `, ${CONCURRENCY} at a time, each ${SESSION.forYouPages} for-you pages (1 refresh + ${SESSION.forYouPages - 1} load_more), ` +
      `${SESSION.discoverPages} discover pages, ${SESSION.follows} follows + ${SESSION.followingReads} following reads, ${SESSION.views} views, ` +
      `${SESSION.notInterested} not-interested, limit ${PAGE}; catalog seeded in ${r.seedS.toFixed(1)} s; ${fmtInt(r.requests)} requests in all (${statuses})`,
    ...r.failures.map((f) => `failed: ${f}`),
  );
}

/** Per master: the prefix's keys and bytes, used memory and commands processed during the sessions; spread max/mean. */
function printNodes(r: Report): void {
  const n = r.readers.size;
  const cols = r.nodeNames.map((name, i) => {
    const mine = r.keys.filter((k) => k.node === i);
    const after = r.nodesAfter[i]!;
    const before = r.nodesBefore[i]!;
    return {
      name,
      keys: mine.length,
      bytes: sum(mine.map((k) => k.bytes)),
      used: after.usedMemory,
      usedDelta: after.usedMemory - before.usedMemory,
      commands: after.commands - before.commands,
    };
  });
  const rows = cols.map((c) => [
    c.name,
    fmtInt(c.keys),
    fmtInt(c.bytes),
    fmtInt(c.used),
    fmtInt(c.usedDelta),
    fmtInt(c.commands),
    (c.commands / n).toFixed(1),
  ]);
  if (cols.length > 1) {
    const spread = (f: (c: (typeof cols)[number]) => number) => {
      const xs = cols.map(f);
      return `×${(Math.max(...xs) / (sum(xs) / xs.length)).toFixed(2)}`;
    };
    rows.push([
      'spread max/mean',
      spread((c) => c.keys),
      spread((c) => c.bytes),
      spread((c) => c.used),
      spread((c) => c.usedDelta),
      spread((c) => c.commands),
      '',
    ]);
    rows.push([
      'all masters',
      fmtInt(sum(cols.map((c) => c.keys))),
      fmtInt(sum(cols.map((c) => c.bytes))),
      fmtInt(sum(cols.map((c) => c.used))),
      fmtInt(sum(cols.map((c) => c.usedDelta))),
      fmtInt(sum(cols.map((c) => c.commands))),
      (sum(cols.map((c) => c.commands)) / n).toFixed(1),
    ]);
  }
  printTable(
    `Per ${r.kind === 'cluster' ? 'master' : 'server'}: keys and bytes under the prefix; INFO used_memory after the sessions and its change, commands processed during them`,
    ['node', 'keys', 'bytes', 'used memory', 'Δ used memory', 'commands', 'commands/reader'],
    rows,
  );
  if (r.kind === 'standalone')
    printNotes('the standalone server is shared: used memory and commands count every client of it, not only this run');
}

function printProjection(ownPerReader: number, shared: number, pgPerDay: number): void {
  const rows = [1_000_000, 10_000_000].map((readers) => [
    fmtInt(readers),
    fmtBytes(ownPerReader * readers),
    fmtBytes(ownPerReader * readers + shared),
    fmtBytes(pgPerDay * readers),
  ]);
  printTable(
    'Projection (bytes per reader × readers)',
    ['active readers', "Redis: readers' own keys", '+ shared keys as measured', 'PostgreSQL a day'],
    rows,
  );
  printNotes(
    'shared keys are sized by the catalog and settings (seen day filters by FRESHET_SEEN_CAPACITY_PER_DAY, hot keys by the items viewed), ' +
      'not by readers: added once, not scaled; PostgreSQL: the readers × days tables, one session a reader a day',
  );
}

/** The families whose bytes a seen checkpoint changed (journals moved to PostgreSQL). */
function printCheckpointMove(r: Report): void {
  const n = r.readers.size;
  const before = new Map(groupKeys(r.keys, r.readers).map((g) => [`${g.family} (${g.scope})`, g.bytes]));
  const after = new Map(groupKeys(r.keysAfterCheckpoint, r.readers).map((g) => [`${g.family} (${g.scope})`, g.bytes]));
  const moved = [...new Set([...before.keys(), ...after.keys()])]
    .map((f) => [f, (after.get(f) ?? 0) - (before.get(f) ?? 0)] as const)
    .filter(([, d]) => Math.abs(d / n) >= 1)
    .map(([f, d]) => `${f} ${d > 0 ? '+' : ''}${fmtInt(d / n)} B/reader`);
  printNotes(`a seen checkpoint right after (journals to PostgreSQL) changed: ${moved.join(', ') || 'nothing'}`);
}

/** Tables that grow with readers × days, and those that grow once per reader. */
const PG_GROWTH: Record<string, string> = {
  reader_signals: 'readers × days',
  feedback: 'readers × days',
  engagements: 'readers × days',
  seen_checkpoint_log: 'readers × days',
  seen_checkpoints: 'readers',
  users: 'readers',
  follows: 'readers',
  reader_interests: 'readers',
};

/** Prints the PostgreSQL table; returns the bytes a reader adds a day (one session a day). */
function printPostgres(r: Report): number {
  const n = r.readers.size;
  const tables = [...r.pgAfter.keys()].filter((t) => r.pgAfter.get(t) !== r.pgBefore.get(t)).sort();
  const delta = (t: string) => r.pgAfter.get(t)! - (r.pgBefore.get(t) ?? 0);
  const rows = tables.map((t) => [
    t,
    PG_GROWTH[t] ?? 'catalog / other',
    fmtInt(r.pgBefore.get(t) ?? 0),
    fmtInt(r.pgAfter.get(t)!),
    fmtInt(delta(t)),
    fmtInt(delta(t) / n),
  ]);
  printTable(
    'PostgreSQL: pg_total_relation_size (table + indexes + TOAST) before and after the sessions',
    ['table', 'grows with', 'before', 'after', 'Δ bytes', 'Δ/reader'],
    rows,
  );
  const perDay = sum(tables.filter((t) => PG_GROWTH[t] === 'readers × days').map(delta)) / n;
  const once = sum(tables.filter((t) => PG_GROWTH[t] === 'readers').map(delta)) / n;
  printNotes(
    `PostgreSQL per reader per day (one session a day; reader_signals, feedback, engagements, seen_checkpoint_log): ${fmtInt(perDay)} B; ` +
      `per reader once (users, follows, seen_checkpoints): ${fmtInt(once)} B — sizes move by 8 KiB pages, so small tables read coarse`,
  );
  return perDay;
}

runIfMain(import.meta.url, run);
