/**
 * The retention port: a table that grows with readers × time is pruned by a sweep in bounded steps,
 * each one statement that touches a bounded number of readers and rows (no long lock, no long
 * transaction), each idempotent (a step run twice deletes nothing more). The capability that owns the
 * table implements it in its adapters; the app's maintenance worker runs the passes
 * (src/use-cases/retention.ts; docs/operations.md "Retention").
 */

/** What one step did. */
export interface RetentionStep {
  /** Rows deleted by the step. */
  deleted: number;
  /** Where the next step starts (an opaque key, e.g. The last reader id done); null: the pass is over. */
  next: string | null;
}

/** One table's retention. */
export interface RetentionTask {
  /** The table it prunes (logs and metrics). */
  readonly table: string;
  /**
   * One bounded step of a pass at `nowMs`, after `after` (null: from the start).
   * @throws FreshetError STORE_UNAVAILABLE when the database does not answer (the pass resumes at the next run).
   */
  step(after: string | null, nowMs: number): Promise<RetentionStep>;
}
