/**
 * The following timeline's read markers (catch-up; docs/following.md "Catch-up"), listed by
 * src/compose/migrations.ts. Never edit it once released: append a new migration instead.
 *
 * `timeline_markers`: how far each reader has read its following timeline (`last_read_id`, a timeline id),
 * moved forward only unless forced (one conditional upsert: of two devices racing, the newer one stays).
 */
import type { Migration } from '../../kernel/sql/migrations.js';

/** The markers migration (its own constant: renumbered in one line when branches merge). */
export const TIMELINE_MARKERS_MIGRATION: Migration = {
  version: 14,
  name: 'following: read markers of the timeline',
  sql: `
    CREATE TABLE timeline_markers (
      reader_id    text PRIMARY KEY CHECK (reader_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
      last_read_id bigint NOT NULL CHECK (last_read_id >= 0),
      updated_at   bigint NOT NULL                               -- epoch ms
    );
  `,
};
