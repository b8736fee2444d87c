/**
 * Migration 2 (hot ranking, docs/hot.md): the checkpoints of the hot counters in `hot_counters`.
 * Never edit it once released: append a new migration instead.
 */
import type { Migration } from '../../kernel/sql/migrations.js';

/** Migration 2: hot ranking counter checkpoints (src/hot/adapters/postgres-hot-archive.ts). */
export const HOT_MIGRATION: Migration = {
  version: 2,
  name: 'hot ranking counter checkpoints',
  sql: `
    -- One row per item with hot counters (docs/hot.md): the latest checkpoint of its Redis/in-process state.
    CREATE TABLE hot_counters (
      item_id         text PRIMARY KEY CHECK (item_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
      published_at    bigint NOT NULL,                          -- epoch ms (whole seconds)
      pv              bigint NOT NULL CHECK (pv >= 0),
      uv              bigint NOT NULL CHECK (uv >= 0),          -- HyperLogLog estimate at the checkpoint
      uv_hll          bytea NOT NULL,                           -- the HLL as a Redis HLL string ('' = none)
      sus_repeat      bigint NOT NULL DEFAULT 0,
      sus_budget      bigint NOT NULL DEFAULT 0,
      sus_flagged     bigint NOT NULL DEFAULT 0,
      checkpointed_at bigint NOT NULL,                          -- epoch ms
      archived_at     bigint NULL                               -- epoch ms; set when removed from the hot store
    );
    CREATE INDEX hot_counters_live_published_idx ON hot_counters (published_at) WHERE archived_at IS NULL;
  `,
};
