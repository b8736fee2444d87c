/**
 * Faults of PostgreSQL, on a database of the test's own that the app opens the way `freshet serve`
 * does (its request pool with the 1 s deadline, its job pool beside it):
 * - refusing connections: the database stops accepting them (`ALLOW_CONNECTIONS false`) and its
 *   sessions are ended (`pg_terminate_backend`): every request that needs PostgreSQL answers 503 /
 *   50301 naming PostgreSQL within ~the deadline, `/readyz` 503; once connections are allowed again
 *   the server serves by itself (recovery time measured);
 * - a stalled statement: a session holds the items table (`LOCK … ACCESS EXCLUSIVE`), so reads of
 *   items wait: each answers 503 / 50301 at the statement deadline (`statement_timeout`, 57014) instead
 *   of waiting for the lock; `/readyz` stays 200 (the server answers); released, reads answer at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { item } from '../support/app.js';
import {
  DEFAULT_DEADLINES,
  StatusTally,
  adminQuery,
  openFaultApp,
  ownDatabase,
  printFigures,
  until,
  type FaultApp,
} from '../support/faults.js';

/** How much later than the deadline an answer may come on a loaded 2-core machine, ms. */
const SLACK_MS = 1_000;

let db: Awaited<ReturnType<typeof ownDatabase>>;
let t: FaultApp;
beforeAll(async () => {
  db = await ownDatabase();
  t = await openFaultApp({ FRESHET_DATABASE_URL: db.url });
  const res = await t.request({
    method: 'POST',
    url: '/v1/items',
    payload: Array.from({ length: 20 }, (_, i) => item(`p${i}`, i * HOUR_MS)),
  });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => undefined);
  await t?.close();
  await db?.drop();
});

/** What readers and the service do that needs PostgreSQL, at once. */
function round(i: number) {
  return [
    t.request({ method: 'GET', url: `/v1/items/p${i % 20}` }),
    t.request({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: { action: 'load_more', limit: 5 },
      headers: { 'x-freshet-reader': `reader_${i}` },
    }),
    t.request({ method: 'POST', url: '/v1/items', payload: [item(`q${i}`, 0)] }),
  ];
}

describe('PostgreSQL refusing connections (ALLOW_CONNECTIONS false, sessions ended)', () => {
  it('answers 503 / 50301 naming PostgreSQL within the deadline, /readyz 503, and recovers by itself', async () => {
    expect((await Promise.all(round(100))).map((r) => r.status)).toEqual([200, 200, 200]);
    await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
    await adminQuery(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [db.name],
    );
    const tally = new StatusTally();
    const latencies: number[] = [];
    const reasons = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const [answers, ready] = await Promise.all([Promise.all(round(i)), t.request({ method: 'GET', url: '/readyz' })]);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ code: 50301, data: { stores: { postgres: false } } });
      latencies.push(ready.ms);
      for (const a of answers) {
        tally.add(a.status);
        latencies.push(a.ms);
        expect(a.body).toMatchObject({ code: 50301, data: null });
        expect(a.msg).toMatch(/^PostgreSQL unavailable: /);
        reasons.add(a.msg);
      }
    }
    await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    const recoveryMs = await until(
      async () => (await t.request({ method: 'GET', url: '/v1/items/p1' })).status === 200,
      10_000,
    );
    expect((await t.request({ method: 'GET', url: '/readyz' })).status).toBe(200);
    const maxMs = Math.max(...latencies);
    printFigures('postgres refusing', {
      requests: latencies.length,
      errors: tally.toString(),
      max_ms: maxMs,
      recovery_ms: recoveryMs,
      reasons: [...reasons].join(' | '),
    });
    expect(tally.serverErrorsBut(503)).toBe(0);
    expect(maxMs).toBeLessThan(DEFAULT_DEADLINES.sqlMs + SLACK_MS);
    expect(recoveryMs).toBeLessThan(1_000);
  });
});

describe('a statement stalled behind a lock', () => {
  it('answers 503 / 50301 at the statement deadline, /readyz stays 200, and answers at once when the lock goes', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    const tally = new StatusTally();
    const latencies: number[] = [];
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE items IN ACCESS EXCLUSIVE MODE');
      for (let i = 0; i < 3; i++) {
        const [a, b, ready] = await Promise.all([
          t.request({ method: 'GET', url: `/v1/items/p${i}` }),
          t.request({
            method: 'POST',
            url: '/v1/feeds/for-you',
            payload: { action: 'load_more', limit: 5 },
            headers: { 'x-freshet-reader': `lock_${i}` },
          }),
          t.request({ method: 'GET', url: '/readyz' }),
        ]);
        expect(ready.status).toBe(200);
        for (const r of [a!, b!]) {
          tally.add(r.status);
          latencies.push(r.ms);
          expect(r.body).toEqual({
            code: 50301,
            msg: 'PostgreSQL unavailable: no answer within the deadline (57014 statement_timeout)',
            data: null,
          });
        }
      }
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
    const recoveryMs = await until(
      async () => (await t.request({ method: 'GET', url: '/v1/items/p1' })).status === 200,
      5_000,
    );
    const maxMs = Math.max(...latencies);
    printFigures('postgres stalled statement', {
      requests: latencies.length,
      errors: tally.toString(),
      min_ms: Math.min(...latencies),
      max_ms: maxMs,
      deadline_ms: DEFAULT_DEADLINES.sqlMs,
      recovery_ms: recoveryMs,
    });
    expect(Math.min(...latencies)).toBeGreaterThanOrEqual(DEFAULT_DEADLINES.sqlMs * 0.9); // it did wait for the deadline
    expect(maxMs).toBeLessThan(DEFAULT_DEADLINES.sqlMs + SLACK_MS);
    expect(recoveryMs).toBeLessThan(500);
  });
});
