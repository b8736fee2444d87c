/**
 * The for-you feed's migrations: indexes over the content store's `items` table that the recall reads
 * (adapters/postgres-recall.ts).
 *
 * Migration 9, the keyset index: recall walks the live items by (`published_at`, id) descending past the
 * shared fill pool (deep scroll, and catalogs whose newest items are older than the decay window:
 * `older`), and the pool's own tail is read the same way. Migration 1's `items_live_published_idx`
 * orders by `published_at` alone, so a position inside a run of equal times would need a sort of the
 * whole run; this index answers `(published_at, id) < ($1, $2) ORDER BY published_at DESC, id DESC
 * LIMIT n` by reading n entries backwards.
 *
 * Migration 10, the banded lexeme index of `FRESHET_FOR_YOU_INTERESTS=index` (`matches`): migration 1's
 * GIN index on `tsv` answers "which items hold this word" for the whole catalog at once, so the newest
 * matches of the decay window cost every match of the catalog (bench: ×7.8 from 20k to 2M items). Here
 * each live item is indexed under `<band>:<lexeme>` for every lexeme of its `tsv`, where band =
 * ⌊published_at / MATCH_BAND_MS⌋ (6-hour bands of epoch ms): a lookup for one band reads only that band's
 * matches, so recall walks the window band by band, newest first, and stops after a bounded number of
 * rows. Cost: a second GIN index about the size of `items_tsv_idx` plus one key per (band, lexeme)
 * (measured 39 MB beside its 22 MB at 200,000 synthetic items); building it on an existing catalog runs
 * in the migration's transaction (≈ 1 min per 200,000 items on a loaded 2-core machine).
 */
import type { Migration } from '../../kernel/sql/migrations.js';

/** Migration 9: keyset index over live items. Never edit it: append a new version. */
export const FOR_YOU_KEYSET_MIGRATION: Migration = {
  version: 9,
  name: 'for-you: keyset index over live items by (published_at, id)',
  sql: `CREATE INDEX items_live_keyset_idx ON items (published_at, id) WHERE deleted_at IS NULL;`,
};

/**
 * Width of the bands of migration 10 (ms): 6 hours, the default decay offset, so the newest band's items
 * all decay alike. Baked into the index expression: changing it needs a new migration.
 */
export const MATCH_BAND_MS = 21_600_000;

/** Migration 10: live items by (6-hour band, lexeme). Never edit it: append a new version. */
export const FOR_YOU_BAND_MIGRATION: Migration = {
  version: 10,
  name: 'for-you: live items by (6-hour band of published_at, lexeme) for bounded interest matches',
  sql: `
    CREATE FUNCTION for_you_band_lexemes(tsv tsvector, published_at bigint) RETURNS text[]
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT array_agg((published_at / ${MATCH_BAND_MS})::text || ':' || l) FROM unnest(tsvector_to_array(tsv)) AS l $$;
    CREATE INDEX items_live_band_lexemes_idx ON items USING gin (for_you_band_lexemes(tsv, published_at)) WHERE deleted_at IS NULL;
  `,
};
