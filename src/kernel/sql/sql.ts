/**
 * One tiny SQL interface over two engines, so the PostgreSQL adapters have a single code path
 * (docs/architecture.md "Layout"): PGlite (PostgreSQL compiled to WebAssembly, in process — the embedded
 * default) and a PostgreSQL server through a `pg` pool.
 *
 * Differences the callers must not rely on, and how they are papered over:
 * - `bigint` columns come back as `number` from PGlite and as `string` from `pg`: callers
 *   convert with `Number(...)` (every bigint Freshet stores is an epoch-ms or a count < 2^53).
 * - Errors are classified here, at the adapter, never by the HTTP layer: both engines throw
 *   objects carrying the SQLSTATE in `code`; {@link mapSqlError} turns a server that cannot serve
 *   (shutting down, refusing connections, out of resources, unreachable) into `STORE_UNAVAILABLE`
 *   with a message naming PostgreSQL, and rejected values (SQLSTATE classes 22 "data exception"
 *   and 23 "integrity constraint violation") into `INVALID_INPUT`; a bug stays a plain error.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { FreshetError, fail } from '../errors.js';

/** Queries inside a transaction (same connection, `BEGIN` … `COMMIT`). */
export interface SqlTx {
  /** Runs one statement with `$1`-style parameters; resolves to its rows. */
  query<T>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs several `;`-separated statements without parameters. */
  exec(multiStatementSql: string): Promise<void>;
}

/** A database handle: PGlite or a `pg` pool, used identically. */
export interface Sql extends SqlTx {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs one statement, in a transaction of its own, on a session whose commits do not wait for their
   * WAL flush (`synchronous_commit = off`; PostgreSQL manual, "Asynchronous Commit"): one round trip,
   * where `transaction` + `SET LOCAL` takes four. A server crash may lose the last few hundred ms of
   * such commits (up to 3 × `wal_writer_delay`), never half of one. For writes whose loss costs little
   * (reader signals). On PGlite the same as `query`.
   */
  relaxedQuery<T>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws
   * (the error is rethrown, mapped by {@link mapSqlError}).
   */
  transaction<R>(fn: (tx: SqlTx) => Promise<R>): Promise<R>;
  /**
   * Releases the engine (PGlite flushes its data folder; the pool closes its connections).
   * Idempotent: later calls return the first call's promise.
   */
  close(): Promise<void>;
}

/**
 * SQLSTATEs meaning "the server cannot serve us now" at any severity, with the reason a client reads
 * (PostgreSQL manual, Appendix A "Error Codes").
 */
const UNAVAILABLE_STATES: ReadonlyMap<string, string> = new Map([
  ['57P01', 'the server is shutting down (57P01 admin_shutdown)'],
  ['57P02', 'the server crashed (57P02 crash_shutdown)'],
  ['57P03', 'the server is not accepting connections now (57P03 cannot_connect_now)'],
  ['57P04', 'the database was dropped (57P04 database_dropped)'],
  ['57P05', 'the session was closed for being idle (57P05 idle_session_timeout)'],
  ['57014', 'the query was canceled (57014 query_canceled)'],
  ['55000', 'the database is not accepting connections (55000)'],
  ['25006', 'the server is read-only (25006 read_only_sql_transaction)'],
  ['3D000', 'no such database (3D000)'],
  ['28000', 'the server refused the login (28000)'],
  ['28P01', 'the server refused the password (28P01)'],
]);

/** SQLSTATE classes of an unavailable server: connection exception, insufficient resources, system error. */
const UNAVAILABLE_CLASSES: ReadonlyMap<string, string> = new Map([
  ['08', 'connection failure'],
  ['53', 'the server is out of resources'],
  ['58', 'system error on the server'],
]);

/** Node socket errors seen when a server is down or unreachable. */
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** Messages of `pg` and PGlite for a connection they cannot use (they give these errors no SQLSTATE). */
const UNAVAILABLE_MESSAGES: readonly (readonly [string, string])[] = [
  ['Query read timeout', 'no answer within the deadline'],
  ['Connection terminated due to connection timeout', 'connection timed out'],
  ['Connection terminated', 'connection lost'],
  ['timeout exceeded when trying to connect', 'no connection within the connect timeout'],
  ['Client has encountered a connection error', 'connection lost'],
  ['Client was closed and is not queryable', 'connection closed'],
  ['Cannot use a pool after calling end', 'the pool is closed'],
  ['PGlite is closed', 'the embedded database is closed'],
];

/**
 * Why the database cannot serve this call, or null when the error is not an outage.
 * A FATAL (or PANIC) error always means one: PostgreSQL ends the session with it (55000 "database
 * is not accepting connections" is FATAL at connect, while the same SQLSTATE at ERROR is a state
 * error of a statement, such as `currval` before `nextval`: a bug).
 */
export function sqlOutageReason(err: unknown): string | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as { code?: unknown; message?: unknown; severity?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  const fatal = e.severity === 'FATAL' || e.severity === 'PANIC';
  if (UNAVAILABLE_ERRNOS.has(code)) return `cannot connect (${code})`;
  if (code === '57014' && message.includes('statement timeout'))
    return 'no answer within the deadline (57014 statement_timeout)';
  const known = UNAVAILABLE_STATES.get(code);
  if (known && (code !== '55000' || fatal)) return known;
  const cls = UNAVAILABLE_CLASSES.get(code.slice(0, 2));
  if (cls && code.length === 5) return `${cls} (${code})`;
  if (fatal) return `the server ended the session (${code || 'FATAL'})`;
  for (const [prefix, reason] of UNAVAILABLE_MESSAGES) if (message.startsWith(prefix)) return reason;
  return null;
}

/**
 * Maps an engine error to a {@link FreshetError} where Freshet has a code for it:
 * - the server cannot serve now ({@link sqlOutageReason}: SQLSTATE classes 08, 53, 58; 57P01–05,
 *   57014, 55000 and any other FATAL, 25006, 3D000, 28xxx; socket errors, connect timeouts, closed
 *   connections or pools) → `STORE_UNAVAILABLE` (HTTP 503), message `PostgreSQL unavailable: <reason>`;
 * - values the schema rejects (SQLSTATE class 22 or 23: bad syntax for a type, NOT NULL,
 *   CHECK, …) → `INVALID_INPUT` (HTTP 400), the engine's message kept in `details`.
 * Anything else (a bug: syntax error, missing table) is returned unchanged (HTTP 500). The engine's
 * code and message are in `details` (logged, never sent), the error itself is the `cause`.
 */
export function mapSqlError(err: unknown): unknown {
  if (err instanceof FreshetError || typeof err !== 'object' || err === null) return err;
  const e = err as { code?: unknown; message?: unknown; column?: unknown; constraint?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  const reason = sqlOutageReason(err);
  if (reason !== null)
    return withCause(
      fail('STORE_UNAVAILABLE', `PostgreSQL unavailable: ${reason}`, { store: 'postgres', code, message }),
      err,
    );
  if (code.startsWith('22') || code.startsWith('23')) {
    const what = typeof e.column === 'string' ? e.column : typeof e.constraint === 'string' ? e.constraint : 'a value';
    return fail('INVALID_INPUT', `the store rejected ${what}`, { code, message });
  }
  return err;
}

/** Sets `cause` on an error we just built (not enumerable, like `new Error(msg, {cause})`). */
function withCause<E extends Error>(e: E, cause: unknown): E {
  Object.defineProperty(e, 'cause', { value: cause, enumerable: false, configurable: true, writable: true });
  return e;
}

/** Wraps a close function so that only its first call runs. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}

/** Awaits `p`, rethrowing its failure through {@link mapSqlError}. */
async function mapped<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw mapSqlError(err);
  }
}

/**
 * Opens PGlite on a data folder (created when missing) or in memory with `'memory://'`.
 * @throws FreshetError `STORE_UNAVAILABLE` when the folder cannot be opened.
 */
export async function openPglite(dataDir: string): Promise<Sql> {
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir);
  } catch (err) {
    throw withCause(
      fail('STORE_UNAVAILABLE', 'PostgreSQL unavailable: cannot open the embedded database', {
        dataDir,
        message: String(err),
      }),
      err,
    );
  }
  type Queryable = Pick<PGlite, 'query' | 'exec'>;
  const wrap = (q: Queryable): SqlTx => ({
    query: async <T>(text: string, params: readonly unknown[] = []) =>
      (await mapped(q.query<T>(text, params as unknown[]))).rows,
    exec: async (text: string) => {
      await mapped(q.exec(text));
    },
  });
  const direct = wrap(db);
  return {
    kind: 'pglite',
    ...direct,
    relaxedQuery: direct.query,
    transaction: <R>(fn: (tx: SqlTx) => Promise<R>) => mapped(db.transaction((tx) => fn(wrap(tx)))),
    close: once(() => db.close()),
  };
}

/** Options of {@link openPostgres}. */
export interface PostgresOptions {
  /**
   * Schema to work in: created when missing and put first on every pooled connection's
   * `search_path` (tests isolate runs this way). Must match `[a-z_][a-z0-9_]{0,62}`.
   */
  schema?: string;
  /** Pool size (default 10). */
  max?: number;
  /**
   * The deadline of one call, ms (absent: 5 s to connect, no statement deadline). It sets the pool's
   * `connectionTimeoutMillis` (opening a connection, or waiting for a free one), the server's
   * `statement_timeout` on every pooled session (the server cancels the statement: 57014) and the
   * client's `query_timeout` a little later (a server that does not answer at all; the connection is
   * then destroyed, not pooled). Each failure is STORE_UNAVAILABLE naming PostgreSQL.
   */
  timeoutMs?: number;
}

/** Sessions of `relaxedQuery`'s pool: its writes are coalesced (one statement per group), so few are busy at once. */
const RELAXED_POOL_MAX = 2;

/** How much later than `statement_timeout` the client gives up on its own, ms (the server's cancel normally wins). */
export const CLIENT_DEADLINE_SLACK_MS = 200;

/**
 * The pooled sessions' `-c` options and the URL to connect with: the URL's own `?options=` (which
 * `pg` would otherwise apply instead of the pool's) taken out and kept first, then the schema first on
 * the search path, then the statement deadline.
 */
function sessionOptions(url: string, opts: PostgresOptions): { url: string; options?: string } {
  const parts: string[] = [];
  let connectTo = url;
  if (URL.canParse(url)) {
    const u = new URL(url);
    const fromUrl = u.searchParams.get('options');
    if (fromUrl !== null) {
      parts.push(fromUrl);
      u.searchParams.delete('options');
      connectTo = u.toString();
    }
  }
  if (opts.schema) parts.push(`-c search_path=${opts.schema}`);
  if (opts.timeoutMs) parts.push(`-c statement_timeout=${opts.timeoutMs}`);
  return parts.length > 0 ? { url: connectTo, options: parts.join(' ') } : { url: connectTo };
}

/** Whether `err` is the client giving up on a query (its connection still waits for the reply). */
function clientTimedOut(err: unknown): boolean {
  const timedOut = (e: unknown) => e instanceof Error && e.message === 'Query read timeout';
  return timedOut(err) || (err instanceof Error && timedOut(err.cause));
}

/** A pool of at most `max` sessions, each opened with `sessionOpts` (`-c` sets a parameter for the whole session). */
function poolOf(connectTo: string, max: number, sessionOpts: string | undefined, opts: PostgresOptions): pg.Pool {
  const p = new pg.Pool({
    connectionString: connectTo,
    max,
    connectionTimeoutMillis: opts.timeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    ...(opts.timeoutMs ? { query_timeout: opts.timeoutMs + CLIENT_DEADLINE_SLACK_MS } : {}),
    ...(sessionOpts ? { options: sessionOpts } : {}),
  });
  // An idle client losing its server emits here; without a listener the process would crash.
  // The next query fails (and is mapped to STORE_UNAVAILABLE) instead.
  p.on('error', () => undefined);
  return p;
}

/**
 * Runs `fn` in one transaction on a client of `pool` (BEGIN, COMMIT; ROLLBACK on an error): see
 * {@link Sql.transaction}. A client whose session was lost or whose query the client gave up on is
 * destroyed at release, not pooled.
 */
async function inTransaction<R>(
  pool: pg.Pool,
  wrap: (q: pg.PoolClient) => SqlTx,
  fn: (tx: SqlTx) => Promise<R>,
): Promise<R> {
  const client = await mapped(pool.connect());
  let broken: Error | undefined;
  // A checked-out client has no listener of the pool's: a session ended between two statements
  // (pg_terminate_backend, a server restart) would emit 'error' with nobody listening and end the
  // process. It is remembered instead; the next statement fails (STORE_UNAVAILABLE) and the client
  // is destroyed at release, not pooled.
  const onLost = (err: Error) => (broken ??= err);
  client.on('error', onLost);
  try {
    await mapped(client.query('BEGIN'));
    const result = await fn(wrap(client));
    await mapped(client.query('COMMIT'));
    return result;
  } catch (err) {
    // a query the client gave up on still holds the connection: a ROLLBACK would wait behind it
    if (clientTimedOut(err)) broken = err as Error;
    else {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackErr) {
        broken = rollbackErr as Error; // the connection is unusable: destroy it, not pool it
      }
    }
    throw mapSqlError(err);
  } finally {
    client.removeListener('error', onLost);
    client.release(broken);
  }
}

/**
 * Opens a `pg` pool on a PostgreSQL server (`postgres://user@host:port/db`) and checks that it
 * answers.
 * @throws FreshetError `STORE_UNAVAILABLE` when the server cannot be reached (5 s connect timeout);
 *   `INVALID_INPUT` for a malformed schema name.
 */
export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<Sql> {
  const { schema } = opts;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw fail('INVALID_INPUT', `schema name must match [a-z_][a-z0-9_]{0,62}`);
  }
  const { url: connectTo, options } = sessionOptions(url, opts);
  const newPool = (max: number, sessionOpts: string | undefined) => poolOf(connectTo, max, sessionOpts, opts);
  const pool = newPool(opts.max ?? 10, options);
  // `relaxedQuery`'s sessions: a small pool of their own, opened on first use, whose every session
  // commits asynchronously (set per session, so no pooled session of `pool` is ever changed). Once the
  // handle is closed the ended `pool` answers instead, failing as every other query then does.
  let relaxed: pg.Pool | null = null;
  let closed = false;
  const relaxedPool = (): pg.Pool =>
    closed
      ? pool
      : (relaxed ??= newPool(RELAXED_POOL_MAX, [options, '-c synchronous_commit=off'].filter(Boolean).join(' ')));
  const rowsOf = async <T>(q: pg.Pool | pg.PoolClient, text: string, params: readonly unknown[]): Promise<T[]> =>
    (await mapped(q.query(text, params as unknown[]))).rows as T[];
  const wrap = (q: pg.Pool | pg.PoolClient): SqlTx => ({
    query: <T>(text: string, params: readonly unknown[] = []) => rowsOf<T>(q, text, params),
    exec: async (text: string) => {
      await mapped(q.query(text));
    },
  });
  const sql: Sql = {
    kind: 'postgres',
    ...wrap(pool),
    relaxedQuery: <T>(text: string, params: readonly unknown[] = []) => rowsOf<T>(relaxedPool(), text, params),
    transaction: <R>(fn: (tx: SqlTx) => Promise<R>) => inTransaction(pool, wrap, fn),
    close: once(async () => {
      closed = true;
      await Promise.all([pool.end(), relaxed?.end()]);
    }),
  };
  try {
    if (schema) await sql.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    else await sql.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return sql;
}
