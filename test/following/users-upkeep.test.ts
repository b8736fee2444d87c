/**
 * The upkeep of `users` on PGlite (src/following/adapters/postgres-users-vacuum.ts): follower counts are
 * indexed, so every follow leaves a dead row version and index entry that only VACUUM reclaims, and PGlite
 * has no autovacuum. After the retention pass's `VACUUM users`, the same rewrites reuse the space instead
 * of growing the table again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresUsersVacuum } from '../../src/following/adapters/postgres-users-vacuum.js';
import { RetentionSweeper } from '../../src/use-cases/retention.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { openTestPglite } from '../support/pglite.js';

const sql = await openTestPglite();
afterAll(() => sql.close());

/** Bytes of the `users` table's rows (its heap; the index's freed pages are recycled a vacuum later). */
async function size(): Promise<number> {
  return Number((await sql.query<{ n: string }>(`SELECT pg_relation_size('users') AS n`))[0]!.n);
}

/** Rewrites every user's follower count `times` times (what follows and unfollows do). */
async function churn(times: number): Promise<void> {
  for (let i = 0; i < times; i++) await sql.query('UPDATE users SET followers = followers + 1');
}

describe('users upkeep on PGlite', () => {
  it('VACUUM users lets the rewrites of follower counts reuse their space instead of growing the table', async () => {
    await sql.query(`INSERT INTO users (id, created_at) SELECT 'u' || g, 0 FROM generate_series(1, 1000) g`);
    await churn(6);
    const grown = await size();
    expect(await new RetentionSweeper([new PostgresUsersVacuum(sql)], silentLogger).sweep(0)).toEqual({ users: 0 });
    await churn(6);
    expect(await size()).toBeLessThanOrEqual(grown); // reused, not grown
    await churn(6); // without another VACUUM it grows again
    expect(await size()).toBeGreaterThan(grown);
  });
});
