/**
 * Bulk loading of follow edges into the graph tables (the `importFollows` use case, `freshet import
 * graph`): one transaction per batch registers the users, locks their rows in id order (as a single
 * follow or block does, so an import and a concurrent block of the same pair are serialized and never
 * deadlock), inserts the edges that no block (either way) forbids in one multi-row statement
 * (idempotent: existing edges are left alone) and moves the follower / following counts of the new
 * edges in the same transaction, so the counts stay exact without a recount.
 */
import type { Sql } from '../../kernel/sql/sql.js';

/** What one batch did. */
export interface EdgesInserted {
  /** Edges that were new. */
  inserted: number;
  /** Edges left out because one of the two users blocks the other. */
  blocked: number;
}

/**
 * Inserts users and edges `[follower, followee]` (valid ids, no self-loops) in one transaction.
 * @returns the new edges and those a block left out.
 */
export async function insertEdges(
  sql: Sql,
  edges: readonly (readonly [string, string])[],
  nowMs: number,
): Promise<EdgesInserted> {
  if (edges.length === 0) return { inserted: 0, blocked: 0 };
  const users = [...new Set(edges.flat())].sort();
  const followers = edges.map((e) => e[0]);
  const followees = edges.map((e) => e[1]);
  return sql.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO users (id, created_at) SELECT unnest($1::text[]), $2::bigint ON CONFLICT (id) DO NOTHING`,
      [users, Math.floor(nowMs)],
    );
    await tx.query(`SELECT 1 FROM users WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`, [users]);
    const [blocked] = await tx.query<{ n: number | string }>(
      `SELECT count(*) AS n FROM (SELECT DISTINCT a, b FROM unnest($1::text[], $2::text[]) AS e (a, b)) e
       WHERE EXISTS (SELECT 1 FROM blocks k WHERE (k.blocker_id = e.a AND k.blocked_id = e.b) OR (k.blocker_id = e.b AND k.blocked_id = e.a))`,
      [followers, followees],
    );
    const rows = await tx.query<{ follower_id: string; followee_id: string }>(
      `INSERT INTO follows (follower_id, followee_id, created_at)
       SELECT a, b, $3::bigint FROM unnest($1::text[], $2::text[]) AS e (a, b)
       WHERE NOT EXISTS (SELECT 1 FROM blocks k WHERE (k.blocker_id = e.a AND k.blocked_id = e.b) OR (k.blocker_id = e.b AND k.blocked_id = e.a))
       ON CONFLICT DO NOTHING RETURNING follower_id, followee_id`,
      [followers, followees, Math.floor(nowMs)],
    );
    if (rows.length > 0) {
      await tx.query(
        `UPDATE users u SET followers = u.followers + c.fr, following = u.following + c.fg
         FROM (SELECT id, sum(fr)::int AS fr, sum(fg)::int AS fg FROM (
                 SELECT unnest($1::text[]) AS id, 1 AS fr, 0 AS fg UNION ALL SELECT unnest($2::text[]), 0, 1) x GROUP BY id) c
         WHERE u.id = c.id`,
        [rows.map((r) => r.followee_id), rows.map((r) => r.follower_id)],
      );
    }
    return { inserted: rows.length, blocked: Number(blocked?.n ?? 0) };
  });
}

/** Recomputes every user's follower and following counts from `follows` (exact afterwards; bench set-up). */
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
