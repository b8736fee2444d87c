/**
 * The schema migration runner for the PostgreSQL adapters: `migrate` applies the pending ones of an
 * ordered list — each in its own transaction, recorded in `freshet_migrations` — and migration 1 (items).
 * Each capability owns its own migrations (`<capability>/adapters/schema.ts`); src/compose/migrations.ts
 * lists them all in order.
 * The same SQL runs on PGlite and on a PostgreSQL server (≥ 15). Objects are created unqualified,
 * so they land in the first schema of the connection's `search_path` (see `openPostgres`).
 *
 * Times are epoch milliseconds in `bigint` columns, like everywhere in Freshet (src/kernel/items/item.ts).
 */
import type { Sql } from './sql.js';

/** One migration: a version (1, 2, … with no gaps), a name for humans, and its SQL. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations, in order. Never edit a released one: append a new version instead. */
/** Migration 1: the items every capability reads, and reader interests. Never edit it: append a new version. */
export const ITEMS_MIGRATION: Migration = {
  version: 1,
  name: 'items and reader interests',
  sql: `
    CREATE TABLE items (
      id           text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_.-]{1,64}$'),
      author_id    text NOT NULL CHECK (author_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
      title        text NOT NULL DEFAULT '',
      text         text NOT NULL DEFAULT '',
      url          text NULL,
      tags         text[] NOT NULL DEFAULT '{}',
      published_at bigint NOT NULL CHECK (published_at >= 0),   -- epoch ms
      update_time  bigint NOT NULL,                             -- epoch ms, set on every write
      -- NaN compares greater than every number in PostgreSQL, so "< Infinity" also rejects NaN.
      popularity   double precision NOT NULL DEFAULT 0 CHECK (popularity >= 0 AND popularity < 'Infinity'),
      deleted_at   bigint NULL,                                 -- epoch ms of the soft delete
      tsv          tsvector NOT NULL                            -- computed by the upsert
    );
    CREATE INDEX items_live_published_idx ON items (published_at) WHERE deleted_at IS NULL;
    CREATE INDEX items_tsv_idx ON items USING gin (tsv);
    CREATE INDEX items_author_idx ON items (author_id);

    CREATE TABLE reader_interests (
      reader_id   text PRIMARY KEY,
      terms       text[] NOT NULL,
      update_time bigint                                        -- epoch ms
    );
  `,
};

/**
 * Applies every migration of `migrations` not yet recorded in `freshet_migrations`, in order,
 * each in one transaction that also records it (version, name, applied_at epoch ms). Idempotent
 * and safe to run from several processes at once: each transaction takes an advisory lock
 * scoped to the current schema and re-checks before applying.
 * @returns the versions applied by this call (empty when the schema was current).
 * @throws FreshetError `STORE_UNAVAILABLE` when the database is unreachable; the engine's error
 *   when a migration's SQL fails (that migration is rolled back, later ones are not tried).
 */
export async function migrate(sql: Sql, migrations: readonly Migration[]): Promise<number[]> {
  const applied: number[] = [];
  for (const m of migrations) {
    const done = await sql.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('freshet_migrations:' || current_schema()))`);
      await tx.exec(`
        CREATE TABLE IF NOT EXISTS freshet_migrations (
          version    integer PRIMARY KEY,
          name       text NOT NULL,
          applied_at bigint NOT NULL -- epoch ms
        )`);
      const found = await tx.query<{ version: number }>(`SELECT version FROM freshet_migrations WHERE version = $1`, [
        m.version,
      ]);
      if (found.length > 0) return false;
      await tx.exec(m.sql);
      await tx.query(
        `INSERT INTO freshet_migrations (version, name, applied_at)
         VALUES ($1, $2, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)`,
        [m.version, m.name],
      );
      return true;
    });
    if (done) applied.push(m.version);
  }
  return applied;
}

/** Versions recorded in `freshet_migrations`, ascending ([] before the first `migrate`). */
export async function appliedMigrations(sql: Sql): Promise<number[]> {
  const rows = await sql
    .query<{ version: number }>(`SELECT version FROM freshet_migrations ORDER BY version`)
    .catch((err: unknown) => {
      if ((err as { code?: unknown }).code === '42P01') return []; // table not created yet
      throw err;
    });
  return rows.map((r) => Number(r.version));
}
