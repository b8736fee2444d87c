/**
 * PGlite with the pgvector extension (`@electric-sql/pglite-pgvector`) for the discover tests: a copy of
 * the migrated template (test/support/pglite.ts) opened with the extension loaded, so no test pays
 * PostgreSQL's bootstrap and the migrations again. As a contract engine (test/support/contract.ts) it
 * opens one copy per file; each place empties the tables like the other SQL engines and also drops
 * what pgvector's set-up added to `item_embeddings` (column, trigger, HNSW index), so a suite that
 * writes first and sets up after gets its index built in bulk.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Sql, SqlTx } from '../../src/kernel/sql/sql.js';
import { sqlEngine, type Engine, type SqlPlace } from './contract.js';
import { copyPgliteTemplate } from './pglite.js';

/**
 * A migrated PGlite with pgvector available (not yet created: `CREATE EXTENSION` is the set-up's), in
 * a temp folder removed on close, behind the `Sql` interface (errors unmapped: tests only).
 */
export async function openPgliteWithVector(): Promise<Sql> {
  const dir = mkdtempSync(join(tmpdir(), 'freshet-pgvector-'));
  copyPgliteTemplate(dir);
  const db = await PGlite.create(dir, { extensions: { vector } });
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): SqlTx => ({
    query: async <T>(text: string, params: readonly unknown[] = []) =>
      (await q.query<T>(text, params as unknown[])).rows,
    exec: async (text: string) => {
      await q.exec(text);
    },
  });
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= db.close().finally(() => rmSync(dir, { recursive: true, force: true })));
  const direct = wrap(db);
  return {
    kind: 'pglite',
    ...direct,
    relaxedQuery: direct.query,
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    close,
  };
}

/** The pgvector-on-PGlite engine (see the module doc). */
export function pgvectorEngine(): Engine<SqlPlace> {
  const engine = sqlEngine('pgvector on PGlite', openPgliteWithVector, async () => {});
  return {
    name: engine.name,
    async place() {
      const place = await engine.place();
      await place.sql.exec(`
        DROP TRIGGER IF EXISTS item_embeddings_halfvec ON item_embeddings;
        DROP INDEX IF EXISTS item_embeddings_hnsw_idx;
        ALTER TABLE item_embeddings DROP COLUMN IF EXISTS embedding;`);
      return place;
    },
  };
}
