/**
 * The long run of the HTTP fuzz (`npm run fuzz`): the generator and the judge of the bounded test
 * (test/http/fuzz.test.ts, shared in test/support/fuzz-requests.ts) over many more requests, on both
 * store pairs — the embedded default (PGlite in a temp folder + in-process stores) and PostgreSQL + Redis
 * (a fresh schema and key prefix). Every answer is judged: no 5xx, an envelope whose code matches its
 * status, documented status and body, no internal message, and every refused write re-read (the
 * tables it could reach are unchanged).
 *
 * Prints per pair: requests, elapsed, requests/s, status counts, refused writes re-read, problems (the
 * first five, with the request that caused each). Exits 1 when a problem was found.
 *
 * `npm run fuzz -- [--requests=20000] [--seed=N] [--pairs=embedded,redis]`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/compose/config.js';
import { buildApp } from '../src/server/app.js';
import { openFreshet } from '../src/compose/open.js';
import { openPglite, openPostgres, type Sql } from '../src/kernel/sql/sql.js';
import { loadOperations } from '../test/support/openapi.js';
import { fuzzRequests, fuzzSetupFor, runFuzz, statusFigures, type FuzzSetup } from '../test/support/fuzz-requests.js';
import { fmtInt, printTable } from './stats.js';
import {
  BENCH_DATABASE_URL,
  BENCH_REDIS_URL,
  type Cleanup,
  dropPrefix,
  dropSchema,
  openRedis,
  printTitle,
  runIfMain,
  uniquePrefix,
  uniqueSchema,
  withCleanup,
} from './support.js';

const SERVICE_KEY = 'fuzz-service-key-0123456789';
const SECRET = 'fuzz-secret-0123456789abcdef';
const BODY_LIMIT = 16_384;
const DIM = 8;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

/** One pair's app, seeded like the test's: three items, two users, one follow. */
async function openApp(pair: string, cleanup: Cleanup) {
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-fuzz-'));
  cleanup.add(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    LOG_LEVEL: 'silent',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: SECRET,
    FRESHET_BODY_LIMIT_BYTES: String(BODY_LIMIT),
    FRESHET_EMBEDDING_DIM: String(DIM),
    // the fuzz is one client sending as fast as it can: no rate limit in the way of what it checks
    FRESHET_RATE_READER: '0',
    FRESHET_RATE_READER_OTHER: '0',
    FRESHET_READER_CONCURRENCY: '0',
  };
  let sql: Sql;
  if (pair === 'redis') {
    const schema = uniqueSchema();
    cleanup.add(() => dropSchema(schema));
    const prefix = uniquePrefix('fuzz');
    const redis = openRedis();
    cleanup.add(async () => {
      await dropPrefix(redis, prefix);
      redis.disconnect();
    });
    env.FRESHET_REDIS_URL = BENCH_REDIS_URL;
    env.FRESHET_KEY_PREFIX = prefix;
    sql = await openPostgres(BENCH_DATABASE_URL, { schema });
  } else {
    sql = await openPglite(join(dataDir, 'pgdata'));
  }
  const f = await openFreshet(loadConfig(env), { sql, defaultMetrics: false });
  const app = await buildApp(f, { logger: false });
  await app.ready();
  cleanup.add(() => app.close());
  const svc = { authorization: `Bearer ${SERVICE_KEY}` };
  const now = Date.now();
  const item = (id: string, author: string, ageS: number) => ({
    id,
    author_id: author,
    title: `Item ${id}`,
    text: 'body',
    published_at: Math.floor(now / 1000) - ageS,
  });
  await app.inject({
    method: 'POST',
    url: '/v1/items',
    headers: svc,
    payload: [item('i1', 'a1', 1), item('i2', 'a2', 2), item('i3', 'a1', 3)],
  });
  for (const u of ['u1', 'u2']) await app.inject({ method: 'PUT', url: `/v1/users/${u}`, headers: svc });
  await app.inject({ method: 'PUT', url: '/v1/users/u1/following/a1', headers: svc });
  return { app, sql, now };
}

function setupFor(now: number): Promise<FuzzSetup> {
  return fuzzSetupFor(now, { serviceKey: SERVICE_KEY, secret: SECRET, bodyLimit: BODY_LIMIT, embeddingDim: DIM });
}

runIfMain(import.meta.url, async () => {
  const requests = Number(arg('requests', '20000'));
  const seed = Number(arg('seed', String(Date.now() % 1_000_000_007)));
  const rows: string[][] = [];
  let failed = false;
  for (const pair of arg('pairs', 'embedded,redis').split(',')) {
    await withCleanup(async (cleanup) => {
      printTitle(`fuzz: ${pair === 'redis' ? 'PostgreSQL + Redis' : 'embedded default (PGlite + in-process)'}`);
      const { app, sql, now } = await openApp(pair, cleanup);
      const ops = await loadOperations(app);
      const list = fuzzRequests(ops, await setupFor(now), requests, seed);
      const r = await runFuzz(app, sql, list);
      for (const p of r.problems.slice(0, 5)) console.log(`  problem: ${p}`);
      failed ||= r.problems.length > 0;
      rows.push([
        pair,
        fmtInt(requests),
        `${(r.ms / 1000).toFixed(1)} s`,
        fmtInt(Math.round(requests / (r.ms / 1000))),
        statusFigures(r.byStatus),
        fmtInt(r.refusedWrites),
        String(r.problems.length),
      ]);
    });
  }
  printTable(
    `HTTP fuzz, seed ${seed}: every operation of the OpenAPI document, JSON nested up to the 16 KiB body limit`,
    ['pair', 'requests', 'elapsed', 'req/s', 'by status', 'refused writes re-read', 'problems'],
    rows,
  );
  if (failed) throw new Error('the fuzz found problems (above)');
});
