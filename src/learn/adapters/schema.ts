/**
 * The learning room's tables (migration 15, docs/learning.md):
 * - `interactions`: one row per (reader, item) with the kinds of positive signal given (bits of
 *   `SIGNAL_KINDS`: 1 view, 2 like, 4 reply, 8 share; 0 a tombstone) and the time of the last one; stamped
 *   with the writing transaction (`changed`, an `xid8`) — the change feed the background builder catches
 *   up from, as the discover index does from `item_embeddings` (src/discover/adapters/postgres-embedding-feed.ts).
 * - `learn_state`: one row; `erasures` counts erases (no ids kept), so a builder reloads after one.
 * - `item_neighbours`: each item's co-engagement neighbours, best first — ids in one text, similarities and
 *   shared readers as packed float32 / int32 (a page's recall reads hundreds of rows: arrays of `real[]`
 *   parsed at ~75 ms per 500 rows, this at a few ms).
 * - `item_popularity`: the engine's own popularity of an item, as log2 of Σ weight · 2^((at − epoch) / half-life)
 *   (so its order never changes with time; src/learn/popularity.ts).
 * - `item_factors` / `learn_models`: the factor model's item vectors (float32, `f` numbers) and which model
 *   is current.
 */
import type { Migration } from '../../kernel/sql/migrations.js';

export const LEARN_SQL = `
  CREATE TABLE interactions (
    reader_id text NOT NULL CHECK (reader_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    item_id   text NOT NULL CHECK (item_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    kinds     smallint NOT NULL CHECK (kinds BETWEEN 0 AND 15),
    at        bigint NOT NULL,                                    -- epoch ms of the last signal
    changed   xid8 NOT NULL DEFAULT pg_current_xact_id(),
    PRIMARY KEY (reader_id, item_id)
  );
  CREATE INDEX interactions_changed_idx ON interactions (changed, reader_id COLLATE "C", item_id COLLATE "C");
  CREATE INDEX interactions_reader_at_idx ON interactions (reader_id, at DESC) WHERE kinds <> 0;
  CREATE INDEX interactions_at_idx ON interactions (at);

  CREATE TABLE learn_state (erasures bigint NOT NULL);
  INSERT INTO learn_state (erasures) VALUES (0);

  CREATE TABLE item_neighbours (
    item_id    text PRIMARY KEY,
    neighbours text NOT NULL,                                     -- the neighbours' ids, best first, newline-separated
    scores     bytea NOT NULL,                                    -- their similarities, float32 little-endian
    shared     bytea NOT NULL,                                    -- the readers each shares, int32 little-endian
    built_at   bigint NOT NULL                                    -- epoch ms
  );

  CREATE TABLE item_popularity (
    item_id   text PRIMARY KEY,
    log_score double precision NOT NULL
  );
  CREATE INDEX item_popularity_score_idx ON item_popularity (log_score DESC);

  CREATE TABLE learn_models (
    version    bigint PRIMARY KEY,
    factors    integer NOT NULL CHECK (factors BETWEEN 1 AND 512),
    trained_at bigint NOT NULL,                                   -- epoch ms
    settings   jsonb NOT NULL
  );
  CREATE TABLE item_factors (
    version bigint NOT NULL REFERENCES learn_models (version) ON DELETE CASCADE,
    item_id text NOT NULL,
    vec     bytea NOT NULL,                                       -- float32 little-endian, factors × 4 bytes
    PRIMARY KEY (version, item_id)
  );
`;

/** Migration 15, as src/compose/migrations.ts lists it. */
export const LEARN_MIGRATION: Migration = {
  version: 15,
  name: 'learning: interactions, item neighbours, popularity, factor models',
  sql: LEARN_SQL,
};
