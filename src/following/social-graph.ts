/**
 * SocialGraph port: users (with their last-active time), follows and blocks — PostgreSQL is the truth
 * (docs/architecture.md "Where state lives"). The following design's 关注关系表 and its hot/cold (冷热) split.
 *
 * Contract (test/contracts/social-graph.contract.ts, against PGlite and a PostgreSQL server):
 * - Users are known once registered (`ensureUsers`), by authoring a published item, by following, or by
 *   reading a timeline (`touch`). Follow and block targets must be known (FreshetError UNKNOWN_USER);
 *   the acting user is registered on the way.
 * - `follow` is idempotent (`created` false the second time) and keeps the first follow time; following
 *   oneself is SELF_REFERENCE, following across a block (either direction) is BLOCKED. Follower counts
 *   stay exact under any mix of follows, unfollows, blocks and bulk imports (`importFollows`, which skips
 *   and counts the edges a block forbids instead of failing).
 * - `block` removes the follows in both directions and reports which it removed; it is idempotent.
 * - `touch` only ever moves `lastActiveAt` forward.
 * - Lists are newest first with an opaque cursor; paging through a list never repeats or skips.
 * - `readingFollowers` pages (by follower id) the followers of an author who ever read a timeline
 *   (`lastActiveAt` set): every follower that can hold an inbox.
 * - `markPulled` raises the author's pull tid (never lowers it); `readerState` lists the followed
 *   authors that have one, with it (the authors whose outboxes a read must merge).
 */

/** What {@link SocialGraph.forgetUser} removed. */
export interface GraphErasure {
  following: number;
  followers: number;
  blocks: number;
  user: number;
}

/** A user's row as the graph keeps it (times epoch ms). */
export interface UserProfile {
  id: string;
  createdAt: number;
  lastActiveAt: number | null;
  followers: number;
  following: number;
}

/** One entry of a following / followers / blocks list. */
export interface GraphEntry {
  userId: string;
  /** When the edge was created, epoch ms. */
  sinceMs: number;
}

/** A page of a list and the cursor of the next one (null at the end). */
export interface GraphPage {
  entries: GraphEntry[];
  nextCursor: string | null;
}

/** A followed author whose outbox a read must merge (some of its items were not pushed). */
export interface PulledAuthor {
  authorId: string;
  /** The newest tid the fan-out did not push (the author was a celebrity then). */
  pullTid: number;
}

/** What a read needs to know about its reader. */
export interface ReaderState {
  /** Last time the reader read a timeline, epoch ms (virtual time); null for a new reader. */
  lastActiveAt: number | null;
  pulled: PulledAuthor[];
}

/** A publisher as the fan-out sees it. */
export interface AuthorInfo {
  followers: number;
  /** Null while every item of the author was pushed. */
  pullTid: number | null;
}

export interface SocialGraph {
  /** Registers users (idempotent). @returns how many were new. */
  ensureUsers(userIds: readonly string[], nowMs: number): Promise<number>;
  /** True for registered users, aligned with `userIds`. */
  exists(userIds: readonly string[]): Promise<boolean[]>;
  /**
   * `follower` follows `followee` at `nowMs`.
   * @throws FreshetError SELF_REFERENCE, UNKNOWN_USER (followee), BLOCKED.
   */
  follow(follower: string, followee: string, nowMs: number): Promise<{ created: boolean }>;
  /**
   * Bulk follows `[follower, followee]` at `nowMs` (a graph import): registers the users, adds the edges
   * that are new and that no block (either way) forbids, and moves the counts — one transaction. Idempotent.
   * @throws FreshetError INVALID_ID (an id), SELF_REFERENCE (an edge from a user to itself) — nothing written.
   */
  importFollows(
    edges: readonly (readonly [string, string])[],
    nowMs: number,
  ): Promise<{ inserted: number; blocked: number }>;
  /** Removes the follow; `removed` false when there was none. */
  unfollow(follower: string, followee: string): Promise<{ removed: boolean }>;
  /**
   * `blocker` blocks `blocked`: the follows both ways are removed in the same transaction.
   * @throws FreshetError SELF_REFERENCE, UNKNOWN_USER (blocked).
   */
  block(
    blocker: string,
    blocked: string,
    nowMs: number,
  ): Promise<{ created: boolean; unfollowed: boolean; unfollowedBy: boolean }>;
  unblock(blocker: string, blocked: string): Promise<{ removed: boolean }>;
  /** Whom the user follows, newest follow first. @throws FreshetError INVALID_INPUT for a bad cursor. */
  following(userId: string, limit: number, cursor?: string): Promise<GraphPage>;
  /** Who follows the user, newest first. */
  followers(userId: string, limit: number, cursor?: string): Promise<GraphPage>;
  /** Whom the user blocks, newest first. */
  blocks(userId: string, limit: number, cursor?: string): Promise<GraphPage>;
  /** Records a read at `nowMs` (registers the user); never moves the time back. */
  touch(userId: string, nowMs: number): Promise<void>;
  /** The reader's last-active time and the followed authors with a pull tid. */
  readerState(readerId: string): Promise<ReaderState>;
  /**
   * Followers of `authorId` who ever read a timeline (`lastActiveAt` set) with id > `after`, by id, at
   * most `limit`: a superset of the followers holding an inbox (an inbox is prepared only by a read,
   * which sets `lastActiveAt` before trusting it, and `lastActiveAt` is never cleared).
   */
  readingFollowers(authorId: string, after: string | null, limit: number): Promise<string[]>;
  /** Follower count and pull tid of an author (zeros for an unknown one). */
  authorInfo(authorId: string): Promise<AuthorInfo>;
  /** Raises the author's pull tid to at least `tid`. */
  markPulled(authorId: string, tid: number): Promise<void>;
  /** How many users are registered. */
  countUsers(): Promise<number>;
  /**
   * Erases a user from the graph in one transaction: their follows both ways (the others' follower and
   * following counts go down exactly), their blocks both ways, their row. Idempotent (a second call removes
   * nothing). The pending fan-outs of their items are the timeline's (FollowingTimeline.forgetUser).
   * @returns what was removed.
   */
  forgetUser(userId: string): Promise<GraphErasure>;
  /** A user's row, for an export (null: unknown). */
  profile(userId: string): Promise<UserProfile | null>;
  /** Registered users by follower count, most followed first (ties by id): the simulation's mapping. */
  mostFollowed(limit: number): Promise<{ userId: string; followers: number }[]>;
  close(): Promise<void>;
}
