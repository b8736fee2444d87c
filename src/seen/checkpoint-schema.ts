/**
 * Migration 8: the PostgreSQL checkpoints of the Redis seen filters (src/seen/seen-checkpointer.ts).
 * Version 8, not the next free number at the time of writing, so that a discover migration written
 * at the same time can take 7 without a clash (the runner applies the list in order; gaps are fine).
 *
 * One SUBJECT per filter: `d:<geometry>:<shard>:<YYYYMMDD>` (a rolling day filter of one shard) or
 * `r:<geometry>:<reader>` (a reader's scalable filter). The geometry is part of the name, so a
 * filter checkpointed under another configuration is never restored into this one.
 * - `seen_checkpoints`: one row per subject — when it expires, the latest activity (`at_ms`, the
 *   reader's `t`), and the compacted BASE: a bitmap exactly as Redis holds it (null until the first
 *   compaction) and, for a reader, its sub-filter counts (`state`, '100000,1234').
 * - `seen_checkpoint_log`: append-only rows of packed hash pairs (8 bytes per member: the journal a
 *   checkpoint took from Redis), replayed on the base in `seq` order. A compaction folds a subject's
 *   rows into its base and deletes exactly the rows it folded.
 * Rows of an expired subject go with it (`ON DELETE CASCADE`). Times are epoch ms (`bigint`).
 */
import type { Migration } from '../kernel/sql/migrations.js';

/** Migration 8: seen-filter checkpoints. Never edit it: append a new version. */
export const SEEN_CHECKPOINT_MIGRATION: Migration = {
  version: 8,
  name: 'seen-filter checkpoints',
  sql: `
    CREATE TABLE seen_checkpoints (
      subject    text PRIMARY KEY,
      expires_at bigint NOT NULL,          -- epoch ms: the subject is deleted from then on
      at_ms      bigint NOT NULL,          -- latest activity checkpointed (a reader's t; 0 for a day)
      state      text NOT NULL DEFAULT '', -- a reader's base counts ('100000,1234'); '' = none
      bitmap     bytea NULL                -- the compacted base, as Redis holds it; NULL = none yet
    );
    CREATE INDEX seen_checkpoints_expires_idx ON seen_checkpoints (expires_at);

    CREATE TABLE seen_checkpoint_log (
      subject text NOT NULL REFERENCES seen_checkpoints (subject) ON DELETE CASCADE,
      seq     bigserial NOT NULL,
      at_ms   bigint NOT NULL,             -- the subject's latest activity when this row was taken
      pairs   bytea NOT NULL,              -- packed hash pairs, 8 bytes per member, in journal order
      PRIMARY KEY (subject, seq)
    );
  `,
};
