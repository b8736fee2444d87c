/**
 * The retention of `reader_signals` (migration 5): the views a reader's discover embedding is built from.
 * A read takes the reader's newest `keep` signals (`FRESHET_DISCOVER_SIGNALS`) and weighs them by age
 * (half-life `FRESHET_DISCOVER_HALF_LIFE_HOURS`), so a row that is both older than the retention
 * (`FRESHET_SIGNAL_RETENTION_DAYS`) and not among its reader's newest `keep` is never needed: the sweep
 * deletes exactly those. A reader's newest `keep` rows always stay (ties at the `keep`-th time included),
 * however old, so a reader who comes back after months finds its taste where it left it.
 *
 * One step = one statement over the next {@link READERS_PER_STEP} readers by id (a loose index scan of the
 * primary key, `reader_id` first) deleting at most {@link ROWS_PER_STEP} rows; a step that hit the row bound
 * runs again on the same readers. Idempotent; concurrent sweeps delete each row once.
 */
import type { Sql } from '../../kernel/sql/sql.js';
import type { RetentionStep, RetentionTask } from '../../kernel/sql/retention.js';

/** Readers per step (one index probe each to find them, one to find each one's `keep`-th newest). */
export const READERS_PER_STEP = 500;
/** Rows deleted per step at most: a step's locks and WAL stay small. */
export const ROWS_PER_STEP = 5_000;

/** Retention of reader signals; durations in ms. */
export interface SignalRetentionSettings {
  /** Signals kept per reader whatever their age (at least the discover signal limit). */
  keep: number;
  /** Signals older than this may go (beyond the newest `keep`); 0 = keep every signal (no sweep). */
  retentionMs: number;
}

/** {@link RetentionTask} of `reader_signals` on PostgreSQL or PGlite. */
export class PostgresSignalRetention implements RetentionTask {
  readonly table = 'reader_signals';

  constructor(
    private readonly sql: Sql,
    private readonly settings: SignalRetentionSettings,
  ) {
    if (!Number.isInteger(settings.keep) || settings.keep < 1) throw new RangeError('keep must be a positive integer');
  }

  async step(after: string | null, nowMs: number): Promise<RetentionStep> {
    if (this.settings.retentionMs <= 0) return { deleted: 0, next: null };
    const rows = await this.sql.query<{ deleted: number | string; last: string | null; readers: number | string }>(
      `WITH RECURSIVE r (reader_id) AS (
         (SELECT reader_id FROM reader_signals WHERE reader_id > $1::text ORDER BY reader_id LIMIT 1)
         UNION ALL
         SELECT (SELECT s.reader_id FROM reader_signals s WHERE s.reader_id > r.reader_id ORDER BY s.reader_id LIMIT 1)
         FROM r WHERE r.reader_id IS NOT NULL
       ),
       batch AS MATERIALIZED (SELECT reader_id FROM r WHERE reader_id IS NOT NULL LIMIT $2::int),
       cut AS (
         SELECT b.reader_id,
                (SELECT s.at FROM reader_signals s WHERE s.reader_id = b.reader_id
                 ORDER BY s.at DESC OFFSET $3::int - 1 LIMIT 1) AS nth
         FROM batch b
       ),
       doomed AS (
         SELECT s.reader_id, s.at, s.item_id FROM cut JOIN reader_signals s ON s.reader_id = cut.reader_id
         WHERE s.at < cut.nth AND s.at < $4::bigint
         LIMIT $5::int
       ),
       del AS (
         DELETE FROM reader_signals s USING doomed d
         WHERE s.reader_id = d.reader_id AND s.at = d.at AND s.item_id = d.item_id
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM del) AS deleted, (SELECT max(reader_id) FROM batch) AS last,
              (SELECT count(*) FROM batch) AS readers`,
      [after ?? '', READERS_PER_STEP, this.settings.keep, Math.floor(nowMs - this.settings.retentionMs), ROWS_PER_STEP],
    );
    const deleted = Number(rows[0]?.deleted ?? 0);
    const readers = Number(rows[0]?.readers ?? 0);
    if (deleted >= ROWS_PER_STEP) return { deleted, next: after ?? '' }; // more in this batch: the same readers again
    return { deleted, next: readers < READERS_PER_STEP ? null : (rows[0]?.last ?? null) };
  }
}
