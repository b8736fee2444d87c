/**
 * Hot ranking benchmark (design note 2), on PostgreSQL + Redis on loopback, all in one run:
 *
 * (a) accepted views per second at 50 concurrent callers, three ways, each view by a distinct visitor
 *     (so every one is counted) of one of 1,000 registered items:
 *     - bare `EVALSHA` of the view script (hotView-9) with keys and arguments built inline — the floor;
 *     - the service API (`HotRanking.recordView`: id checks, key building, the same EVALSHA, verdict
 *       mapping, metrics) — target ≥ 60 % of bare;
 *     - HTTP `POST /v1/views` with the service key, from a separate load-generator process.
 *     Bare is measured before and after the other two, so drift shows.
 * (b) `GET /v1/hot?range=72h&limit=20` served from the cached snapshot (1,000 ranked items): latency
 *     through the service and over HTTP at 50 concurrent callers, and what one snapshot refresh costs.
 * (c) what the shard count costs: the store-wide reads of the maintenance and the snapshot — `top(1000)`
 *     (one ZREVRANGE per shard, merged), a rescoring pass, the per-checkpoint health check (`lostShards` +
 *     `priorLayout`) — on 1 shard (note 2's `{hot}`, the standalone default) and on 12 (the Cluster
 *     default), 1,000 items × 20 views each; and the re-shard of those 1,000 items from `{hot}` to 12
 *     shards through the PostgreSQL checkpoints (HotMaintenance.recover: last checkpoint of the old
 *     layout, restore, forget, purge).
 *
 * Prints figures; never asserts. `npx tsx bench/hot.ts` runs it alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/compose/config.js';
import type { HotSettings } from '../src/hot/wire.js';
import { openFreshet, type Freshet } from '../src/compose/open.js';
import { HOUR_MS, ManualClock } from '../src/kernel/clock.js';
import { budgetMinute } from '../src/hot/domain.js';
import { Keys } from '../src/kernel/redis/keys.js';
import { closeRedis, type RedisClient } from '../src/kernel/redis/client.js';
import { openPostgres } from '../src/kernel/sql/sql.js';
import { HOT_SCRIPTS, RedisHotCounters } from '../src/hot/adapters/redis-hot-counters.js';
import { HotMaintenance } from '../src/hot/maintenance.js';
import { hotRules } from '../src/hot/wire.js';
import type { HotCounters } from '../src/hot/hot-counters.js';
import { noHotMetrics } from '../src/hot/hot-metrics.js';
import { silentLogger } from '../src/kernel/observability.js';
import { buildApp } from '../src/server/app.js';
import {
  closedLoop,
  fmtInt,
  fmtMs,
  fmtPct,
  printNotes,
  printTable,
  throughput,
  timeLoop,
  type Summary,
} from './stats.js';
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
import { runLoad, type LoadSession } from './http-load.js';

const NOW = Date.UTC(2016, 8, 22, 12);
const ITEMS = 1_000;
const CONCURRENCY = 50;
const SECONDS = 6;
const MAX_VIEWS = 300_000;
const SERVICE_KEY = BENCH_SERVICE_KEY;
const SECRET = BENCH_SECRET;
const itemId = (i: number) => `hot_${i % ITEMS}`;

export async function run(): Promise<void> {
  await withCleanup(async (cleanup) => {
    printTitle('hot ranking: views/s at 50 callers (bare EVALSHA vs service vs HTTP), GET /v1/hot from cache');
    const { f, redis, keys } = await openStack(cleanup);
    const bare1 = await bareEvalsha(redis, keys, f, 'b1');
    const service = await serviceViews(f);
    const url = await listen(f, cleanup);
    const http = await httpViews(url);
    const bare2 = await bareEvalsha(redis, keys, f, 'b2');
    const bare = Math.max(throughput(bare1.s), throughput(bare2.s));
    printTable(
      '(a) accepted views per second, 50 concurrent callers, distinct visitors',
      ['path', 'views', 'counted', 'views/s', 'vs bare', 'p50 ms', 'p99 ms'],
      [
        row('bare EVALSHA hotView-9 (before)', bare1, bare),
        row('service HotRanking.recordView', service, bare),
        row('HTTP POST /v1/views (service key)', http, bare),
        row('bare EVALSHA hotView-9 (after)', bare2, bare),
      ],
    );
    printNotes(
      `"vs bare" divides by the faster of the two bare runs (${fmtInt(bare)}/s); target for the service path: ≥ 60 %.`,
      'Each view is one EVALSHA round trip whichever way it comes in; the service adds id checks, key building, verdict mapping and a Prometheus counter.',
      'HTTP latencies are client-side (a separate process on the same 2 cores), so they include JSON, Fastify and the loopback socket.',
    );
    await hotFromCache(f, url);
    await shardLayouts(f, redis);
  });
}

/** (c) the store-wide costs of 1 and 12 shards, and a re-shard from `{hot}` to 12 (see the module doc). */
async function shardLayouts(f: Freshet, redis: RedisClient): Promise<void> {
  const prefix = `${uniquePrefix('hotshards')}`;
  const rules = hotRules(f.config.hot);
  const layout = (shards: number) => new RedisHotCounters(redis, new Keys(prefix, 1, shards), rules);
  const maintenance = (c: HotCounters) =>
    new HotMaintenance(
      { counters: c, archive: f.hotArchive, metrics: noHotMetrics, log: silentLogger },
      { retentionMs: 0 },
    );
  const loop = { warmup: 3, iterations: 200, seconds: 4 };
  const rows: string[][] = [];
  const measure = async (shards: number, c: HotCounters) => {
    const m = maintenance(c);
    const top = await timeLoop(() => c.top(ITEMS), loop);
    const rescore = await timeLoop(() => m.rescore(NOW), { ...loop, iterations: 30 });
    const health = await timeLoop(async () => {
      await c.lostShards();
      await c.priorLayout();
    }, loop);
    for (const [what, t] of [
      ['top(1000): one ZREVRANGE per shard, merged', top],
      ['rescoring pass (1,000 ranked items)', rescore],
      ['checkpoint health check (lostShards + priorLayout)', health],
    ] as const)
      rows.push([`${shards} shard${shards > 1 ? 's' : ''}`, what, fmtInt(t.n), fmtMs(t.p50), fmtMs(t.p99)]);
  };
  const one = layout(1);
  await maintenance(one).recover(NOW);
  await redis.del(new Keys(prefix).hotLayout()); // as earlier versions left it: no layout recorded
  await one.register(range(ITEMS, (i) => ({ itemId: itemId(i), publishedAtMs: NOW - (i % 60) * HOUR_MS })));
  const views = range(ITEMS * 20, (n) => ({ itemId: itemId(n), visitorId: `sv_${n % 997}`, nowMs: NOW }));
  for (let i = 0; i < views.length; i += 500) await Promise.all(views.slice(i, i + 500).map((v) => one.view(v)));
  await maintenance(one).checkpoint(NOW);
  for (let i = 0; i < ITEMS; i += 500)
    await Promise.all(views.slice(i, i + 500).map((v) => one.view({ ...v, visitorId: 'late' })));
  await measure(1, one);
  const twelve = layout(12);
  const t0 = performance.now();
  const moved = await maintenance(twelve).recover(NOW);
  const reshardMs = performance.now() - t0;
  await measure(12, twelve);
  await dropPrefix(redis, prefix);
  printTable(
    '(c) store-wide costs by shard count, 1,000 items (ms)',
    ['layout', 'what', 'n', 'p50 ms', 'p99 ms'],
    rows,
  );
  printNotes(
    `re-shard {hot} → 12 shards of ${fmtInt(moved.restored)} items (1,000 checkpointed, views since the checkpoint on every one): ${fmtMs(reshardMs)} ms, once, at the first start or checkpoint of the new layout`,
    'the snapshot refresh reads top(1000) once per FRESHET_HOT_CACHE_REFRESH_S; the health check runs before every checkpoint; views cost the same on any layout (one EVALSHA on one shard)',
  );
}

interface Measured {
  s: Summary;
  counted: number;
}

function row(what: string, m: Measured, bare: number): string[] {
  return [
    what,
    fmtInt(m.s.n),
    fmtInt(m.counted),
    fmtInt(throughput(m.s)),
    fmtPct(throughput(m.s) / bare),
    fmtMs(m.s.p50),
    fmtMs(m.s.p99),
  ];
}

async function openStack(cleanup: Cleanup): Promise<{ f: Freshet; redis: RedisClient; keys: Keys }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-bench-hot-'));
  cleanup.add(() => rmSync(dataDir, { recursive: true, force: true }));
  const schema = uniqueSchema();
  cleanup.add(() => dropSchema(schema));
  const redis = openRedis();
  cleanup.add(() => closeRedis(redis));
  const keys = new Keys(uniquePrefix('hot'));
  cleanup.add(() => dropPrefix(redis, keys.prefix));
  const sql = await openPostgres(BENCH_DATABASE_URL, { schema });
  const env = {
    LOG_LEVEL: 'silent',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: SECRET,
    FRESHET_REDIS_URL: BENCH_REDIS_URL,
    FRESHET_KEY_PREFIX: keys.prefix,
  };
  const f = await openFreshet(loadConfig(env), { clock: new ManualClock(NOW), sql, defaultMetrics: false });
  cleanup.add(() => f.close());
  const items = range(ITEMS, (i) => ({
    id: itemId(i),
    authorId: 'bench',
    title: `Hot item ${i}`,
    text: '',
    url: null,
    tags: [],
    publishedAt: NOW - (i % 60) * HOUR_MS,
    popularity: 0,
  }));
  await f.content.upsertItems(items, NOW);
  await f.hot.resolve(
    items.map((i) => i.id),
    NOW,
  );
  return { f, redis, keys };
}

/**
 * The floor of a view: one EVALSHA of hotView-9 with inline keys and arguments on hot shard 0, with the
 * `hot` settings and the visitor-budget minute of `nowMs`. Loads the script, then answers a function that
 * sends the view of `id` by `visitor` and resolves to whether it was counted (reply 1).
 */
export async function bareHotView(
  redis: RedisClient,
  keys: Keys,
  hot: HotSettings,
  nowMs: number,
): Promise<(id: string, visitor: string) => Promise<boolean>> {
  const k = keys.hot(0);
  const { params: p, rateWindowMs, visitorBudgetPerMinute, retentionMs } = hot;
  const minute = budgetMinute(nowMs);
  const hotView = HOT_SCRIPTS.script('hotView');
  await redis.script('LOAD', hotView.source);
  return async (id, visitor) => {
    const keyList = [k.views(id), k.uv(id), k.score(), k.meta(id), k.rateMark(id, visitor)];
    keyList.push(k.budget(visitor, minute), k.suspicious(id), k.suspiciousTotal(), k.dirty());
    const args = [id, visitor, nowMs, p.alpha, p.beta, p.base, p.gamma, rateWindowMs, visitorBudgetPerMinute];
    const reply = (await redis.evalsha(hotView.sha, 9, ...keyList, ...args, '0', retentionMs)) as [number];
    return reply[0] === 1;
  };
}

/** The floor: {@link bareHotView}, 50 callers on one connection. */
async function bareEvalsha(redis: RedisClient, keys: Keys, f: Freshet, tag: string): Promise<Measured> {
  const view = await bareHotView(redis, keys, f.config.hot, NOW);
  let seq = 0;
  let counted = 0;
  const s = await closedLoop(
    async (_w, i) => {
      const n = seq++;
      if ((await view(itemId(n), `${tag}_${n}`)) && i >= 0) counted++;
    },
    { concurrency: CONCURRENCY, iterations: MAX_VIEWS, seconds: SECONDS, warmup: 20 },
  );
  return { s, counted };
}

async function serviceViews(f: Freshet): Promise<Measured> {
  let seq = 0;
  let counted = 0;
  const s = await closedLoop(
    async (_w, i) => {
      const n = seq++;
      const r = await f.hot.recordView({ itemId: itemId(n), visitorId: `svc_${n}`, nowMs: NOW });
      if (r.verdict === 'counted' && i >= 0) counted++;
    },
    { concurrency: CONCURRENCY, iterations: MAX_VIEWS, seconds: SECONDS, warmup: 20 },
  );
  return { s, counted };
}

async function listen(f: Freshet, cleanup: Cleanup): Promise<string> {
  const app = await buildApp(f, { logger: false, closeStores: false });
  cleanup.add(() => app.close());
  return app.listen({ port: 0, host: '127.0.0.1' });
}

async function httpViews(url: string): Promise<Measured> {
  const headers = { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-now': String(NOW) };
  const sessions: LoadSession[] = range(60_000, (n) => ({
    headers,
    request: { method: 'POST', path: '/v1/views', body: { item_id: itemId(n), visitor_id: `http_${n}` } },
    times: 1,
  }));
  const load = await runLoad({
    url,
    concurrency: CONCURRENCY,
    iterations: sessions.length,
    seconds: SECONDS,
    warmup: 5,
    sessions,
  });
  return { s: load.summary, counted: load.statuses['200'] ?? 0 };
}

/** (b) the cached ranking: service and HTTP latency, and the cost of one refresh. */
async function hotFromCache(f: Freshet, url: string): Promise<void> {
  const refresh = await timeLoop(() => f.hot.refresh(NOW), { warmup: 2, iterations: 20, seconds: 10 });
  const snap = await f.hot.snapshotAt(NOW);
  const service1 = await timeLoop(() => f.hot.top(72 * HOUR_MS, 20, NOW), {
    warmup: 100,
    iterations: 20_000,
    seconds: 3,
  });
  const service50 = await closedLoop(() => f.hot.top(72 * HOUR_MS, 20, NOW), {
    concurrency: CONCURRENCY,
    iterations: 50_000,
    seconds: 3,
    warmup: 10,
  });
  const headers = { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-now': String(NOW) };
  const get = { method: 'GET' as const, path: '/v1/hot?range=72h&limit=20' };
  // one session per caller: the load generator hands each session to one worker
  const http1 = await runLoad({
    url,
    concurrency: 1,
    iterations: 5_000,
    seconds: 3,
    warmup: 5,
    sessions: [{ headers, request: get, times: 5_000 }],
  });
  const http = await runLoad({
    url,
    concurrency: CONCURRENCY,
    iterations: 30_000,
    seconds: SECONDS,
    warmup: 5,
    sessions: range(CONCURRENCY, () => ({ headers, request: get, times: 600 })),
  });
  printTable(
    `(b) GET /v1/hot?range=72h&limit=20 from the cached snapshot (${snap.entries.length} ranked items)`,
    ['what', 'n', 'p50 ms', 'p99 ms', 'per second'],
    [
      [
        'service HotRanking.top, 1 caller',
        fmtInt(service1.n),
        fmtMs(service1.p50),
        fmtMs(service1.p99),
        fmtInt(throughput(service1)),
      ],
      [
        'service HotRanking.top, 50 callers',
        fmtInt(service50.n),
        fmtMs(service50.p50),
        fmtMs(service50.p99),
        fmtInt(throughput(service50)),
      ],
      [
        `HTTP, 1 caller (${JSON.stringify(http1.statuses)})`,
        fmtInt(http1.summary.n),
        fmtMs(http1.summary.p50),
        fmtMs(http1.summary.p99),
        fmtInt(throughput(http1.summary)),
      ],
      [
        `HTTP, 50 callers (${JSON.stringify(http.statuses)})`,
        fmtInt(http.summary.n),
        fmtMs(http.summary.p50),
        fmtMs(http.summary.p99),
        fmtInt(throughput(http.summary)),
      ],
      [
        'one snapshot refresh (top 1000 + counters + hydrate)',
        fmtInt(refresh.n),
        fmtMs(refresh.p50),
        fmtMs(refresh.p99),
        '',
      ],
    ],
  );
  printNotes(
    'A refresh runs at most once per FRESHET_HOT_CACHE_REFRESH_S (and in the background worker under `serve`), never per request.',
  );
}

runIfMain(import.meta.url, run);
