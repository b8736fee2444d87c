/**
 * Migration 11: the readers' preferences (docs/preferences.md) and the "show less" feedback.
 * Listed by src/compose/migrations.ts; never edit it once released: append a new version.
 *
 * - `reader_preferences`: one document per reader (the stored form of src/exclusions/preferences.ts as
 *   JSON, times in epoch ms), replaced whole by `PUT /v1/users/:id/preferences`; no foreign key to `users`
 *   (a reader need not be a graph user).
 * - `feedback.kind` also takes `show_less` (`POST /v1/feedback`): the item's author and tags weigh less for
 *   the reader for `FRESHET_SHOW_LESS_DAYS`; `DELETE` removes it.
 */
import type { Migration } from '../../kernel/sql/migrations.js';

/** Migration 11 (its own constant: the lead renumbers it with one line when branches merge). */
export const PREFERENCES_MIGRATION: Migration = {
  version: 11,
  name: 'exclusions: reader preferences and "show less" feedback',
  sql: `
    CREATE TABLE reader_preferences (
      reader_id   text PRIMARY KEY CHECK (reader_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
      doc         jsonb NOT NULL,                               -- src/exclusions/preferences.ts, times in epoch ms
      update_time bigint NOT NULL                               -- epoch ms (virtual time)
    );
    ALTER TABLE feedback DROP CONSTRAINT feedback_kind_check;
    ALTER TABLE feedback ADD CONSTRAINT feedback_kind_check CHECK (kind IN ('not_interested', 'show_less'));
  `,
};
