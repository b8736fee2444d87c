/**
 * The catalog's size — live (not deleted) items — at a bounded cost, for `freshet_catalog_items`
 * (src/observe/overview-metrics.ts, read at most once per `FRESHET_METRICS_STORE_READ_S`).
 *
 * - One catalog lookup first: the row estimate PostgreSQL keeps for the partial index of live items
 *   (`items_live_published_idx … WHERE deleted_at IS NULL`, migration 1), refreshed by (auto)VACUUM and
 *   ANALYZE.
 * - Up to {@link EXACT_COUNT_MAX} live items (by that estimate, or when there is none yet: a table never
 *   analyzed, PGlite's usual state) the answer is an exact `count(*)` over that index — an index-only
 *   scan of at most ~1 M entries (tens of ms).
 * - Above it, the estimate itself: no scan on a big catalog, off by what changed since the last
 *   (auto)ANALYZE (autovacuum re-analyzes after 10 % of the rows changed, the PostgreSQL default).
 */
import type { Sql } from '../kernel/sql/sql.js';

/** Largest estimated catalog still counted exactly (rows). */
export const EXACT_COUNT_MAX = 1_000_000;

/** How the size was found. */
export interface CatalogSize {
  /** Live items. */
  items: number;
  /** True for an exact count, false for the planner's estimate (a catalog over {@link EXACT_COUNT_MAX}). */
  exact: boolean;
}

/**
 * The number of live items (see the module doc for the cost).
 * @throws the store's error (FreshetError `STORE_UNAVAILABLE` on a lost server).
 */
export async function catalogSize(sql: Sql): Promise<CatalogSize> {
  const est = await sql.query<{ n: number | string | null }>(
    `SELECT reltuples AS n FROM pg_class WHERE oid = to_regclass('items_live_published_idx')`,
  );
  const estimate = Number(est[0]?.n ?? -1);
  if (estimate > EXACT_COUNT_MAX) return { items: Math.round(estimate), exact: false };
  const rows = await sql.query<{ n: number | string }>(`SELECT count(*) AS n FROM items WHERE deleted_at IS NULL`);
  return { items: Number(rows[0]?.n ?? 0), exact: true };
}
