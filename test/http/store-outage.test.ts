/**
 * A store that does not answer: `/readyz` names it with 503, feed requests answer 503 with code
 * 50301 (STORE_UNAVAILABLE) instead of hanging or a 500, and `/healthz` still answers. A store that
 * answers but cannot serve — PostgreSQL ending the request's backend — is a 503 naming the store too
 * (classified by the adapter); a bug of ours stays a 500. Redis out of memory, stalled or crashed,
 * PostgreSQL refusing connections or stalled: the fault suite, test/faults/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pg from 'pg';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { SERVICE_KEY, item, startTestApp, type TestApp } from '../support/app.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/env.js';

describe('Redis unreachable', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Port 1 on loopback: nothing listens there, connections are refused at once.
    t = await startTestApp({ hot: 'memory', env: { FRESHET_REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  afterAll(async () => t?.close());

  it('/readyz is 503 naming redis; /healthz is 200', async () => {
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ code: 50301, data: { stores: { postgres: true, redis: false } } });
    expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });

  it('a feed request gets 503 with code 50301', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: { action: 'load_more', limit: 5 },
      headers: { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-reader': 'alice' },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 50301, data: null });
  });
});

describe('PostgreSQL terminating the backend of a request (57P01)', () => {
  let t: TestApp;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  beforeAll(async () => {
    t = await startTestApp({ db: 'postgres' });
    await admin.connect();
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      payload: [item('p1', HOUR_MS)],
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
    });
    expect(res.statusCode).toBe(200);
  });
  afterAll(async () => {
    await admin.end();
    await t?.close();
  });

  it('gets 503 with code 50301 naming PostgreSQL, and the next request is served again', async () => {
    const get = () => t.app.inject({ url: '/v1/items/p1', headers: { authorization: `Bearer ${SERVICE_KEY}` } });
    // hold the items table so the request's query waits on a backend we can find, then end that backend
    const locker = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${t.schema}.items IN ACCESS EXCLUSIVE MODE`);
      const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const pending = get();
      let victims: number[] = [];
      for (let i = 0; i < 1000 && victims.length === 0; i++) {
        const { rows } = await admin.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
          [lockerPid],
        );
        victims = rows.map((r) => r.pid);
      }
      expect(victims.length).toBe(1);
      await admin.query('SELECT pg_terminate_backend($1)', [victims[0]]);
      const res = await pending;
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({
        code: 50301,
        msg: 'PostgreSQL unavailable: the server is shutting down (57P01 admin_shutdown)',
        data: null,
      });
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
    expect((await get()).statusCode).toBe(200);
  });
});

describe('a bug of ours is still a 500', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ hot: 'redis', db: 'postgres' });
  });
  afterAll(async () => t?.close());

  it('WRONGTYPE on our own key (a reader page cache that is not a list) → 500 with code 50001', async () => {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      await redis.set(new Keys(t.config.keyPrefix).feedCache('alice'), 'not a list');
    } finally {
      redis.disconnect();
    }
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: { action: 'load_more', limit: 5 },
      headers: { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-reader': 'alice' },
    });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ code: 50001, msg: 'internal error', data: null });
  });
});
