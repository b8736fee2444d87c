/**
 * Shared pieces of the fault suite (test/faults/): a database of a test's own on the PostgreSQL
 * server, the app opened the way `freshet serve` opens it (its own pools and clients with the
 * configured deadlines, not a test's pool), requests timed one by one, and the one summary line of
 * figures each test prints (`[faults] <name>: key=value …`, collected into docs/operations.md "Faults").
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/compose/config.js';
import { openFreshet, type Freshet } from '../../src/compose/open.js';
import { buildApp } from '../../src/server/app.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { SERVICE_KEY, T0 } from './app.js';
import { TEST_DATABASE_URL, uniquePrefix } from './env.js';
import { seedPgliteDataDir } from './pglite.js';

/** The deadlines a server runs with when nothing is configured (the suite checks the defaults). */
export const DEFAULT_DEADLINES = loadConfig({}).deadlines;

/** The test server's URL on another database. */
export function databaseUrl(database: string): string {
  const u = new URL(TEST_DATABASE_URL);
  u.pathname = `/${database}`;
  return u.toString();
}

/** A database of the test's own (`freshet_fault_<hex>`), dropped by `drop()` (its sessions ended first). */
export async function ownDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `freshet_fault_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  return {
    name,
    url: databaseUrl(name),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined),
  };
}

/** Runs one statement on the test server's `test` database, on a connection of its own. */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string,
  params: unknown[] = [],
): Promise<R[]> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    return (await admin.query<R>(text, params)).rows;
  } finally {
    await admin.end();
  }
}

/** An app opened like `freshet serve` opens it. */
export interface FaultApp {
  app: FastifyInstance;
  f: Freshet;
  config: Config;
  clock: ManualClock;
  /** A request with the service key (and `X-Freshet-Now` = the clock). */
  request(opts: InjectOptions): Promise<{
    status: number;
    code: number;
    msg: string;
    ms: number;
    body: { code: number; msg: string; data: unknown };
  }>;
  close(): Promise<void>;
}

/**
 * Opens Freshet from `env` (on top of the test defaults: silent log, a fresh key prefix and data folder
 * with a migrated embedded database unless `FRESHET_DATABASE_URL` is set) and its HTTP app.
 */
export async function openFaultApp(env: Record<string, string>): Promise<FaultApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-fault-'));
  if (!env.FRESHET_DATABASE_URL) seedPgliteDataDir(dataDir);
  const config = loadConfig({
    LOG_LEVEL: process.env.FRESHET_TEST_LOG_LEVEL ?? 'silent',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: 'fault-secret-0123456789abcdef',
    FRESHET_KEY_PREFIX: uniquePrefix(),
    FRESHET_SEEN_CAPACITY_PER_DAY: '10000',
    FRESHET_READER_SEEN_CAPACITY: '1000',
    ...env,
  });
  const clock = new ManualClock(T0);
  const f = await openFreshet(config, { clock, defaultMetrics: false });
  const app = await buildApp(f);
  await app.ready();
  return {
    app,
    f,
    config,
    clock,
    request: async (opts) => {
      const started = performance.now();
      const res = await app.inject({
        ...opts,
        headers: { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-now': String(clock.now()), ...opts.headers },
      });
      const ms = performance.now() - started;
      const body = res.json() as { code: number; msg: string; data: unknown };
      return { status: res.statusCode, code: body.code, msg: body.msg, ms, body };
    },
    close: async () => {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Counts answers by HTTP status (`{"200": 12, "503": 4}`). */
export class StatusTally {
  readonly counts: Record<string, number> = {};
  add(status: number): void {
    this.counts[status] = (this.counts[status] ?? 0) + 1;
  }
  /** Answers with a status ≥ 500 other than `allowed`. */
  serverErrorsBut(allowed: number): number {
    return Object.entries(this.counts).reduce(
      (n, [s, c]) => (Number(s) >= 500 && Number(s) !== allowed ? n + c : n),
      0,
    );
  }
  toString(): string {
    return Object.entries(this.counts)
      .map(([s, c]) => `${s}×${c}`)
      .join(',');
  }
}

/** Prints a test's figures as one line: `[faults] <name>: k=v k=v`. */
export function printFigures(name: string, figures: Record<string, string | number | boolean>): void {
  const show = (v: string | number | boolean) =>
    typeof v === 'number' && !Number.isInteger(v)
      ? v.toFixed(0)
      : typeof v === 'string' && /\s/.test(v)
        ? JSON.stringify(v)
        : String(v);
  const parts = Object.entries(figures).map(([k, v]) => `${k}=${show(v)}`);
  console.log(`[faults] ${name}: ${parts.join(' ')}`);
}

/**
 * Calls `attempt` until it returns true or `timeoutMs` passes (no fixed sleep: it polls every `everyMs`).
 * @returns the ms it took. @throws Error at the deadline.
 */
export async function until(attempt: () => Promise<boolean>, timeoutMs: number, everyMs = 20): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await attempt()) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
