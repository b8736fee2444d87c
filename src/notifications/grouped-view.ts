/**
 * GroupedView port: each recipient's grouped notifications as the feed reads them — a bounded structure
 * in Redis (or in process, the embedded default) kept in step with the events (PostgreSQL) by the write
 * path and rebuilt from them when lost. Writing an event costs O(1) whatever the group's size (a like of a
 * post 100,000 readers liked is one counter increment, one short field and one ZADD), never O(group size).
 *
 * States of a recipient's view: absent (never built, expired or lost: the next read rebuilds it), building
 * (a rebuild read PostgreSQL and has not written yet: writes mark it dirty, and a dirty rebuild is not
 * completed — the read tries again, so a write that raced a rebuild is never lost), ready.
 *
 * Contract (test/contracts/grouped-view.contract.ts, memory and Redis):
 * - `add`/`remove` change a ready view only (answer false / 'absent' otherwise) and mark a building view dirty;
 * - a ready view holds at most `maxGroups` groups: adding past it drops the oldest groups and marks the
 *   view truncated (older groups are then read from the store);
 * - `page` answers groups with `latestId` below `beforeId`, newest first; null when the view is not ready;
 * - `completeRebuild` writes only when no write came since `beginRebuild` with the same token.
 */
import type { NotificationEvent, NotificationGroup } from './domain.js';

/** A page of a ready view. */
export interface ViewPage {
  groups: NotificationGroup[];
  /** The view dropped older groups (or the rebuild found more than it holds): the store has older ones. */
  truncated: boolean;
}

export interface GroupedView {
  /** Counts a recorded event into its group (a ready view), or marks a building view dirty. @returns whether a ready view took it. */
  add(e: NotificationEvent): Promise<boolean>;
  /**
   * Takes a retracted event out of its group: count − 1 (the group leaves at 0) and the actor out of the
   * recent actors. @returns `refill` when the group's recent actors or newest event need the store
   * (then call {@link refill}), `ok`, or `absent` (no ready view).
   */
  remove(e: NotificationEvent): Promise<'ok' | 'refill' | 'absent'>;
  /** Replaces a group's recent actors and newest event (after a `remove` said `refill`); its count is kept. */
  refill(
    recipientId: string,
    group: Pick<NotificationGroup, 'groupKey' | 'actors' | 'latestId' | 'latestAt'>,
  ): Promise<void>;
  /** Groups with `latestId` below `beforeId` (null: from the newest), newest first, at most `limit`; null when not ready. */
  page(recipientId: string, beforeId: number | null, limit: number): Promise<ViewPage | null>;
  /** Groups with `latestId` above `afterId`; null when not ready. */
  countAfter(recipientId: string, afterId: number): Promise<{ count: number; truncated: boolean } | null>;
  /** Starts a rebuild (the view goes to building). @returns its token. */
  beginRebuild(recipientId: string): Promise<string>;
  /**
   * Writes the rebuilt groups (newest first, at most `maxGroups`) and makes the view ready — only when no
   * write came since {@link beginRebuild} gave `token`. @returns false when one came (rebuild again).
   */
  completeRebuild(
    recipientId: string,
    token: string,
    groups: readonly NotificationGroup[],
    truncated: boolean,
  ): Promise<boolean>;
  /** Drops the recipient's view (erase; a test's "Redis lost"). */
  forget(recipientId: string): Promise<void>;
}
