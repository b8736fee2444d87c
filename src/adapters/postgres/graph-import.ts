/**
 * Bulk loading of a follow-edge list into the graph tables (for `freshet import graph`): users and
 * follows are inserted in large multi-row statements (idempotent: existing rows are left alone), and
 * the follower / following counts are recomputed once at the end instead of row by row.
 */
import type { Sql } from './sql.js';

/** Inserts users and edges `[follower, followee]` (valid ids, no self-loops) in one transaction. @returns new edges. */
export async function insertEdges(sql: Sql, edges: readonly (readonly [string, string])[], nowMs: number): Promise<number> {
  if (edges.length === 0) return 0;
  const users = [...new Set(edges.flat())];
  return sql.transaction(async (tx) => {
    await tx.query(`INSERT INTO users (id, created_at) SELECT unnest($1::text[]), $2::bigint ON CONFLICT (id) DO NOTHING`, [users, Math.floor(nowMs)]);
    const rows = await tx.query(
      `INSERT INTO follows (follower_id, followee_id, created_at)
       SELECT a, b, $3::bigint FROM unnest($1::text[], $2::text[]) AS e (a, b) ON CONFLICT DO NOTHING RETURNING 1`,
      [edges.map((e) => e[0]), edges.map((e) => e[1]), Math.floor(nowMs)],
    );
    return rows.length;
  });
}

/** Recomputes every user's follower and following counts from `follows` (exact afterwards). */
export async function recountFollows(sql: Sql): Promise<void> {
  await sql.exec(`
    UPDATE users u SET followers = coalesce(c.n, 0)
      FROM (SELECT id, (SELECT count(*) FROM follows f WHERE f.followee_id = users.id) AS n FROM users) c
      WHERE c.id = u.id AND u.followers IS DISTINCT FROM coalesce(c.n, 0);
    UPDATE users u SET following = coalesce(c.n, 0)
      FROM (SELECT id, (SELECT count(*) FROM follows f WHERE f.follower_id = users.id) AS n FROM users) c
      WHERE c.id = u.id AND u.following IS DISTINCT FROM coalesce(c.n, 0);
  `);
}
