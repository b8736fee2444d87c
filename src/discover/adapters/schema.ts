/**
 * The SQL of migration 5 (discover feed, docs/discover.md), listed by src/compose/migrations.ts.
 * Never edit it once released: append a new migration instead.
 *
 * - `item_embeddings`: one row per item (no foreign key: an embedding is written before its item's
 *   upsert, so a failed upsert leaves at most an invisible row — every read joins live items):
 *   int8 codes (`vec`, dimension `dim`), the 256-bit sign-random-projection sketch and its first
 *   16 bits as `bucket` (the coarse index of the vector search; the index covers `sketch` and `item_id`
 *   so a probe never visits the table's pages), and who computed it.
 * - `reader_signals`: items a reader viewed or engaged with, with when and a weight; the reader's
 *   embedding is their time-decayed mean.
 * - Two indexes for the keyset streams: newest overall and newest per author, by (published_at, id).
 */
import type { Migration } from '../../kernel/sql/migrations.js';
export const DISCOVER_SQL = `
  CREATE TABLE item_embeddings (
    item_id     text PRIMARY KEY CHECK (item_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    dim         integer NOT NULL CHECK (dim BETWEEN 8 AND 4096),
    vec         bytea NOT NULL,                                   -- int8 codes, dim bytes
    sketch      bit(256) NOT NULL,
    bucket      integer NOT NULL CHECK (bucket BETWEEN 0 AND 65535),
    source      text NOT NULL CHECK (source IN ('client', 'text')),
    update_time bigint NOT NULL                                   -- epoch ms
  );
  -- covering: the probe reads (bucket, sketch, item_id) from the index alone (index-only scan)
  CREATE INDEX item_embeddings_bucket_idx ON item_embeddings (bucket) INCLUDE (sketch, item_id);

  CREATE TABLE reader_signals (
    reader_id text NOT NULL CHECK (reader_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    at        bigint NOT NULL,                                    -- epoch ms
    item_id   text NOT NULL,
    weight    real NOT NULL CHECK (weight > 0 AND weight <= 100),
    PRIMARY KEY (reader_id, at, item_id)
  );

  CREATE INDEX items_live_newest_idx ON items (published_at DESC, id DESC) WHERE deleted_at IS NULL;
  CREATE INDEX items_author_newest_idx ON items (author_id, published_at DESC, id DESC) WHERE deleted_at IS NULL;
`;

/** Migration 5, as src/compose/migrations.ts lists it. */
export const DISCOVER_MIGRATION: Migration = {
  version: 5,
  name: 'discover feed: item embeddings with sketches, reader signals, newest-first indexes',
  sql: DISCOVER_SQL,
};

/**
 * The SQL of migration 7: the nearest-neighbour index replaces the sketch.
 *
 * - The sketch, its bucket and their covering index go: phase 2 searches pgvector or the in-process
 *   usearch index instead (adapters/pgvector-search.ts, adapters/in-process-search.ts).
 * - `changed xid8`: the transaction that last wrote the row (`pg_current_xact_id()`, set by every
 *   upsert), indexed — the change feed every in-process index catches up from by watermark
 *   (adapters/postgres-embedding-feed.ts). Existing rows get this migration's transaction.
 * - A soft delete of an item stamps its embedding row (trigger `items_deleted_touch_embedding`), so
 *   the in-process indexes drop it on their next catch-up; the search's filters exclude it anyway.
 * - `discover_index_identity`: one random id per database, so a persisted in-process index is only
 *   caught up from a watermark of the same database.
 */
export const DISCOVER_INDEX_SQL = `
  DROP INDEX item_embeddings_bucket_idx;
  ALTER TABLE item_embeddings DROP COLUMN sketch, DROP COLUMN bucket;
  ALTER TABLE item_embeddings ADD COLUMN changed xid8 NOT NULL DEFAULT pg_current_xact_id();
  CREATE INDEX item_embeddings_changed_idx ON item_embeddings (changed, item_id COLLATE "C");

  CREATE FUNCTION freshet_touch_embedding() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    UPDATE item_embeddings SET changed = pg_current_xact_id() WHERE item_id = NEW.id;
    RETURN NULL;
  END $fn$;
  CREATE TRIGGER items_deleted_touch_embedding AFTER UPDATE OF deleted_at ON items
    FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
    EXECUTE FUNCTION freshet_touch_embedding();

  CREATE TABLE discover_index_identity (id text NOT NULL);
  INSERT INTO discover_index_identity (id) VALUES (gen_random_uuid()::text);
`;

/** Migration 7, as src/compose/migrations.ts lists it. */
export const DISCOVER_INDEX_MIGRATION: Migration = {
  version: 7,
  name: 'discover: nearest-neighbour index change feed replaces the sketch',
  sql: DISCOVER_INDEX_SQL,
};

/**
 * The SQL of migration 16: a reader's embedding given by the application (`PUT /v1/users/:id/embedding`),
 * unit length, float32 little-endian (`dim` × 4 bytes). Phase 2 searches with it instead of the mean of
 * the reader's signals (src/discover/embeddings.ts `readerQuery`). Personal data: erased and exported
 * with the reader.
 */
export const READER_EMBEDDING_SQL = `
  CREATE TABLE reader_embeddings (
    reader_id   text PRIMARY KEY CHECK (reader_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    vec         bytea NOT NULL,
    update_time bigint NOT NULL                                   -- epoch ms
  );
`;

/** Migration 16, as src/compose/migrations.ts lists it. */
export const READER_EMBEDDING_MIGRATION: Migration = {
  version: 16,
  name: 'discover: reader embeddings given by the application',
  sql: READER_EMBEDDING_SQL,
};
