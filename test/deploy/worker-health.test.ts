/**
 * `freshet worker fanout --health-port` answers like `freshet serve` does, so compose's health checks and
 * Kubernetes' probes can watch the worker (compose.yaml, deploy/helm/freshet): `/healthz` 200 while it
 * runs, `/readyz` 200 naming the stores while they answer and 503 / 50301 naming Redis within ~1 s once
 * its Redis is gone; other paths 404 / 40401. A real worker process on PostgreSQL and a Redis of its own.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/kernel/sql/sql.js';
import { onJsonLines, spawnCli } from '../support/cli.js';
import { TEST_DATABASE_URL, uniquePrefix, uniqueSchema } from '../support/env.js';
import { type RedisServer, startRedisServer } from '../support/redis-server.js';

const schema = uniqueSchema();
const tmp = mkdtempSync(join(tmpdir(), 'freshet-worker-health-'));
let redis: RedisServer;
let worker: ChildProcess | undefined;

beforeAll(async () => {
  const sql = await openPostgres(TEST_DATABASE_URL, { schema }); // creates the schema
  await sql.close();
  redis = await startRedisServer();
});

afterAll(async () => {
  if (worker && worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  await redis?.stop();
  const sql = await openPostgres(TEST_DATABASE_URL);
  await sql.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await sql.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** GET `url` once: status and JSON body. */
async function get(url: string): Promise<{ status: number; body: { code: number; msg: string; data: unknown } }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: (await res.json()) as { code: number; msg: string; data: unknown } };
}

describe('freshet worker fanout --health-port', () => {
  it('answers /healthz and /readyz, and /readyz turns 503 naming Redis when Redis is gone', async () => {
    const env = {
      ...process.env,
      FRESHET_DATA_DIR: join(tmp, 'data'),
      FRESHET_SERVICE_KEY: 'k'.repeat(24),
      FRESHET_SECRET: 's'.repeat(24),
      FRESHET_DATABASE_URL: `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      FRESHET_REDIS_URL: redis.url,
      FRESHET_KEY_PREFIX: uniquePrefix(),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    };
    worker = spawnCli(['worker', 'fanout', '--health-port', '0'], env, ['ignore', 'pipe', 'inherit']);
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the worker did not say it runs within 45 s')), 45_000);
      onJsonLines<{ msg?: string; health?: string }>(worker!.stdout!, (e) => {
        if (e.msg === 'fan-out worker running' && e.health) {
          clearTimeout(timer);
          resolve(e.health);
        }
      });
    });
    expect(await get(`${url}/healthz`)).toEqual({
      status: 200,
      body: { code: 0, msg: 'success', data: { status: 'ok' } },
    });
    expect(await get(`${url}/readyz`)).toEqual({
      status: 200,
      body: { code: 0, msg: 'success', data: { status: 'ready', stores: { postgres: true, redis: true } } },
    });
    expect((await get(`${url}/metrics`)).body.code).toBe(40401);

    await redis.stop();
    const started = Date.now();
    const down = await get(`${url}/readyz`);
    expect(Date.now() - started).toBeLessThan(3_000); // the probe's deadline (FRESHET_REDIS_TIMEOUT_MS 1 s)
    expect(down).toMatchObject({
      status: 503,
      body: { code: 50301, data: { status: 'unavailable', stores: { postgres: true, redis: false } } },
    });
    expect(down.body.msg).toContain('redis');
  }, 90_000);
});
