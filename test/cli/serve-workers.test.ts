/**
 * `freshet serve --workers 2` on PostgreSQL + Redis, end to end with real processes (src/cli/cluster.ts):
 * both workers answer on the one port (each worker's /metrics carries its `worker` label, and new
 * connections go to the workers in turn), a killed worker is replaced under its number while the other
 * keeps answering, and SIGTERM stops the primary and every worker cleanly (exit 0).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { openPostgres } from '../../src/kernel/sql/sql.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniquePrefix, uniqueSchema } from '../support/env.js';
import { deleteByPrefix } from '../support/redis.js';
import { servingWorkers } from '../../src/cli/serve.js';
import { onJsonLines, spawnCli } from '../support/cli.js';

const KEY = 'k'.repeat(24);
const schema = uniqueSchema();
const prefix = uniquePrefix();
const tmp = mkdtempSync(join(tmpdir(), 'freshet-workers-'));
let primary: ChildProcess | undefined;

beforeAll(async () => {
  const sql = await openPostgres(TEST_DATABASE_URL, { schema }); // creates the schema
  await sql.close();
});

afterAll(async () => {
  if (primary && primary.exitCode === null && primary.signalCode === null) primary.kill('SIGKILL');
  const sql = await openPostgres(TEST_DATABASE_URL);
  await sql.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await sql.close();
  const redis = new Redis(TEST_REDIS_URL);
  await deleteByPrefix(redis, prefix);
  redis.disconnect();
  rmSync(tmp, { recursive: true, force: true });
});

/** The log entries of the primary and its workers (stdout is a pipe: JSON lines). */
interface Entry {
  msg?: string;
  url?: string;
  worker?: number;
  workerPid?: number;
  code?: number;
}

function startPrimary(): { child: ChildProcess; entries: Entry[] } {
  const databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const env = {
    ...process.env,
    FRESHET_DATA_DIR: join(tmp, 'data'),
    FRESHET_SERVICE_KEY: KEY,
    FRESHET_SECRET: 's'.repeat(24),
    FRESHET_DATABASE_URL: databaseUrl,
    FRESHET_REDIS_URL: TEST_REDIS_URL,
    FRESHET_KEY_PREFIX: prefix,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
  };
  const child = spawnCli(['serve', '--workers', '2'], env, ['ignore', 'pipe', 'inherit']);
  const entries: Entry[] = [];
  onJsonLines<Entry>(child.stdout!, (entry) => entries.push(entry)); // other lines: not log lines
  return { child, entries };
}

/** Polls `found` every 50 ms until it returns a value, or fails after `ms`. */
async function until<T>(what: string, found: () => T | undefined | Promise<T | undefined>, ms = 45_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await found();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** GET on a new connection (so the primary hands it to the next worker); resolves with status and body. */
function get(url: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, { agent: false, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Which worker answered a /metrics scrape (its default label). */
async function workerOf(url: string): Promise<string> {
  const { status, body } = await get(url, '/metrics');
  expect(status).toBe(200);
  return /worker="(\d+)"/.exec(body)![1]!;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('freshet serve --workers 2 (PostgreSQL + Redis)', () => {
  it('answers from both workers, replaces a killed one, and stops cleanly on SIGTERM', async () => {
    const { child, entries } = startPrimary();
    primary = child;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await until(
      'the workers to listen',
      () => entries.find((e) => e.msg === 'freshet workers listening')?.url,
    );
    const started = () => entries.filter((e) => e.msg === 'worker started');
    expect(
      started()
        .map((e) => e.worker)
        .sort(),
    ).toEqual([1, 2]);

    // both workers answer on the one port
    const seen = new Set<string>();
    await until(
      'answers from both workers',
      async () => (seen.add(await workerOf(url)), seen.size === 2 ? true : undefined),
      10_000,
    );
    const health = await get(url, '/healthz');
    expect(JSON.parse(health.body)).toEqual({ code: 0, msg: 'success', data: { status: 'ok' } });

    // kill worker 2: worker 1 keeps answering while a new worker 2 starts, then both answer again
    const victim = started().find((e) => e.worker === 2)!.workerPid!;
    process.kill(victim, 'SIGKILL');
    await until('the primary to see the death', () =>
      entries.find((e) => e.msg === 'worker died; replacing it' && e.workerPid === victim),
    );
    let answered = 0;
    const replacement = await until('a new worker 2', async () => {
      const r = await get(url, '/healthz');
      expect(r.status).toBe(200);
      answered++;
      const again = started().filter((e) => e.worker === 2);
      const listening = entries.filter((e) => e.msg === 'freshet listening' && e.worker === 2).length;
      return again.length === 2 && listening === 2 ? again[1]!.workerPid : undefined;
    });
    expect(answered).toBeGreaterThan(0);
    expect(replacement).not.toBe(victim);
    expect(alive(victim)).toBe(false);
    seen.clear();
    await until(
      'answers from both workers again',
      async () => (seen.add(await workerOf(url)), seen.size === 2 ? true : undefined),
      10_000,
    );

    // SIGTERM: every worker closes gracefully, the primary exits 0
    const pids = [started().find((e) => e.worker === 1)!.workerPid!, replacement];
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(entries.filter((e) => e.msg === 'worker exited' && e.code === 0)).toHaveLength(2);
    for (const pid of pids) expect(alive(pid)).toBe(false);
  }, 90_000);
});

describe('how many processes serve', () => {
  const pgRedis = { databaseUrl: 'postgres://x', redisUrl: 'redis://x', workers: 0 };
  it('PostgreSQL + Redis: --workers, else FRESHET_WORKERS, else one per core', () => {
    expect(servingWorkers(pgRedis, 3, 8)).toEqual({ workers: 3, refused: false });
    expect(servingWorkers({ ...pgRedis, workers: 5 }, undefined, 8)).toEqual({ workers: 5, refused: false });
    expect(servingWorkers(pgRedis, undefined, 8)).toEqual({ workers: 8, refused: false });
  });
  it('the embedded default (or PostgreSQL without Redis) serves from one process, and says so only when more were asked', () => {
    expect(servingWorkers({ workers: 0 }, undefined, 8)).toEqual({ workers: 1, refused: false });
    expect(servingWorkers({ workers: 0 }, 2, 8)).toEqual({ workers: 1, refused: true });
    expect(servingWorkers({ workers: 4 }, undefined, 8)).toEqual({ workers: 1, refused: true });
    expect(servingWorkers({ databaseUrl: 'postgres://x', workers: 0 }, 2, 8)).toEqual({ workers: 1, refused: true });
    expect(servingWorkers({ workers: 0 }, 1, 8)).toEqual({ workers: 1, refused: false });
  });
});
