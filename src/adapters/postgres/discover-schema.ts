/**
 * The SQL of migration 5 (discover feed, design note 3), kept apart so migrations.ts stays a list.
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
