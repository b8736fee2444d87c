/**
 * Read markers in PostgreSQL: one row per reader holding the id of the newest entry it has read and when the
 * marker last moved (ms). The following timeline (`timeline_markers`) and notifications
 * (`notification_markers`) keep theirs in tables of this one shape, so both read and move them here.
 * Moves are forward only unless forced, in one statement (Mastodon's markers API: of two devices racing,
 * the older marker's update matches no row).
 */
import type { Sql } from './sql.js';

/** The tables holding read markers (columns `reader_id`, `last_read_id` bigint, `updated_at` bigint ms). */
export type MarkerTable = 'timeline_markers' | 'notification_markers';

/** A reader's marker: `lastReadId` 0 and `updatedAt` null when it never moved one. */
export interface ReadMarker {
  lastReadId: number;
  /** When the marker last moved (ms), or null. */
  updatedAt: number | null;
}

type MarkerRow = { last_read_id: string | number; updated_at: string | number };

/** The reader's marker in `table` (0 / null when none). */
export async function readMarker(sql: Sql, table: MarkerTable, readerId: string): Promise<ReadMarker> {
  const rows = await sql.query<MarkerRow>(`SELECT last_read_id, updated_at FROM ${table} WHERE reader_id = $1`, [
    readerId,
  ]);
  const r = rows[0];
  return r
    ? { lastReadId: Number(r.last_read_id), updatedAt: Number(r.updated_at) }
    : { lastReadId: 0, updatedAt: null };
}

/**
 * Moves the reader's marker in `table` to `lastReadId` at `nowMs` — forward only, or to any id when `force`.
 * Answers the marker as it stands after the call and whether this call moved it.
 */
export async function moveMarker(
  sql: Sql,
  table: MarkerTable,
  readerId: string,
  lastReadId: number,
  nowMs: number,
  force: boolean,
): Promise<ReadMarker & { moved: boolean }> {
  const moved = await sql.query<MarkerRow>(
    `INSERT INTO ${table} AS m (reader_id, last_read_id, updated_at) VALUES ($1, $2::bigint, $3::bigint)
     ON CONFLICT (reader_id) DO UPDATE SET last_read_id = EXCLUDED.last_read_id, updated_at = EXCLUDED.updated_at
     WHERE $4::boolean OR m.last_read_id < EXCLUDED.last_read_id
     RETURNING last_read_id, updated_at`,
    [readerId, lastReadId, Math.floor(nowMs), force],
  );
  if (moved[0])
    return { lastReadId: Number(moved[0].last_read_id), updatedAt: Number(moved[0].updated_at), moved: true };
  return { ...(await readMarker(sql, table, readerId)), moved: false };
}
