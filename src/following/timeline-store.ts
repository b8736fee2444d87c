/**
 * TimelineStore port: the hot state of the following timeline (docs/following.md) — one **outbox** per
 * author and one **inbox** per reader, each an ordered set of tids (src/following/domain.ts; on Redis a
 * packed ring of 7-byte tids, src/following/lua/includes/ring.lua), plus a small per-reader state:
 * whether the inbox is being built or ready, and its **floor** (entries at or below it may be missing:
 * PostgreSQL answers there).
 *
 * Contract (test/contracts/timeline-store.contract.ts, against the memory and Redis adapters):
 * - Inboxes exist only once prepared (`beginRebuild`); `pushToInboxes` delivers only to prepared inboxes
 *   (building or ready) and reports how many received the tid, so fan-out never creates a partial inbox
 *   that a later read would trust. Pushing a tid twice changes nothing (idempotent).
 * - Every write that adds entries trims the box to its `maxLen` newest and raises its floor to the
 *   highest tid it removed; the floor never goes down. Entries at or below the floor are dropped.
 * - `completeRebuild` merges (never replaces: pushes that landed during the rebuild stay), raises the
 *   floor to the given one, trims, and marks the inbox ready.
 * - `mergeIntoInbox` (follow backfill) adds only to a prepared inbox, like a push.
 * - `dropInboxes` removes inboxes with their state: they read as missing afterwards.
 * - Reads return tids strictly inside (lo, hi), newest first, at most `count`, with the source's floor.
 * - Readers and authors are independent; ids must be valid ids (`assertId`, FreshetError INVALID_ID).
 * - Outboxes: a new outbox (an author's first append, or one that expired or was lost) starts with
 *   floor = its first tid − 1; an outbox that does not exist reads with floor {@link MISSING_FLOOR}
 *   (nothing trusted: PostgreSQL answers for the author), never as a complete, empty one.
 * - Redis only: the inbox and its state carry a time to live (wall clock), refreshed by `touch`; an
 *   expired inbox reads as missing and is rebuilt. An outbox and its state live `ttlMs` after the
 *   author's last append. Every key gets its time to live in the script that creates it. The memory
 *   adapter keeps both until restart.
 */
import { MAX_TID } from './domain.js';

/** The floor an outbox that does not exist reads with: every tid may be missing from it. */
export const MISSING_FLOOR = MAX_TID;

/** Whether a reader's inbox can be trusted. */
export type InboxState = 'missing' | 'building' | 'ready';

/** A range read: tids strictly between `lo` and `hi`, newest first, at most `count`. */
export interface TidRange {
  /** Exclusive upper bound (a tid or `Infinity`). */
  hi: number;
  /** Exclusive lower bound (0 for the start of time). */
  lo: number;
  count: number;
}

/** What an inbox read answers. */
export interface InboxSlice {
  state: InboxState;
  /** Entries at or below this may be missing (0: complete). */
  floor: number;
  tids: number[];
}

/** What the inboxes hold, for reports ({@link TimelineStore.inboxStats}). */
export interface InboxStats {
  /** Inboxes held. */
  count: number;
  /** Timeline ids in them, all inboxes together. */
  entries: number;
  /** Bytes the store holds for them (Redis `MEMORY USAGE`); null in process. */
  bytes: number | null;
  /** Inboxes without a time to live (Redis; each should have one); null in process. */
  withoutTtl: number | null;
}

/** What an outbox read answers. */
export interface OutboxSlice {
  floor: number;
  tids: number[];
}

export interface TimelineStore {
  /**
   * Adds a tid to the author's outbox (idempotent), trimming it to `maxLen`; the outbox lives `ttlMs`
   * (wall clock) after this append on Redis.
   */
  appendToOutbox(authorId: string, tid: number, maxLen: number, ttlMs: number): Promise<void>;
  /**
   * Pushes one tid into the inboxes of `readerIds` that are prepared (Mastodon's `push_to_home` for a
   * chunk of followers), trimming each to `maxLen`. @returns how many inboxes received it.
   */
  pushToInboxes(readerIds: readonly string[], tid: number, maxLen: number): Promise<number>;
  /** Reads the reader's inbox state, floor and a range of its tids (one round trip). */
  readInbox(readerId: string, range: TidRange): Promise<InboxSlice>;
  /** Reads a range of each author's outbox, in the order of `authorIds`. */
  readOutboxes(authorIds: readonly string[], range: TidRange): Promise<OutboxSlice[]>;
  /** Prepares the inbox for a rebuild: state `building` (kept floor), so pushes start landing. */
  beginRebuild(readerId: string, ttlMs: number): Promise<void>;
  /**
   * Merges the rebuilt tids, raises the floor to `floor`, trims to `maxLen`, marks the inbox ready
   * (Mastodon's `populate_home`).
   */
  completeRebuild(
    readerId: string,
    tids: readonly number[],
    floor: number,
    maxLen: number,
    ttlMs: number,
  ): Promise<void>;
  /**
   * Adds tids to a prepared inbox (follow backfill), raising the floor to `floor` when the backfill was
   * cut short. @returns false when the inbox is not prepared (nothing written).
   */
  mergeIntoInbox(readerId: string, tids: readonly number[], floor: number, maxLen: number): Promise<boolean>;
  /** Removes tids from the reader's inbox (unfollow, block, lazy removal of deleted items). */
  removeFromInbox(readerId: string, tids: readonly number[]): Promise<void>;
  /** Removes tids from an author's outbox (lazy removal of deleted items). */
  removeFromOutbox(authorId: string, tids: readonly number[]): Promise<void>;
  /**
   * Drops the readers' inboxes and their state (a bulk follow import changed whom they follow): each
   * reads as missing and is rebuilt from PostgreSQL on its reader's next read. Readers without one are skipped.
   */
  dropInboxes(readerIds: readonly string[]): Promise<void>;
  /** Deletes the user's inbox and outbox with their state (erase). */
  forget(userId: string): Promise<void>;
  /** Refreshes the time to live of the reader's inbox and state (Redis; a no-op in memory). */
  touch(readerId: string, ttlMs: number): Promise<void>;
  /**
   * What every inbox holds, for reports (`freshet simulate following`). Visits every inbox (on Redis a
   * SCAN of each master and a few commands per inbox): a tool's call, never a request's.
   */
  inboxStats(): Promise<InboxStats>;
  close(): Promise<void>;
}
