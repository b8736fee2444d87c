/**
 * The upkeep of `users` (migration 3) on PGlite: every follow, unfollow and hourly last-active write
 * rewrites a user's row (exact follower counts, `last_active_at`), leaving a dead row version behind
 * each time (`bench/memory.ts` measured ~3.5 KB per new reader on a server before autovacuum ran).
 * A PostgreSQL server's autovacuum reclaims them; PGlite runs no autovacuum, so the app's retention pass
 * (src/use-cases/retention.ts, hourly) runs `VACUUM users` there: the table stays near its live rows. Deletes
 * nothing; one statement, idempotent.
 */
import type { Sql } from '../../kernel/sql/sql.js';
import type { RetentionStep, RetentionTask } from '../../kernel/sql/retention.js';

/** {@link RetentionTask} that vacuums `users` on PGlite (a no-op on a server). */
export class PostgresUsersVacuum implements RetentionTask {
  readonly table = 'users';

  constructor(private readonly sql: Sql) {}

  async step(_after: string | null, _nowMs: number): Promise<RetentionStep> {
    if (this.sql.kind === 'pglite') await this.sql.exec('VACUUM users');
    return { deleted: 0, next: null };
  }
}
