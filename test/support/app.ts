/**
 * Test harness: a wired Freshet + HTTP app on real stores — PGlite or the PostgreSQL server (one
 * schema per app), in-process or Redis hot stores (one key prefix per app) — on a manual clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../src/compose/config.js';
import { openFreshet, type Freshet, type OpenOptions } from '../../src/compose/open.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { buildApp } from '../../src/server/app.js';
import { mintReaderToken } from '../../src/kernel/http/tokens.js';
import { FreshetClient, type FreshetClientOptions } from '../../src/client/index.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniquePrefix, uniqueSchema } from './env.js';
import { deleteByPrefix } from './redis.js';
import { openTestPglite, seedPgliteDataDir } from './pglite.js';

export const SERVICE_KEY = 'test-service-key-0123456789';
const SECRET = 'test-secret-0123456789abcdef';
/** 2026-03-06 12:00 UTC, the day of note 1's example key. */
export const T0 = Date.UTC(2026, 2, 6, 12, 0, 0);

export interface TestApp {
  app: FastifyInstance;
  f: Freshet;
  clock: ManualClock;
  config: Config;
  /** The PostgreSQL schema of this app (`db: 'postgres'` only). */
  schema?: string;
  /** The app's SQL store (PGlite, or the server under `schema`): tests read the truth through it. */
  sql: Sql;
  /**
   * A `freshet-engine/client` on this app through `app.inject` (no port): the service key unless `token` is
   * given; `reader`/`now` as in FreshetClientOptions.
   */
  client(opts?: Partial<FreshetClientOptions>): FreshetClient;
  /** A reader token for `reader`, valid for `ttlS` seconds of wall time. */
  token(reader: string, ttlS?: number): Promise<string>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  hot?: 'memory' | 'redis';
  db?: 'pglite' | 'postgres';
  env?: Record<string, string>;
  /** Ranking hooks for `openFreshet` (docs/library.md "Ranking hooks"). */
  ranking?: OpenOptions['ranking'];
}

export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-test-'));
  const prefix = uniquePrefix();
  const env: Record<string, string> = {
    LOG_LEVEL: process.env.FRESHET_TEST_LOG_LEVEL ?? 'silent',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: SECRET,
    FRESHET_KEY_PREFIX: prefix,
    FRESHET_SEEN_CAPACITY_PER_DAY: '10000',
    // a busy shared machine can hold the event loop past 1 s: the request deadline is the fault suite's
    // subject (test/faults/), not every test's
    FRESHET_REDIS_TIMEOUT_MS: '5000',
    ...(opts.hot === 'redis' ? { FRESHET_REDIS_URL: TEST_REDIS_URL } : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const schema = uniqueSchema();
  const sql = opts.db === 'postgres' ? await openPostgres(TEST_DATABASE_URL, { schema }) : await openTestPglite();
  const clock = new ManualClock(T0);
  const f = await openFreshet(config, { clock, sql, defaultMetrics: false, ranking: opts.ranking });
  const app = await buildApp(f);
  await app.ready();
  return {
    app,
    f,
    clock,
    config,
    sql,
    ...(opts.db === 'postgres' ? { schema } : {}),
    token: (reader, ttlS = 3600) => mintReaderToken(SECRET, reader, ttlS),
    client: (o = {}) =>
      new FreshetClient({
        baseUrl: 'http://inject',
        fetch: injectFetch(app),
        ...(o.token ? {} : { serviceKey: SERVICE_KEY }),
        ...o,
      }),
    close: async () => {
      await app.close();
      if (opts.db === 'postgres') {
        const admin = await openPostgres(TEST_DATABASE_URL);
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.close();
      }
      if (opts.hot === 'redis') await dropPrefix(prefix);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A `fetch` that answers through Fastify's `inject` (the whole request path — hooks, validation,
 * serialization — without a socket), so the typed client drives tests that have no listening port.
 */
export function injectFetch(app: FastifyInstance): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const method = (init?.method ?? 'GET') as 'GET';
    const res = await app.inject({
      method,
      url: url.pathname + url.search,
      headers,
      ...(init?.body != null ? { payload: String(init.body) } : {}),
    });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers))
      if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : String(v));
    return new Response(res.statusCode === 204 ? null : new Uint8Array(res.rawPayload), {
      status: res.statusCode,
      headers: out,
    });
  };
}

/** Deletes every key under a prefix (on its own short-lived connection; see `deleteByPrefix`). */
export async function dropPrefix(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    await deleteByPrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

/** A synthetic item published `ageMs` before `T0` (JSON API shape). */
export function item(id: string, ageMs: number, extra: Record<string, unknown> = {}) {
  return {
    id,
    author_id: 'author_1',
    title: `Item ${id}`,
    text: 'body',
    published_at: Math.floor((T0 - ageMs) / 1000),
    ...extra,
  };
}

/**
 * The embedded default (PGlite + in-process stores) in a temp data folder of its own, for restart
 * tests: `open()` opens Freshet on it (a fresh process each call, virtual clock at T0); the folder is
 * removed after the test file (vitest `afterAll`). `extra`: more environment on top of the defaults.
 * The folder starts with a migrated database (`seedPgliteDataDir`): what a restart keeps is the point.
 */
export function embeddedDataDir(extra: Record<string, string> = {}): { dataDir: string; open(): Promise<Freshet> } {
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-embedded-'));
  seedPgliteDataDir(dataDir);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: 'restart-service-key-0123456789',
    FRESHET_SECRET: 'restart-secret-0123456789abcdef',
    FRESHET_SEEN_CAPACITY_PER_DAY: '10000',
    ...extra,
  });
  return { dataDir, open: () => openFreshet(config, { clock: new ManualClock(T0), defaultMetrics: false }) };
}
