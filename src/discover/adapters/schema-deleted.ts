/**
 * Migration 17, listed by src/compose/migrations.ts: a deleted item's vector leaves with its text. Never
 * edit it once released: append a new migration instead.
 *
 * A soft delete of an item (one delete, or an erase's tombstones) already stamped its embedding row so the
 * in-process indexes drop it (migration 7's `freshet_touch_embedding`); the row kept its int8 codes, a
 * vector derived from the text that the delete or the erase took away (cosine 1.000 with the title's). The
 * trigger now empties `vec` in the same statement — the row stays, empty, as the change feed's record of
 * the delete (adapters/postgres-embedding-feed.ts: a row of another length than the index dimension leaves
 * it) — and the rows of items deleted before are emptied once (stamped, so running indexes drop them). With
 * pgvector, the `embedding` column follows `vec` (its trigger makes NULL of an empty one).
 */
import type { Migration } from '../../kernel/sql/migrations.js';

/** The migration (its own constant: renumbered in one line when branches merge). */
export const DELETED_VECTORS_MIGRATION: Migration = {
  version: 17,
  name: "discover: a deleted item's embedding row keeps no vector",
  sql: `
    CREATE OR REPLACE FUNCTION freshet_touch_embedding() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      UPDATE item_embeddings SET vec = ''::bytea, changed = pg_current_xact_id() WHERE item_id = NEW.id;
      RETURN NULL;
    END $fn$;
    UPDATE item_embeddings e SET vec = ''::bytea, changed = pg_current_xact_id()
      FROM items i WHERE i.id = e.item_id AND i.deleted_at IS NOT NULL AND octet_length(e.vec) > 0;
  `,
};
