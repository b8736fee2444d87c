/**
 * Every schema migration of Freshet, in order: migration 1 (items) from the kernel, then each
 * capability's own (`<capability>/adapters/schema.ts`). `migrate(sql)` applies the pending ones.
 */
import type { Sql } from '../kernel/sql/sql.js';
import { ITEMS_MIGRATION, migrate as runMigrations, type Migration } from '../kernel/sql/migrations.js';
import { HOT_MIGRATION } from '../hot/adapters/schema.js';
import { FOLLOWING_MIGRATION } from '../following/adapters/schema.js';
import { EXCLUSIONS_MIGRATION } from '../exclusions/adapters/schema.js';
import {
  DISCOVER_INDEX_MIGRATION,
  DISCOVER_MIGRATION,
  READER_EMBEDDING_MIGRATION,
} from '../discover/adapters/schema.js';
import { UNPUBLISHED_MIGRATION } from '../following/adapters/schema-unpublished.js';
import { SEEN_CHECKPOINT_MIGRATION } from '../seen/checkpoint-schema.js';
import { FOR_YOU_BAND_MIGRATION, FOR_YOU_KEYSET_MIGRATION } from '../for-you/adapters/schema.js';
import { PREFERENCES_MIGRATION } from '../exclusions/adapters/schema-preferences.js';
import { ITEMS_LANG_MIGRATION } from '../content/schema-lang.js';
import { NOTIFICATIONS_MIGRATION } from '../notifications/adapters/schema.js';
import { TIMELINE_MARKERS_MIGRATION } from '../following/adapters/schema-markers.js';
import { LEARN_MIGRATION } from '../learn/adapters/schema.js';
import { DELETED_VECTORS_MIGRATION } from '../discover/adapters/schema-deleted.js';

export { appliedMigrations } from '../kernel/sql/migrations.js';

/** The migrations, in order (versions 1, 2, … with no gaps). Never edit a released one: append. */
export const MIGRATIONS: readonly Migration[] = [
  ITEMS_MIGRATION,
  HOT_MIGRATION,
  FOLLOWING_MIGRATION,
  EXCLUSIONS_MIGRATION,
  DISCOVER_MIGRATION,
  UNPUBLISHED_MIGRATION,
  DISCOVER_INDEX_MIGRATION,
  SEEN_CHECKPOINT_MIGRATION,
  FOR_YOU_KEYSET_MIGRATION,
  FOR_YOU_BAND_MIGRATION,
  PREFERENCES_MIGRATION,
  ITEMS_LANG_MIGRATION,
  NOTIFICATIONS_MIGRATION,
  TIMELINE_MARKERS_MIGRATION,
  LEARN_MIGRATION,
  READER_EMBEDDING_MIGRATION,
  DELETED_VECTORS_MIGRATION,
];

/**
 * Applies the pending migrations of {@link MIGRATIONS} (see the kernel's `migrate` for locking).
 * @returns the versions applied by this call.
 * @throws FreshetError `STORE_UNAVAILABLE` when the database is unreachable.
 */
export function migrate(sql: Sql): Promise<number[]> {
  return runMigrations(sql, MIGRATIONS);
}
