/**
 * The SQL of migration 4 (exclusions, docs/exclusions.md), listed by src/compose/migrations.ts.
 * Never edit it once released: append a new migration instead.
 *
 * - `engagements`: a reader replied to, liked or shared an item (`POST /v1/engagements`); one row per
 *   (reader, item, kind), the first time kept. The item is then excluded from the reader's feeds.
 * - `feedback`: explicit negative feedback (`POST /v1/feedback`, kind `not_interested`), with the item's
 *   author at that time (its weight for the reader is lowered for a while); `DELETE` removes the row.
 * Readers need not be registered users (a for-you reader may never touch the graph), so no foreign key
 * to `users`; items are never hard-deleted, so `item_id` references `items`.
 */
import type { Migration } from '../../kernel/sql/migrations.js';
export const EXCLUSIONS_SQL = `
  CREATE TABLE engagements (
    reader_id  text NOT NULL CHECK (reader_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    item_id    text NOT NULL REFERENCES items (id),
    kind       text NOT NULL CHECK (kind IN ('reply', 'like', 'share')),
    created_at bigint NOT NULL,                                  -- epoch ms (virtual time)
    PRIMARY KEY (reader_id, item_id, kind)
  );
  CREATE INDEX engagements_reader_time_idx ON engagements (reader_id, created_at DESC);

  CREATE TABLE feedback (
    reader_id  text NOT NULL CHECK (reader_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    item_id    text NOT NULL REFERENCES items (id),
    kind       text NOT NULL CHECK (kind IN ('not_interested')),
    author_id  text NOT NULL,                                    -- the item's author when given
    created_at bigint NOT NULL,                                  -- epoch ms (virtual time)
    PRIMARY KEY (reader_id, item_id, kind)
  );
  CREATE INDEX feedback_reader_time_idx ON feedback (reader_id, created_at DESC);
`;

/** Migration 4, as src/compose/migrations.ts lists it. */
export const EXCLUSIONS_MIGRATION: Migration = {
  version: 4,
  name: 'exclusions: engagements and feedback',
  sql: EXCLUSIONS_SQL,
};
