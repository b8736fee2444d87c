/**
 * SocialGraph port: users (with their last-active time), follows and blocks — PostgreSQL is the truth
 * (DESIGN.md "Where state lives"). Design note 4's 关注关系表 and its hot/cold (冷热) split.
 *
 * Contract (test/contracts/social-graph.contract.ts, against PGlite and a PostgreSQL server):
 * - Users are known once registered (`ensureUsers`), by authoring a published item, by following, or by
 *   reading a timeline (`touch`). Follow and block targets must be known (FreshetError UNKNOWN_USER);
 *   the acting user is registered on the way.
 * - `follow` is idempotent (`created` false the second time) and keeps the first follow time; following
 *   oneself is SELF_REFERENCE, following across a block (either direction) is BLOCKED. Follower counts
 *   stay exact under any mix of follows, unfollows and blocks.
 * - `block` removes the follows in both directions and reports which it removed; it is idempotent.
 * - `touch` only ever moves `lastActiveAt` forward.
 * - Lists are newest first with an opaque cursor; paging through a list never repeats or skips.
 * - `activeFollowers` pages (by follower id) the followers of an author active at or after `sinceMs`.
 * - `markPulled` raises the author's pull tid (never lowers it); `readerState` lists the followed
 *   authors that have one, with it (the authors whose outboxes a read must merge).
 */

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
  /** Removes the follow; `removed` false when there was none. */
  unfollow(follower: string, followee: string): Promise<{ removed: boolean }>;
  /**
   * `blocker` blocks `blocked`: the follows both ways are removed in the same transaction.
   * @throws FreshetError SELF_REFERENCE, UNKNOWN_USER (blocked).
   */
  block(blocker: string, blocked: string, nowMs: number): Promise<{ created: boolean; unfollowed: boolean; unfollowedBy: boolean }>;
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
  /** Followers of `authorId` with `lastActiveAt >= sinceMs` and id > `after`, by id, at most `limit`. */
  activeFollowers(authorId: string, sinceMs: number, after: string | null, limit: number): Promise<string[]>;
  /** Follower count and pull tid of an author (zeros for an unknown one). */
  authorInfo(authorId: string): Promise<AuthorInfo>;
  /** Raises the author's pull tid to at least `tid`. */
  markPulled(authorId: string, tid: number): Promise<void>;
  /** Registered users by follower count, most followed first (ties by id): the simulation's mapping. */
  mostFollowed(limit: number): Promise<{ userId: string; followers: number }[]>;
  close(): Promise<void>;
}
