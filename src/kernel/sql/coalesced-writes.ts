/**
 * Group commit for small, independent inserts: {@link CoalescedWrites.write} resolves once its rows
 * are written, but the rows that callers hand in while a statement is in flight leave together in
 * the next one. At low load nothing waits (a write starts at once); under concurrent HTTP load (e.g.
 * 50 `POST /v1/views` in flight, each adding one reader signal) one statement carries many requests'
 * rows instead of one statement each (views over HTTP).
 *
 * Failure stays per caller: when a statement carrying several callers' rows fails, each caller's rows
 * are written again alone, so one caller's bad row (or a transient error) fails that caller only —
 * as it would have without coalescing.
 */

interface Waiter<T> {
  rows: readonly T[];
  resolve(): void;
  reject(err: unknown): void;
}

/** Coalesces concurrent writes of rows of one kind into one statement at a time. */
export class CoalescedWrites<T> {
  private queue: Waiter<T>[] = [];
  private writing = false;

  /**
   * @param flush writes rows (one statement or a few); must be safe to call again with some of the same rows
   *   (the per-caller retry after a failed group), e.g. `INSERT … ON CONFLICT DO NOTHING`.
   * @param maxRows rows per group at most (a single caller's larger write is its own group).
   */
  constructor(
    private readonly flush: (rows: readonly T[]) => Promise<void>,
    private readonly maxRows = 1000,
  ) {}

  /** Writes `rows`; resolves when they are written, rejects with the error of their own write. */
  write(rows: readonly T[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ rows, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const group = this.takeGroup();
        try {
          await this.flush(group.flatMap((w) => w.rows));
          for (const w of group) w.resolve();
        } catch (err) {
          if (group.length === 1) group[0]!.reject(err);
          else await Promise.all(group.map((w) => this.flush(w.rows).then(w.resolve, w.reject)));
        }
      }
    } finally {
      this.writing = false;
    }
  }

  /** The oldest waiters whose rows fit in `maxRows` (at least one). */
  private takeGroup(): Waiter<T>[] {
    let rows = 0;
    let n = 0;
    while (n < this.queue.length && (n === 0 || rows + this.queue[n]!.rows.length <= this.maxRows))
      rows += this.queue[n++]!.rows.length;
    return this.queue.splice(0, n);
  }
}
