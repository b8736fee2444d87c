/**
 * SocialGraph on PostgreSQL (PGlite or a server, one SQL path): users with their last-active time,
 * follows and blocks (the following design's 关注关系表), exact follower counts, and the pull tids of celebrities.
 * Schema: migration 3 (adapters/schema.ts). Times are epoch ms (`bigint`).
 *
 * Graph edits (follow, unfollow, block, unblock) lock the two users' rows in id order first, so edits of
 * one pair are serialized (a follow can never slip past a concurrent block) and never deadlock; the
 * counters change in the same transaction as the edge.
 */
import { fail } from '../../kernel/errors.js';
import { assertId } from '../../kernel/ids.js';
import type { AuthorInfo, GraphErasure, GraphPage, ReaderState, SocialGraph, UserProfile } from '../social-graph.js';
import type { Sql, SqlTx } from '../../kernel/sql/sql.js';
import { insertEdges } from './postgres-graph-import.js';

/** Rows per INSERT when registering users. */
const USERS_CHUNK = 5_000;

type Edge = 'following' | 'followers' | 'blocks';
/** Table, the listed user's column, the other user's column, per list. */
const LISTS: Record<Edge, [string, string, string]> = {
  following: ['follows', 'follower_id', 'followee_id'],
  followers: ['follows', 'followee_id', 'follower_id'],
  blocks: ['blocks', 'blocker_id', 'blocked_id'],
};

/** Encodes a list cursor: `<sinceMs>.<userId>` (opaque to clients). */
function encodeCursor(sinceMs: number, userId: string): string {
  return Buffer.from(`${sinceMs}.${userId}`).toString('base64url');
}

/** @throws FreshetError INVALID_INPUT for a cursor this module did not make. */
function decodeCursor(cursor: string): [number, string] {
  const m = /^([0-9]{1,16})\.(.+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!m || !/^[A-Za-z0-9_.-]{1,64}$/.test(m[2]!))
    throw fail(
      'INVALID_INPUT',
      'query parameter cursor is not one this API returned: send the next_cursor of the previous page as it came',
    );
  return [Number(m[1]), m[2]!];
}

/** {@link SocialGraph} over `Sql`. Does not own the handle. */
export class PostgresSocialGraph implements SocialGraph {
  constructor(private readonly sql: Sql) {}

  async ensureUsers(userIds: readonly string[], nowMs: number): Promise<number> {
    const ids = [...new Set(userIds)];
    ids.forEach((id) => assertId(id, 'user id'));
    let added = 0;
    for (let i = 0; i < ids.length; i += USERS_CHUNK) {
      const rows = await this.sql.query(
        `INSERT INTO users (id, created_at) SELECT unnest($1::text[]), $2::bigint ON CONFLICT (id) DO NOTHING RETURNING id`,
        [ids.slice(i, i + USERS_CHUNK), Math.floor(nowMs)],
      );
      added += rows.length;
    }
    return added;
  }

  async exists(userIds: readonly string[]): Promise<boolean[]> {
    const rows = await this.sql.query<{ id: string }>(`SELECT id FROM users WHERE id = ANY($1::text[])`, [userIds]);
    const found = new Set(rows.map((r) => r.id));
    return userIds.map((id) => found.has(id));
  }

  async follow(follower: string, followee: string, nowMs: number): Promise<{ created: boolean }> {
    return this.sql.transaction(async (tx) => {
      await this.lockPair(tx, follower, followee, nowMs);
      const blocked = await tx.query(
        `SELECT 1 FROM blocks WHERE (blocker_id = $1 AND blocked_id = $2) OR (blocker_id = $2 AND blocked_id = $1)`,
        [follower, followee],
      );
      if (blocked.length > 0) throw fail('BLOCKED', 'one of the two users blocks the other');
      const rows = await tx.query(
        `INSERT INTO follows (follower_id, followee_id, created_at) VALUES ($1, $2, $3::bigint)
         ON CONFLICT DO NOTHING RETURNING 1`,
        [follower, followee, Math.floor(nowMs)],
      );
      if (rows.length === 0) return { created: false };
      await this.count(tx, follower, followee, +1);
      return { created: true };
    });
  }

  async importFollows(
    edges: readonly (readonly [string, string])[],
    nowMs: number,
  ): Promise<{ inserted: number; blocked: number }> {
    for (const [a, b] of edges) {
      assertId(a, 'user id');
      assertId(b, 'author id');
      if (a === b) throw fail('SELF_REFERENCE', `a user cannot follow itself (${a})`);
    }
    return insertEdges(this.sql, edges, nowMs);
  }

  async unfollow(follower: string, followee: string): Promise<{ removed: boolean }> {
    assertId(follower, 'user id');
    assertId(followee, 'author id');
    return this.sql.transaction(async (tx) => ({ removed: await this.removeFollow(tx, follower, followee) }));
  }

  async block(blocker: string, blocked: string, nowMs: number) {
    return this.sql.transaction(async (tx) => {
      await this.lockPair(tx, blocker, blocked, nowMs);
      const rows = await tx.query(
        `INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES ($1, $2, $3::bigint) ON CONFLICT DO NOTHING RETURNING 1`,
        [blocker, blocked, Math.floor(nowMs)],
      );
      const unfollowed = await this.removeFollow(tx, blocker, blocked);
      const unfollowedBy = await this.removeFollow(tx, blocked, blocker);
      return { created: rows.length > 0, unfollowed, unfollowedBy };
    });
  }

  async unblock(blocker: string, blocked: string): Promise<{ removed: boolean }> {
    assertId(blocker, 'user id');
    assertId(blocked, 'author id');
    const rows = await this.sql.query(`DELETE FROM blocks WHERE blocker_id = $1 AND blocked_id = $2 RETURNING 1`, [
      blocker,
      blocked,
    ]);
    return { removed: rows.length > 0 };
  }

  following(userId: string, limit: number, cursor?: string): Promise<GraphPage> {
    return this.list('following', userId, limit, cursor);
  }

  followers(userId: string, limit: number, cursor?: string): Promise<GraphPage> {
    return this.list('followers', userId, limit, cursor);
  }

  blocks(userId: string, limit: number, cursor?: string): Promise<GraphPage> {
    return this.list('blocks', userId, limit, cursor);
  }

  async touch(userId: string, nowMs: number): Promise<void> {
    assertId(userId, 'user id');
    await this.sql.query(
      `INSERT INTO users (id, created_at, last_active_at) VALUES ($1, $2::bigint, $2::bigint)
       ON CONFLICT (id) DO UPDATE SET last_active_at = greatest(users.last_active_at, excluded.last_active_at)`,
      [userId, Math.floor(nowMs)],
    );
  }

  /** One round trip: the reader's row and its followed authors that have a pull tid. */
  async readerState(readerId: string): Promise<ReaderState> {
    const rows = await this.sql.query<{ author: string | null; v: number | string | null }>(
      `SELECT NULL::text AS author, last_active_at AS v FROM users WHERE id = $1
       UNION ALL
       SELECT f.followee_id, a.pull_tid FROM follows f JOIN users a ON a.id = f.followee_id
       WHERE f.follower_id = $1 AND a.pull_tid IS NOT NULL`,
      [readerId],
    );
    let lastActiveAt: number | null = null;
    const pulled: ReaderState['pulled'] = [];
    for (const r of rows) {
      if (r.author === null) lastActiveAt = r.v === null ? null : Number(r.v);
      else pulled.push({ authorId: r.author, pullTid: Number(r.v) });
    }
    return { lastActiveAt, pulled };
  }

  async readingFollowers(authorId: string, after: string | null, limit: number): Promise<string[]> {
    const rows = await this.sql.query<{ id: string }>(
      `SELECT f.follower_id AS id FROM follows f JOIN users u ON u.id = f.follower_id
       WHERE f.followee_id = $1 AND u.last_active_at IS NOT NULL AND ($2::text IS NULL OR f.follower_id > $2::text)
       ORDER BY f.follower_id LIMIT $3::int`,
      [authorId, after, limit],
    );
    return rows.map((r) => r.id);
  }

  async authorInfo(authorId: string): Promise<AuthorInfo> {
    const rows = await this.sql.query<{ followers: number | string; pull_tid: number | string | null }>(
      `SELECT followers, pull_tid FROM users WHERE id = $1`,
      [authorId],
    );
    const r = rows[0];
    return { followers: Number(r?.followers ?? 0), pullTid: r?.pull_tid == null ? null : Number(r.pull_tid) };
  }

  async markPulled(authorId: string, tid: number): Promise<void> {
    await this.sql.query(`UPDATE users SET pull_tid = greatest(coalesce(pull_tid, 0), $2::bigint) WHERE id = $1`, [
      authorId,
      tid,
    ]);
  }

  async countUsers(): Promise<number> {
    const [row] = await this.sql.query<{ n: number | string }>(`SELECT count(*) AS n FROM users`);
    return Number(row?.n ?? 0);
  }

  async mostFollowed(limit: number): Promise<{ userId: string; followers: number }[]> {
    const rows = await this.sql.query<{ id: string; followers: number | string }>(
      `SELECT id, followers FROM users ORDER BY followers DESC, id LIMIT $1::int`,
      [limit],
    );
    return rows.map((r) => ({ userId: r.id, followers: Number(r.followers) }));
  }

  async close(): Promise<void> {}

  /**
   * Validates the pair, registers the acting user, locks both rows in id order.
   * @throws FreshetError SELF_REFERENCE, UNKNOWN_USER (the target).
   */
  async forgetUser(userId: string): Promise<GraphErasure> {
    assertId(userId, 'user id');
    return this.sql.transaction(async (tx) => {
      await tx.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [userId]);
      const out = await tx.query<{ id: string; n: number | string }>(
        `WITH gone AS (DELETE FROM follows WHERE follower_id = $1 RETURNING followee_id AS id)
         SELECT id, count(*) AS n FROM gone GROUP BY id ORDER BY id`,
        [userId],
      );
      const inn = await tx.query<{ id: string; n: number | string }>(
        `WITH gone AS (DELETE FROM follows WHERE followee_id = $1 RETURNING follower_id AS id)
         SELECT id, count(*) AS n FROM gone GROUP BY id ORDER BY id`,
        [userId],
      );
      // the others' counts, exactly: one edge each, in id order (the order every follow locks users in)
      for (const r of out)
        await tx.query('UPDATE users SET followers = followers - $2::int WHERE id = $1', [r.id, Number(r.n)]);
      for (const r of inn)
        await tx.query('UPDATE users SET following = following - $2::int WHERE id = $1', [r.id, Number(r.n)]);
      const blocks = await tx.query('DELETE FROM blocks WHERE blocker_id = $1 OR blocked_id = $1 RETURNING 1', [
        userId,
      ]);
      const user = await tx.query('DELETE FROM users WHERE id = $1 RETURNING 1', [userId]);
      // the user's pending fan-outs are the timeline's step (FollowingTimeline.forgetUser): jobs first, then rows
      return { following: out.length, followers: inn.length, blocks: blocks.length, user: user.length };
    });
  }

  async profile(userId: string): Promise<UserProfile | null> {
    const rows = await this.sql.query<{
      id: string;
      created_at: string | number;
      last_active_at: string | number | null;
      followers: number;
      following: number;
    }>('SELECT id, created_at, last_active_at, followers, following FROM users WHERE id = $1', [userId]);
    const r = rows[0];
    if (!r) return null;
    const lastActiveAt = r.last_active_at === null ? null : Number(r.last_active_at);
    return { id: r.id, createdAt: Number(r.created_at), lastActiveAt, followers: r.followers, following: r.following };
  }

  private async lockPair(tx: SqlTx, actor: string, target: string, nowMs: number): Promise<void> {
    assertId(actor, 'user id');
    assertId(target, 'author id');
    if (actor === target) throw fail('SELF_REFERENCE', 'a user cannot follow or block itself');
    await tx.query(`INSERT INTO users (id, created_at) VALUES ($1, $2::bigint) ON CONFLICT (id) DO NOTHING`, [
      actor,
      Math.floor(nowMs),
    ]);
    const rows = await tx.query<{ id: string }>(`SELECT id FROM users WHERE id IN ($1, $2) ORDER BY id FOR UPDATE`, [
      actor,
      target,
    ]);
    if (!rows.some((r) => r.id === target)) throw fail('UNKNOWN_USER', `no user ${target}`);
  }

  private async removeFollow(tx: SqlTx, follower: string, followee: string): Promise<boolean> {
    const rows = await tx.query(`DELETE FROM follows WHERE follower_id = $1 AND followee_id = $2 RETURNING 1`, [
      follower,
      followee,
    ]);
    if (rows.length === 0) return false;
    await this.count(tx, follower, followee, -1);
    return true;
  }

  private async count(tx: SqlTx, follower: string, followee: string, delta: 1 | -1): Promise<void> {
    await tx.query(
      `UPDATE users SET followers = followers + CASE WHEN id = $2 THEN $3::int ELSE 0 END,
                        following = following + CASE WHEN id = $1 THEN $3::int ELSE 0 END
       WHERE id IN ($1, $2)`,
      [follower, followee, delta],
    );
  }

  private async list(edge: Edge, userId: string, limit: number, cursor?: string): Promise<GraphPage> {
    assertId(userId, 'user id');
    const [table, mine, other] = LISTS[edge];
    const [ms, id] = cursor ? decodeCursor(cursor) : [null, null];
    const rows = await this.sql.query<{ other: string; created_at: number | string }>(
      `SELECT ${other} AS other, created_at FROM ${table}
       WHERE ${mine} = $1 AND ($2::bigint IS NULL OR (created_at, ${other}) < ($2::bigint, $3::text))
       ORDER BY created_at DESC, ${other} DESC LIMIT $4::int`,
      [userId, ms, id, limit + 1],
    );
    const entries = rows.slice(0, limit).map((r) => ({ userId: r.other, sinceMs: Number(r.created_at) }));
    const last = entries[entries.length - 1];
    return { entries, nextCursor: rows.length > limit && last ? encodeCursor(last.sinceMs, last.userId) : null };
  }
}
