/**
 * NotificationStore port: the truth of the notifications (PostgreSQL): events, grouped reads of them (a
 * rebuild of the grouped view, deep pages, the unread count past the view) and the read markers.
 *
 * Contract (test/contracts/notification-store.contract.ts, PGlite and PostgreSQL):
 * - `record` inserts an event and returns it with its id (ids increase with each insert); Freshet's own
 *   types are recorded once per (recipient, group, actor): a second call returns null and writes nothing.
 * - `retract` deletes the newest event of (recipient, type, actor, item) recorded at or after `sinceMs`
 *   and returns it, or null.
 * - `groups` aggregates a recipient's events by group, newest group first (by its newest event id), only
 *   groups whose newest event id is below `beforeId` (null: all), at most `limit`; actor counts exact.
 * - `markers` only move forward unless forced (a marker above the recipient's newest event id is refused
 *   before the store is asked: `Notifications.setMarker`, service.ts).
 * - `forgetUser` deletes the events a user received and caused and their marker, naming the recipients they
 *   notified; `received` lists a reader's events newest first with their data; `prune` deletes the oldest
 *   events before a time, a batch at a time.
 */
import type { NotificationEvent, NotificationGroup, NotificationType } from './domain.js';

/** An event to record (the store assigns its id). */
export type NewNotification = Omit<NotificationEvent, 'id'> & { data?: unknown };

/** A reader's notifications marker. */
export interface NotificationMarker {
  /** The newest event id the reader has read (0: none). */
  lastReadId: number;
  /** When it was last moved, epoch ms (null: never set). */
  updatedAt: number | null;
}

export interface NotificationStore {
  /** Records an event. @returns it with its id, or null when it was recorded already (own types). */
  record(e: NewNotification): Promise<NotificationEvent | null>;
  /**
   * Records a batch in one statement, in batch order (ids increase along it), each as {@link record} would.
   * @returns per event, in order: it with its id, or null when it was recorded already (an earlier one of
   *   the batch included).
   */
  recordMany(events: readonly NewNotification[]): Promise<(NotificationEvent | null)[]>;
  /** Deletes the newest matching event recorded at or after `sinceMs`. @returns it, or null. */
  retract(
    recipientId: string,
    type: NotificationType,
    actorId: string,
    itemId: string | null,
    sinceMs: number,
  ): Promise<NotificationEvent | null>;
  /** Groups of a recipient, newest first, whose newest event id is below `beforeId` (null: all). */
  groups(recipientId: string, beforeId: number | null, limit: number): Promise<NotificationGroup[]>;
  /** One group of a recipient (its newest event, count and recent actors), or null when it has no event. */
  group(recipientId: string, groupKey: string): Promise<NotificationGroup | null>;
  /** Groups whose newest event id is above `afterId`, counted up to `cap` (then `cap`). */
  countGroupsAfter(recipientId: string, afterId: number, cap: number): Promise<number>;
  /** The recipient's newest event id, 0 when none. */
  newestId(recipientId: string): Promise<number>;
  getMarker(readerId: string): Promise<NotificationMarker>;
  /**
   * Moves the marker to `lastReadId` when it is ahead of the stored one, or always with `force`.
   * @returns the marker as stored after the call, and whether this call moved it.
   */
  setMarker(
    readerId: string,
    lastReadId: number,
    nowMs: number,
    force: boolean,
  ): Promise<NotificationMarker & { moved: boolean }>;
  /**
   * Erases a user: the events they received or caused, and their marker (one transaction).
   * @returns rows removed, and the other recipients whose events they caused (their views are stale).
   */
  forgetUser(userId: string): Promise<{ received: number; caused: number; markers: number; recipients: string[] }>;
  /**
   * The `data` of the recipient's events among `ids` that carry some (an application's notification):
   * event id → its data. One primary-key lookup per id.
   */
  dataOf(recipientId: string, ids: readonly number[]): Promise<Map<number, unknown>>;
  /** The events a reader received, newest first, at most `limit` (export). */
  received(readerId: string, limit: number): Promise<(NotificationEvent & { data: unknown })[]>;
  /** Deletes up to `batch` events recorded before `beforeMs`. @returns how many. */
  prune(beforeMs: number, batch: number): Promise<number>;
}
