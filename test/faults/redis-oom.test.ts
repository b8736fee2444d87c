/**
 * Fault: Redis out of memory (issue 10 item 4). A redis-server of the test's own with a tiny
 * `maxmemory` under `noeviction` is filled until it refuses writes (and the limit then lowered below
 * what it holds, so no write fits). Goals: every write a request
 * makes (a view) answers 503 / 50301 with a message naming Redis and OOM, never a 500; reads still
 * answer; `/readyz` reports Redis not ready although it answers PING; once memory is freed the server
 * serves writes again by itself (recovery time measured).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { item } from '../support/app.js';
import { StatusTally, openFaultApp, printFigures, until, type FaultApp } from '../support/faults.js';
import { fillUntilOom, startRedisServer, type RedisServer } from '../support/redis-server.js';

const WRITES = 10;

let t: FaultApp;
let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer(['--maxmemory', '2mb', '--maxmemory-policy', 'noeviction']);
  t = await openFaultApp({ FRESHET_REDIS_URL: server.url });
  expect((await t.request({ method: 'POST', url: '/v1/items', payload: [item('m1', HOUR_MS)] })).status).toBe(200);
  await fillUntilOom(server.url, 'junk:');
});
afterAll(async () => {
  await t?.close();
  await server?.stop();
});

const view = (visitor: string) =>
  t.request({ method: 'POST', url: '/v1/views', payload: { item_id: 'm1', visitor_id: visitor } });

describe('Redis out of memory (maxmemory reached under noeviction)', () => {
  it('writes get 503 / 50301 naming Redis and OOM, reads answer, /readyz is 503 although Redis answers PING, and writes recover once memory is freed', async () => {
    const tally = new StatusTally();
    for (let i = 0; i < WRITES; i++) {
      const res = await view(`v${i}`);
      tally.add(res.status);
      expect(res.body).toEqual({ code: 50301, msg: 'Redis unavailable: out of memory (OOM)', data: null });
    }
    expect((await t.request({ method: 'GET', url: '/v1/items/m1' })).status).toBe(200);
    const ready = await t.request({ method: 'GET', url: '/readyz' });
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      code: 50301,
      data: { status: 'unavailable', stores: { redis: false, postgres: true } },
    });
    const admin = new Redis(server.url);
    try {
      expect(await admin.ping()).toBe('PONG');
      await admin.flushall(); // the operator frees memory and restores the limit
      await admin.config('SET', 'maxmemory', '2mb');
    } finally {
      admin.disconnect();
    }
    const recoveryMs = await until(async () => (await view('after')).status === 200, 5_000);
    expect((await t.request({ method: 'GET', url: '/readyz' })).status).toBe(200);
    printFigures('redis oom', {
      writes: WRITES,
      errors: tally.toString(),
      readyz: ready.status,
      readyz_ms: ready.ms,
      recovery_ms: recoveryMs,
    });
    expect(tally.serverErrorsBut(503)).toBe(0);
    expect(recoveryMs).toBeLessThan(1_000);
  });
});
