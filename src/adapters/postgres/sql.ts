/**
 * One tiny SQL interface over two engines, so the PostgreSQL adapters have a single code path
 * (DESIGN.md "Layers"): PGlite (PostgreSQL compiled to WebAssembly, in process — the embedded
 * default) and a PostgreSQL server through a `pg` pool.
 *
 * Differences the callers must not rely on, and how they are papered over:
 * - `bigint` columns come back as `number` from PGlite and as `string` from `pg`: callers
 *   convert with `Number(...)` (every bigint Freshet stores is an epoch-ms or a count < 2^53).
 * - Errors: both engines throw objects carrying the SQLSTATE in `code`; {@link mapSqlError}
 *   turns connection failures into `STORE_UNAVAILABLE` and rejected values (SQLSTATE classes
 *   22 "data exception" and 23 "integrity constraint violation") into `INVALID_INPUT`.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { FreshetError, fail } from '../../domain/errors.js';

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

/** SQLSTATEs (and classes) meaning "the server is not there for us". */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '3D000', '28000', '28P01']);
/** Node socket errors seen when a server is down or unreachable. */
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH',
]);

/**
 * Maps an engine error to a {@link FreshetError} where Freshet has a code for it:
 * - connection failures (SQLSTATE class 08, 57P01–03, 53300, 3D000, 28xxx, socket errors,
 *   pool connect timeouts, closed connections) → `STORE_UNAVAILABLE` (HTTP 503);
 * - values the schema rejects (SQLSTATE class 22 or 23: bad syntax for a type, NOT NULL,
 *   CHECK, …) → `INVALID_INPUT` (HTTP 400), the engine's message kept in `details`.
 * Anything else (a bug: syntax error, missing table) is returned unchanged.
 */
export function mapSqlError(err: unknown): unknown {
  if (err instanceof FreshetError || typeof err !== 'object' || err === null) return err;
  const e = err as { code?: unknown; message?: unknown; column?: unknown; constraint?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (
    code.startsWith('08') ||
    UNAVAILABLE_STATES.has(code) ||
    UNAVAILABLE_ERRNOS.has(code) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|PGlite is closed|Cannot use a pool after calling end/i.test(
      message,
    )
  ) {
    return fail('STORE_UNAVAILABLE', 'the database is unavailable', { code, message });
  }
  if (code.startsWith('22') || code.startsWith('23')) {
    const what = typeof e.column === 'string' ? e.column : typeof e.constraint === 'string' ? e.constraint : 'a value';
    return fail('INVALID_INPUT', `the store rejected ${what}`, { code, message });
  }
  return err;
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
    throw fail('STORE_UNAVAILABLE', 'cannot open the embedded database', { dataDir, message: String(err) });
  }
  type Queryable = Pick<PGlite, 'query' | 'exec'>;
  const wrap = (q: Queryable): SqlTx => ({
    query: async <T>(text: string, params: readonly unknown[] = []) =>
      (await mapped(q.query<T>(text, params as unknown[]))).rows,
    exec: async (text: string) => {
      await mapped(q.exec(text));
    },
  });
  return {
    kind: 'pglite',
    ...wrap(db),
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
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // `-c` sets the parameter for the whole session, on every connection the pool opens.
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client losing its server emits here; without a listener the process would crash.
  // The next query fails (and is mapped to STORE_UNAVAILABLE) instead.
  pool.on('error', () => undefined);
  const wrap = (q: pg.Pool | pg.PoolClient): SqlTx => ({
    query: async <T>(text: string, params: readonly unknown[] = []) =>
      (await mapped(q.query(text, params as unknown[]))).rows as T[],
    exec: async (text: string) => {
      await mapped(q.query(text));
    },
  });
  const sql: Sql = {
    kind: 'postgres',
    ...wrap(pool),
    async transaction<R>(fn: (tx: SqlTx) => Promise<R>): Promise<R> {
      const client = await mapped(pool.connect());
      let broken: Error | undefined;
      try {
        await mapped(client.query('BEGIN'));
        const result = await fn(wrap(client));
        await mapped(client.query('COMMIT'));
        return result;
      } catch (err) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackErr) {
          broken = rollbackErr as Error; // the connection is unusable: destroy it, not pool it
        }
        throw mapSqlError(err);
      } finally {
        client.release(broken);
      }
    },
    close: once(() => pool.end()),
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
