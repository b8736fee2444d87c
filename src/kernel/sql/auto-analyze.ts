/**
 * What autovacuum would do, for PGlite: it runs one backend and no autovacuum, so its planner never
 * gets statistics (nor a visibility map) unless the adapters gather them. Each adapter tells an
 * `AutoAnalyze` how many rows it wrote to a table; past autovacuum's own trigger — 50 + 10 % of the
 * table, PostgreSQL's defaults `autovacuum_analyze_threshold` and `autovacuum_analyze_scale_factor` —
 * it runs the table's maintenance command. On a PostgreSQL server autovacuum does it: nothing runs.
 */
import type { Sql } from './sql.js';

/** The command run on a table: statistics only, or also the visibility map (index-only scans). */
export type AnalyzeCommand = 'ANALYZE' | 'VACUUM ANALYZE';

/** Counts writes per table and analyzes a PGlite table when autovacuum would. One per adapter. */
export class AutoAnalyze {
  /** Per table: rows written since its last run here, and `pg_class.reltuples` at that run. */
  private readonly tables = new Map<string, { since: number; atLast: number }>();

  constructor(private readonly sql: Sql) {}

  /**
   * Records `rows` written to `table` (a plain table name of the migrations) and runs `command` on it
   * when the trigger is passed. Resolves once that is done (or at once on a server).
   */
  async wrote(table: string, rows: number, command: AnalyzeCommand): Promise<void> {
    if (this.sql.kind !== 'pglite') return;
    const t = this.tables.get(table) ?? { since: 0, atLast: 0 };
    this.tables.set(table, t);
    t.since += rows;
    if (t.since < 50 + 0.1 * t.atLast) return;
    t.since = 0;
    await this.sql.exec(`${command} ${table}`);
    const n = await this.sql.query<{ n: number | string }>(
      `SELECT reltuples AS n FROM pg_class WHERE oid = $1::regclass`,
      [table],
    );
    t.atLast = Math.max(0, Number(n[0]?.n ?? 0));
  }
}
