/**
 * PostgreSQL failures are classified at the adapter (src/kernel/sql/sql.ts), on the real server: a
 * pool pointed at a closed port, a backend terminated mid-query (57P01), a database refusing
 * connections (55000 at FATAL), a statement past its deadline (statement_timeout), a server that
 * never answers (connect deadline) and a closed embedded database all throw STORE_UNAVAILABLE (HTTP 503,
 * 50301) naming PostgreSQL; a bug of ours (a syntax error, `currval` before `nextval`: 55000 at
 * ERROR) stays a plain error (HTTP 500).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { FreshetError } from '../../src/kernel/errors.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../support/env.js';
import { openTestPglite } from '../support/pglite.js';
import { freePort } from '../support/redis-server.js';

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => err as Error,
  );
}

function expectUnavailable(err: Error, reason: string | RegExp): void {
  expect(err).toBeInstanceOf(FreshetError);
  expect(err).toMatchObject({ name_: 'STORE_UNAVAILABLE', code: 50301, status: 503 });
  if (typeof reason === 'string') expect(err.message).toBe(`PostgreSQL unavailable: ${reason}`);
  else expect(err.message).toMatch(reason);
}

/** The test server's URL on another database. */
function urlOf(database: string): string {
  const u = new URL(TEST_DATABASE_URL);
  u.pathname = `/${database}`;
  return u.toString();
}

describe('PostgreSQL failures', () => {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  const schema = uniqueSchema();
  let sql: Sql;
  beforeAll(async () => {
    await admin.connect();
    sql = await openPostgres(TEST_DATABASE_URL, { schema, max: 1 });
  });
  afterAll(async () => {
    await sql?.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('a pool pointed at a closed port: STORE_UNAVAILABLE, connection refused', async () => {
    const u = new URL(TEST_DATABASE_URL);
    u.port = String(await freePort());
    expectUnavailable(await failure(openPostgres(u.toString())), 'cannot connect (ECONNREFUSED)');
  });

  it('a backend terminated mid-query (pg_terminate_backend: 57P01); the pool then reconnects', async () => {
    const pid = (await sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
    const sleeping = failure(sql.query('SELECT pg_sleep(30)'));
    // wait until the sleep runs on that backend, then end it from another connection
    for (let i = 0; i < 500; i++) {
      const { rows } = await admin.query(
        "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep%'",
        [pid],
      );
      if (rows.length > 0) break;
    }
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    const err = await sleeping;
    expectUnavailable(err, 'the server is shutting down (57P01 admin_shutdown)');
    expect((err as FreshetError).details).toMatchObject({ store: 'postgres', code: '57P01' });
    expect(await sql.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('a transaction whose session is ended (mid-statement, and between two statements): STORE_UNAVAILABLE, the process lives on, the pool reconnects', async () => {
    // A session ended while a transaction holds its client makes the pg client emit 'error'; with no
    // listener that is an uncaught exception — the whole process down (Vitest fails the run on it).
    const backendOf = async (tx: { query: Sql['query'] }) =>
      (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
    const gone = async (pid: number) => {
      for (let i = 0; i < 500; i++) {
        const { rows } = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
        if (rows.length === 0) return;
      }
      throw new Error(`backend ${pid} still there`);
    };
    const midStatement = await failure(
      sql.transaction(async (tx) => {
        const pid = await backendOf(tx);
        const sleeping = tx.query('SELECT pg_sleep(30)');
        sleeping.catch(() => undefined); // it fails while this waits for the admin query: handled here, returned below
        for (let i = 0; i < 500; i++) {
          const { rows } = await admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", [
            pid,
          ]);
          if (rows.length > 0) break;
        }
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        return sleeping;
      }),
    );
    expectUnavailable(midStatement, 'the server is shutting down (57P01 admin_shutdown)');
    const between = await failure(
      sql.transaction(async (tx) => {
        const pid = await backendOf(tx);
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        await gone(pid);
        await new Promise((resolve) => setImmediate(resolve)); // the socket's end has been read
        return tx.query('SELECT 1');
      }),
    );
    expect(between).toMatchObject({ name_: 'STORE_UNAVAILABLE', code: 50301 });
    expect(await sql.transaction((tx) => tx.query('SELECT 1 AS one'))).toEqual([{ one: 1 }]);
  });

  it('a database refusing connections (ALLOW_CONNECTIONS false: 55000 at FATAL)', async () => {
    const db = `freshet_refuse_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${db}`);
    try {
      await admin.query(`ALTER DATABASE ${db} ALLOW_CONNECTIONS false`);
      const err = await failure(openPostgres(urlOf(db)));
      expectUnavailable(err, 'the database is not accepting connections (55000)');
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${db}`);
    }
  });

  it('a bug of ours stays a plain error: a syntax error, and 55000 at ERROR (currval before nextval)', async () => {
    const syntax = await failure(sql.query('SELEC 1'));
    expect(syntax).not.toBeInstanceOf(FreshetError);
    expect(syntax).toMatchObject({ code: '42601' });
    await sql.exec('CREATE SEQUENCE IF NOT EXISTS s_currval');
    const state = await failure(sql.query("SELECT currval('s_currval')"));
    expect(state).not.toBeInstanceOf(FreshetError);
    expect(state).toMatchObject({ code: '55000', severity: 'ERROR' });
  });

  it("a deadline: the session carries statement_timeout beside the URL's own options; a statement past it is STORE_UNAVAILABLE", async () => {
    const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const timed = await openPostgres(url, { timeoutMs: 300, max: 1 });
    try {
      expect(await timed.query('SHOW statement_timeout')).toEqual([{ statement_timeout: '300ms' }]);
      expect((await timed.query<{ search_path: string }>('SHOW search_path'))[0]!.search_path).toBe(schema);
      const started = performance.now();
      expectUnavailable(
        await failure(timed.query('SELECT pg_sleep(5)')),
        'no answer within the deadline (57014 statement_timeout)',
      );
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(await timed.query('SELECT 1 AS one')).toEqual([{ one: 1 }]); // the session is still good
    } finally {
      await timed.close();
    }
  });

  it('relaxedQuery: its own sessions commit asynchronously with the same schema and deadline; the others stay synchronous', async () => {
    const timed = await openPostgres(TEST_DATABASE_URL, { schema, timeoutMs: 300, max: 1 });
    try {
      expect(await timed.relaxedQuery('SHOW synchronous_commit')).toEqual([{ synchronous_commit: 'off' }]);
      expect(await timed.query('SHOW synchronous_commit')).toEqual([{ synchronous_commit: 'on' }]);
      expect((await timed.relaxedQuery<{ search_path: string }>('SHOW search_path'))[0]!.search_path).toBe(schema);
      await timed.exec('CREATE TABLE IF NOT EXISTS relaxed_rows (n int PRIMARY KEY)');
      await timed.relaxedQuery('INSERT INTO relaxed_rows VALUES ($1), ($2) ON CONFLICT DO NOTHING', [1, 2]);
      expect(await timed.query('SELECT n FROM relaxed_rows ORDER BY n')).toEqual([{ n: 1 }, { n: 2 }]); // committed, seen by the others
      expectUnavailable(
        await failure(timed.relaxedQuery('SELECT pg_sleep(5)')),
        'no answer within the deadline (57014 statement_timeout)',
      );
    } finally {
      await timed.close(); // ends both pools
    }
    // closed before its first relaxed write: a late write (a group commit flushing after close) fails, as a
    // query does, instead of opening a new pool whose sessions would outlive the handle
    const late = await openPostgres(TEST_DATABASE_URL, { schema, max: 1 });
    await late.close();
    await expect(late.query('SELECT 1')).rejects.toThrow();
    await expect(late.relaxedQuery('SELECT 1')).rejects.toThrow();
    const pglite = await openTestPglite();
    try {
      await pglite.exec('CREATE TABLE relaxed_rows (n int)');
      await pglite.relaxedQuery('INSERT INTO relaxed_rows VALUES ($1)', [7]);
      expect(await pglite.query('SELECT n FROM relaxed_rows')).toEqual([{ n: 7 }]);
    } finally {
      await pglite.close();
    }
  });

  it('a server that accepts connections and never answers (a stalled PostgreSQL): STORE_UNAVAILABLE at the deadline', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket)); // accepts, answers nothing
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const u = new URL(TEST_DATABASE_URL);
    u.port = String((silent.address() as AddressInfo).port);
    const started = performance.now();
    try {
      expectUnavailable(
        await failure(openPostgres(u.toString(), { timeoutMs: 300 })),
        /^PostgreSQL unavailable: (connection timed out|no connection within the connect timeout)$/,
      );
      expect(performance.now() - started).toBeLessThan(3_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it('a closed embedded database: STORE_UNAVAILABLE naming PostgreSQL', async () => {
    const lite = await openTestPglite();
    await lite.close();
    expectUnavailable(await failure(lite.query('SELECT 1')), 'the embedded database is closed');
  });
});
