/**
 * Noisy neighbour (issue 21.5): how much one reader hammering `GET /v1/feeds/discover?limit=100` slows
 * another reader's for-you `load_more`, with the edge's per-reader limits off and on, in the same run
 * against the same stores.
 *
 * Per store pair (the embedded default — PGlite + in-process stores — and PostgreSQL + Redis), one
 * Freshet with 4,000 items by 200 authors over the last day; two apps over it on loopback ports, one
 * with `FRESHET_RATE_READER=0, FRESHET_READER_CONCURRENCY=0` (no limit) and one with the defaults (30
 * requests per 10 s, 2 pages in flight). For each app and for 8 and 32 concurrent hammering requests
 * (closed loop, one reader token, a child process: bench/http-load.ts), the victim — another reader,
 * one connection, back to back, 300 readers in turn (each ≤ 25 pages: within the rate budget, as scrolling
 * readers are) — run `load_more` of 20 for the phase's seconds; the baseline is the victims alone. Printed: victim p50 / p99 / max and its ratio to the baseline, the hammer's answers by
 * status. Each phase starts on a fresh rate window (a new hammering reader).
 *
 * `npx tsx bench/noisy-neighbour.ts [--pairs=embedded,redis] [--seconds=20]`. Prints figures; never asserts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/compose/config.js';
import { buildApp } from '../src/server/app.js';
import type { EdgeSettings } from '../src/server/limits.js';
import { openFreshet, type Freshet } from '../src/compose/open.js';
import { mintReaderToken } from '../src/kernel/http/tokens.js';
import { openPglite, openPostgres } from '../src/kernel/sql/sql.js';
import { runLoad, type LoadResult } from './http-load.js';
import { fmtMs, fmtRatio, printTable } from './stats.js';
import {
  BENCH_DATABASE_URL,
  BENCH_REDIS_URL,
  type Cleanup,
  dropPrefix,
  dropSchema,
  openRedis,
  printTitle,
  prng,
  runIfMain,
  uniquePrefix,
  uniqueSchema,
  withCleanup,
  BENCH_SERVICE_KEY,
  BENCH_SECRET,
} from './support.js';

const SERVICE_KEY = BENCH_SERVICE_KEY;
const SECRET = BENCH_SECRET;
const ITEMS = 4000;
const AUTHORS = 200;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

/** Opens Freshet on one store pair and publishes the catalogue. */
async function openPair(pair: string, cleanup: Cleanup): Promise<Freshet> {
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-bench-'));
  cleanup.add(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    LOG_LEVEL: 'silent',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: SECRET,
  };
  let f: Freshet;
  if (pair === 'redis') {
    const schema = uniqueSchema();
    cleanup.add(() => dropSchema(schema));
    const prefix = uniquePrefix('noisy');
    const redis = openRedis();
    cleanup.add(async () => {
      await dropPrefix(redis, prefix);
      redis.disconnect();
    });
    const sql = await openPostgres(BENCH_DATABASE_URL, { schema });
    f = await openFreshet(loadConfig({ ...env, FRESHET_REDIS_URL: BENCH_REDIS_URL, FRESHET_KEY_PREFIX: prefix }), {
      sql,
      defaultMetrics: false,
    });
  } else {
    f = await openFreshet(loadConfig(env), { sql: await openPglite('memory://'), defaultMetrics: false });
  }
  cleanup.add(() => f.close());
  const rand = prng(21);
  const now = Date.now();
  for (let start = 0; start < ITEMS; start += 500) {
    await f.useCases.publishItems(
      Array.from({ length: 500 }, (_, k) => {
        const i = start + k;
        return {
          id: `n${i}`,
          authorId: `a${i % AUTHORS}`,
          title: `item ${i} about ${['rust', 'feeds', 'redis', 'bloom', 'postgres'][i % 5]}`,
          text: `words ${i} `.repeat(20),
          url: null,
          tags: [],
          publishedAt: now - Math.floor(rand() * 86_400_000),
          popularity: rand() * 10,
        };
      }),
      now,
    );
  }
  return f;
}

/** An app over `f` with `edge` limits, listening on a loopback port; its URL. */
async function serve(f: Freshet, edge: EdgeSettings, cleanup: Cleanup): Promise<string> {
  const app: FastifyInstance = await buildApp(
    { ...f, config: { ...f.config, edge } },
    { logger: false, closeStores: false },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  cleanup.add(() => app.close());
  const a = app.server.address();
  return `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
}

interface Phase {
  victim: LoadResult;
  hammer?: LoadResult;
}

let readers = 0;

/** Victims per phase: each reads at most {@link VICTIM_PAGES} pages, within any rate budget (a scrolling reader). */
const VICTIMS = 300;
const VICTIM_PAGES = 25;

/**
 * The victims' load_more for `seconds` (one connection, back to back, {@link VICTIMS} readers in turn,
 * each refreshed first, untimed), with `hammer` concurrent discover requests of another reader (0: alone).
 * (bench/http-load.ts hands each worker its own session: the hammer is `hammer` sessions of one token.)
 */
async function phase(url: string, hammer: number, seconds: number): Promise<Phase> {
  const victims = await Promise.all(
    Array.from({ length: VICTIMS }, async () => ({
      authorization: `Bearer ${await mintReaderToken(SECRET, `victim${readers++}`, 3600)}`,
    })),
  );
  const hammerHeaders = { authorization: `Bearer ${await mintReaderToken(SECRET, `hammer${readers++}`, 3600)}` };
  await runLoad({
    url,
    concurrency: 1,
    iterations: VICTIMS,
    seconds: 60,
    warmup: 0,
    sessions: victims.map((headers) => ({
      headers,
      request: { method: 'POST' as const, path: '/v1/feeds/for-you', body: { action: 'refresh' } },
      times: 1,
    })),
  });
  const victim = runLoad({
    url,
    concurrency: 1,
    iterations: VICTIMS * VICTIM_PAGES,
    seconds,
    warmup: 5,
    sessions: victims.map((headers) => ({
      headers,
      request: { method: 'POST' as const, path: '/v1/feeds/for-you', body: { action: 'load_more', limit: 20 } },
      times: VICTIM_PAGES,
    })),
  });
  const noisy =
    hammer === 0
      ? undefined
      : runLoad({
          url,
          concurrency: hammer,
          iterations: 10_000_000,
          seconds: seconds + 1,
          warmup: 1,
          sessions: Array.from({ length: hammer }, () => ({
            headers: hammerHeaders,
            request: { method: 'GET' as const, path: '/v1/feeds/discover?limit=100' },
            times: 10_000_000,
          })),
        });
  const [v, h] = await Promise.all([victim, noisy]);
  return { victim: v, ...(h ? { hammer: h } : {}) };
}

function statuses(r: LoadResult | undefined): string {
  if (!r) return '';
  return Object.entries(r.statuses)
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
}

async function runPair(pair: string, seconds: number): Promise<void> {
  await withCleanup(async (cleanup) => {
    printTitle(
      `noisy neighbour: ${pair === 'redis' ? 'PostgreSQL + Redis' : 'embedded default (PGlite + in-process)'}`,
    );
    const f = await openPair(pair, cleanup);
    const off: EdgeSettings = { ...f.config.edge, readerRequests: 0, readerConcurrency: 0 };
    const on: EdgeSettings = { ...f.config.edge };
    const urlOff = await serve(f, off, cleanup);
    const urlOn = await serve(f, on, cleanup);
    const base = await phase(urlOff, 0, seconds);
    const rows: string[][] = [
      [
        'victim alone',
        fmtMs(base.victim.summary.p50),
        fmtMs(base.victim.summary.p99),
        fmtMs(base.victim.summary.max),
        '×1.00',
        '×1.00',
        statuses(base.victim),
        '',
      ],
    ];
    for (const hammer of [8, 32]) {
      for (const [label, url] of [
        ['no limit', urlOff],
        [`limit (${on.readerRequests}/${on.rateWindowMs / 1000} s, ${on.readerConcurrency} in flight)`, urlOn],
      ] as const) {
        const p = await phase(url, hammer, seconds);
        const s = p.victim.summary;
        rows.push([
          `${hammer} hammering, ${label}`,
          fmtMs(s.p50),
          fmtMs(s.p99),
          fmtMs(s.max),
          fmtRatio(s.p50, base.victim.summary.p50),
          fmtRatio(s.p99, base.victim.summary.p99),
          statuses(p.victim),
          statuses(p.hammer),
        ]);
      }
    }
    printTable(
      `victim load_more (20) while one reader hammers discover?limit=100; ${seconds} s a phase, ${ITEMS} items`,
      ['phase', 'p50', 'p99', 'max', 'p50 / alone', 'p99 / alone', 'victim answers', 'hammer answers'],
      rows,
    );
  });
}

runIfMain(import.meta.url, async () => {
  const seconds = Number(arg('seconds', '20'));
  for (const pair of arg('pairs', 'embedded,redis').split(',')) await runPair(pair, seconds);
});
