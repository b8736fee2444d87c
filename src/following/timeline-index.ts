/**
 * TimelineIndex port: the following timeline's side of PostgreSQL — timeline ids of published items,
 * the fan-outs still in flight (the visibility watermark), and the SQL form of a reader's timeline
 * (regeneration, deep pages beyond the Redis floors, the correctness check of the simulation).
 *
 * Contract (test/contracts/timeline-index.contract.ts, against PGlite and a PostgreSQL server):
 * - `publish` gives every live item of the batch that has no tid yet a fresh tid (domain.ts
 *   `nextTids`: strictly increasing in commit order, ≥ now × 2^11), registers its author, and records a
 *   pending fan-out — all in one transaction. Items already published are left alone (idempotent).
 *   Within a batch tids follow `published_at`, then id.
 * - `watermark()` is the smallest tid a read may not serve yet: min(smallest pending tid, last assigned
 *   tid + 1), from one snapshot. Readers see only tids below it, so a tid published while a read runs
 *   (even one whose fan-out finished first) waits for the next read instead of landing above an older
 *   tid whose fan-out is still running (which `since_id` would then skip for ever). `completeFanout`
 *   removes the pending row.
 * - `readView(reader)` = `SocialGraph.readerState(reader)` + `watermark()`, from one snapshot.
 * - `timeline(reader, hi, lo, limit)` = the live items, with a tid in (lo, hi), of the authors the reader
 *   follows and does not block, newest tid first — the definition of "what the reader should see".
 * - `visible(reader, tids)` hydrates tids into items and says which are hidden and why.
 */
import type { Item } from '../kernel/items/item.js';
import type { ReaderState } from './social-graph.js';

/** A published item as the fan-out needs it. */
export interface Published {
  itemId: string;
  authorId: string;
  tid: number;
}

/** A pending fan-out. */
export interface PendingFanout extends Published {
  /** When it was recorded, epoch ms of the publisher's clock (virtual in replays). */
  nowMs: number;
  /** Wall-clock epoch ms of the recording (for the sweep and lag). */
  recordedAtMs: number;
}

/** What a read starts from: the reader's state and the watermark, from ONE snapshot (see `readView`). */
export interface ReaderView extends ReaderState {
  /** As {@link TimelineIndex.watermark}. */
  watermark: number;
}

/** An item on a timeline. */
export interface TimelineItem {
  tid: number;
  item: Item;
}

/** The answer of {@link TimelineIndex.visible}. */
export interface VisibleResult {
  /** Visible items, in the order of the tids asked. */
  items: TimelineItem[];
  /** Tids of deleted or unknown items (drop them from inboxes and outboxes). */
  deleted: number[];
  /** Tids whose author the reader no longer follows or blocks (drop them from the inbox). */
  unfollowed: number[];
}

export interface TimelineIndex {
  /** Publishes the items of `itemIds` that have no tid yet (see the contract). */
  publish(itemIds: readonly string[], nowMs: number): Promise<Published[]>;
  /** Reads see tids strictly below this: min(smallest pending tid, last assigned tid + 1); 1 before any publish. */
  watermark(): Promise<number>;
  /**
   * The reader's state (`SocialGraph.readerState`) and the watermark in one statement, so one snapshot:
   * a celebrity item whose fan-out is done (below the watermark) always comes with its author's pull tid
   * (the worker commits `markPulled` before `completeFanout`). Read separately, a read could see the item
   * as visible but the author not yet pulled, and skip it for good.
   */
  readView(readerId: string): Promise<ReaderView>;
  /** Marks a fan-out done. */
  completeFanout(tid: number): Promise<void>;
  /**
   * Whether the fan-out of `tid` is still to do (its pending row exists): a job whose row is gone was done
   * already, or its author was erased — either way it writes nothing (FanoutWorker).
   */
  isPending(tid: number): Promise<boolean>;
  /** The tids of an author's pending fan-outs, oldest first (erase: their queued jobs are removed first). */
  pendingOf(authorId: string): Promise<number[]>;
  /** Deletes an author's pending fan-outs (erase, after their queued jobs). @returns rows removed. */
  forgetPending(authorId: string): Promise<number>;
  /**
   * Live items that were never published (no tid): a publish that failed after its items were committed
   * (src/use-cases/verbs.ts `publishItems`). Oldest `update_time` first, at most `limit`; the sweep
   * publishes them with their `update_time` as the publish time.
   */
  unpublished(limit: number): Promise<{ itemId: string; updateTimeMs: number }[]>;
  /** Pending fan-outs recorded before `wallBeforeMs` (wall clock), oldest first: the sweep re-enqueues them. */
  pendingBefore(wallBeforeMs: number, limit: number): Promise<PendingFanout[]>;
  /** The reader's timeline in SQL: items in (lo, hi) of followed, unblocked authors, newest first. */
  timeline(readerId: string, hi: number, lo: number, limit: number): Promise<TimelineItem[]>;
  /** Tids only, same rule as {@link timeline} (regeneration, checks). */
  timelineTids(readerId: string, hi: number, lo: number, limit: number): Promise<number[]>;
  /**
   * The reader's timeline in (lo, hi) **oldest first**, at most `limit` (catch-up from a read marker):
   * followed, not blocked, not deleted — the rules of {@link timeline}, in the other direction.
   */
  timelineAfter(readerId: string, lo: number, hi: number, limit: number): Promise<TimelineItem[]>;
  /** Deletes the reader's marker (erase). @returns rows removed. */
  forgetMarker(readerId: string): Promise<number>;
  /** The reader's read marker (0 and null: never set). */
  marker(readerId: string): Promise<{ lastReadId: number; updatedAt: number | null }>;
  /**
   * Moves the marker to `lastReadId` when ahead of the stored one, or always with `force`.
   * @returns the marker as stored after the call and whether this call moved it.
   */
  setMarker(
    readerId: string,
    lastReadId: number,
    nowMs: number,
    force: boolean,
  ): Promise<{ lastReadId: number; updatedAt: number | null; moved: boolean }>;
  /** Hydrates tids for a reader: visible items, and the hidden tids by reason. */
  visible(readerId: string, tids: readonly number[]): Promise<VisibleResult>;
  /** The author's newest live tids below `hi`, newest first (follow backfill, unfollow removal). */
  authorTids(authorId: string, hi: number, limit: number): Promise<number[]>;
  /** Tids of items (null for an unpublished or unknown one), aligned with `itemIds`. */
  tidsOf(itemIds: readonly string[]): Promise<(number | null)[]>;
}
