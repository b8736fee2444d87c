/**
 * The retention of `engagements` and `feedback` (migration 4): rows no read can reach are deleted.
 * They are durable exclusions — an item a reader liked or dismissed stays out of its feeds — so no row
 * goes for its age; but every read takes only the reader's newest ones: `load` the newest `cap`
 * (`FRESHET_EXCLUSION_CAP`) engaged items and the newest `cap` feedback rows of each kind, the discover
 * embedding the newest `FRESHET_DISCOVER_SIGNALS` engagements. So each table keeps, per reader (per
 * reader and kind for feedback), its newest `keep` rows — ties at the `keep`-th time included — and the
 * sweep deletes the rest; what any feed answers is unchanged.
 * - engagements: keep = 3 × max(cap, signal limit) rows (3 kinds: the newest `cap` distinct items'
 *   latest rows are among a reader's newest 3 × `cap` rows);
 * - feedback: keep = cap rows per kind.
 * One step = one statement over the next {@link READERS_PER_STEP} readers by id (loose index scan of
 * the primary key) deleting at most {@link ROWS_PER_STEP} rows; idempotent.
 */
import type { Sql } from '../../kernel/sql/sql.js';
import type { RetentionStep, RetentionTask } from '../../kernel/sql/retention.js';

/** Readers per step. */
export const READERS_PER_STEP = 500;
/** Rows deleted per step at most. */
export const ROWS_PER_STEP = 5_000;
/** Kinds of engagement (migration 4's CHECK): reply, like, share. */
const ENGAGEMENT_KINDS = 3;

/** The next readers of `table` after $1 (a loose index scan: one probe per reader), at most $2. */
function nextReaders(table: string): string {
  return `RECURSIVE r (reader_id) AS (
         (SELECT reader_id FROM ${table} WHERE reader_id > $1::text ORDER BY reader_id LIMIT 1)
         UNION ALL
         SELECT (SELECT t.reader_id FROM ${table} t WHERE t.reader_id > r.reader_id ORDER BY t.reader_id LIMIT 1)
         FROM r WHERE r.reader_id IS NOT NULL
       ),
       batch AS MATERIALIZED (SELECT reader_id FROM r WHERE reader_id IS NOT NULL LIMIT $2::int)`;
}

const SUMMARY = `SELECT (SELECT count(*) FROM del) AS deleted, (SELECT max(reader_id) FROM batch) AS last,
                        (SELECT count(*) FROM batch) AS readers`;

/** Runs one step's statement and turns its summary into a {@link RetentionStep}. */
async function runStep(sql: Sql, text: string, after: string | null, keep: number): Promise<RetentionStep> {
  const rows = await sql.query<{ deleted: number | string; last: string | null; readers: number | string }>(text, [
    after ?? '',
    READERS_PER_STEP,
    keep,
    ROWS_PER_STEP,
  ]);
  const deleted = Number(rows[0]?.deleted ?? 0);
  if (deleted >= ROWS_PER_STEP) return { deleted, next: after ?? '' }; // more in this batch: the same readers again
  return { deleted, next: Number(rows[0]?.readers ?? 0) < READERS_PER_STEP ? null : (rows[0]?.last ?? null) };
}

/** {@link RetentionTask} of `engagements`: each reader's newest 3 × max(cap, signal limit) rows stay. */
export class PostgresEngagementRetention implements RetentionTask {
  readonly table = 'engagements';
  private readonly keep: number;

  constructor(
    private readonly sql: Sql,
    settings: { cap: number; signalLimit: number },
  ) {
    this.keep = ENGAGEMENT_KINDS * Math.max(settings.cap, settings.signalLimit);
  }

  step(after: string | null, _nowMs: number): Promise<RetentionStep> {
    return runStep(
      this.sql,
      `WITH ${nextReaders('engagements')},
       cut AS (
         SELECT b.reader_id, (SELECT e.created_at FROM engagements e WHERE e.reader_id = b.reader_id
                              ORDER BY e.created_at DESC OFFSET $3::int - 1 LIMIT 1) AS nth
         FROM batch b
       ),
       doomed AS (
         SELECT e.reader_id, e.item_id, e.kind FROM cut JOIN engagements e ON e.reader_id = cut.reader_id
         WHERE e.created_at < cut.nth LIMIT $4::int
       ),
       del AS (
         DELETE FROM engagements e USING doomed d
         WHERE e.reader_id = d.reader_id AND e.item_id = d.item_id AND e.kind = d.kind RETURNING 1
       )
       ${SUMMARY}`,
      after,
      this.keep,
    );
  }
}

/** {@link RetentionTask} of `feedback`: each reader's newest `cap` rows of each kind stay. */
export class PostgresFeedbackRetention implements RetentionTask {
  readonly table = 'feedback';

  constructor(
    private readonly sql: Sql,
    private readonly settings: { cap: number },
  ) {}

  step(after: string | null, _nowMs: number): Promise<RetentionStep> {
    return runStep(
      this.sql,
      `WITH ${nextReaders('feedback')},
       cut AS (
         SELECT b.reader_id, k.kind,
                (SELECT f.created_at FROM feedback f WHERE f.reader_id = b.reader_id AND f.kind = k.kind
                 ORDER BY f.created_at DESC OFFSET $3::int - 1 LIMIT 1) AS nth
         FROM batch b CROSS JOIN LATERAL (SELECT DISTINCT kind FROM feedback f WHERE f.reader_id = b.reader_id) k
       ),
       doomed AS (
         SELECT f.reader_id, f.item_id, f.kind FROM cut
         JOIN feedback f ON f.reader_id = cut.reader_id AND f.kind = cut.kind
         WHERE f.created_at < cut.nth LIMIT $4::int
       ),
       del AS (
         DELETE FROM feedback f USING doomed d
         WHERE f.reader_id = d.reader_id AND f.item_id = d.item_id AND f.kind = d.kind RETURNING 1
       )
       ${SUMMARY}`,
      after,
      this.settings.cap,
    );
  }
}
