/**
 * Fault: a stalled Redis (issue 10 item 3). A redis-server of the test's own is stopped with SIGSTOP
 * for a few seconds — it keeps its connections and answers nothing — while requests arrive; then
 * SIGCONT. Goals, at the default deadlines: each request touching Redis answers 503 / 50301 naming
 * Redis within ~the request deadline (FRESHET_REDIS_TIMEOUT_MS, 1 s), never hangs for the stall and
 * never a 500; `/readyz` answers 503 within its deadline; after SIGCONT the server serves again by
 * itself, at once (the recovery time is measured and bounded).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { item } from '../support/app.js';
import { DEFAULT_DEADLINES, StatusTally, openFaultApp, printFigures, until, type FaultApp } from '../support/faults.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/** How much later than the deadline an answer may come on a loaded 2-core machine, ms. */
const SLACK_MS = 1_000;
const ROUNDS = 3;

let server: RedisServer;
let t: FaultApp;
beforeAll(async () => {
  server = await startRedisServer();
  t = await openFaultApp({ FRESHET_REDIS_URL: server.url });
  const res = await t.request({
    method: 'POST',
    url: '/v1/items',
    payload: Array.from({ length: 30 }, (_, i) => item(`s${i}`, i * HOUR_MS)),
  });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  server?.resume();
  await t?.close();
  await server?.stop();
});

/** One round of what readers and the service do, at once. */
function round(i: number) {
  const reader = { 'x-freshet-reader': `reader_${i}` };
  return [
    t.request({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: { action: 'load_more', limit: 5 },
      headers: reader,
    }),
    t.request({ method: 'POST', url: '/v1/views', payload: { item_id: 's1', visitor_id: `v${i}` } }),
    t.request({ method: 'GET', url: '/v1/feeds/following', headers: reader }),
    t.request({ method: 'POST', url: '/v1/items', payload: [item(`new${i}`, 0)] }),
  ];
}

describe('a Redis stalled by SIGSTOP for a few seconds', () => {
  it('answers 503 / 50301 naming Redis within the deadline, /readyz too, and recovers by itself after SIGCONT', async () => {
    const warm = await Promise.all(round(100));
    expect(warm.map((r) => r.status)).toEqual([200, 200, 200, 200]);

    const tally = new StatusTally();
    const latencies: number[] = [];
    const readyMs: number[] = [];
    server.pause();
    const stalledAt = performance.now();
    try {
      for (let i = 0; i < ROUNDS; i++) {
        const [answers, ready] = await Promise.all([
          Promise.all(round(i)),
          t.request({ method: 'GET', url: '/readyz' }),
        ]);
        expect(ready.status).toBe(503);
        expect(ready.body).toMatchObject({ code: 50301, data: { stores: { redis: false } } });
        readyMs.push(ready.ms);
        const [forYou, view, following, publish] = answers;
        for (const a of [forYou!, view!, following!]) {
          expect(a.status, a.msg).toBe(503);
          expect(a.body).toMatchObject({ code: 50301, data: null });
          expect(a.msg).toMatch(/^Redis unavailable: (command timed out|no connection)/);
        }
        // the item is committed to PostgreSQL; the hot and following steps are left to their sweeps
        expect(publish!.status).toBe(200);
        for (const a of answers) {
          tally.add(a.status);
          latencies.push(a.ms);
        }
      }
    } finally {
      server.resume();
    }
    const stallMs = performance.now() - stalledAt;
    const recoveryMs = await until(
      async () =>
        (
          await t.request({
            method: 'POST',
            url: '/v1/feeds/for-you',
            payload: { action: 'load_more', limit: 5 },
            headers: { 'x-freshet-reader': 'after' },
          })
        ).status === 200,
      10_000,
    );
    expect((await t.request({ method: 'GET', url: '/readyz' })).status).toBe(200);
    expect(
      (await t.request({ method: 'POST', url: '/v1/views', payload: { item_id: 's2', visitor_id: 'after' } })).status,
    ).toBe(200);

    const maxMs = Math.max(...latencies);
    printFigures('redis stall', {
      stall_ms: stallMs,
      requests: latencies.length,
      errors: tally.toString(),
      max_ms: maxMs,
      readyz_max_ms: Math.max(...readyMs),
      deadline_ms: DEFAULT_DEADLINES.redisMs,
      recovery_ms: recoveryMs,
    });
    expect(tally.serverErrorsBut(503)).toBe(0);
    expect(maxMs).toBeLessThan(DEFAULT_DEADLINES.redisMs + SLACK_MS);
    expect(Math.max(...readyMs)).toBeLessThan(DEFAULT_DEADLINES.redisMs + SLACK_MS);
    expect(recoveryMs).toBeLessThan(1_000);
  });
});
