/**
 * Migration 6 (following timeline): a partial index over the live items that have no timeline id yet,
 * so the fan-out sweep finds items whose publish failed after their commit without scanning `items`
 * (src/following/adapters/postgres-timeline-index.ts `unpublished`). Never edit it once released.
 */
import type { Migration } from '../../kernel/sql/migrations.js';

/** Migration 6, as src/compose/migrations.ts lists it. */
export const UNPUBLISHED_MIGRATION: Migration = {
  version: 6,
  name: 'following timeline: index of committed items not yet published',
  sql: `CREATE INDEX items_unpublished_idx ON items (update_time, id) WHERE tid IS NULL AND deleted_at IS NULL;`,
};
