/**
 * Notifications: what happened to a reader's items and account, grouped ("alice and 3 others liked your
 * post"), with a read marker and an unread count (docs/notifications.md).
 *
 * Writes: an event is recorded in PostgreSQL (the truth) and then counted into the recipient's grouped
 * view (O(1): grouped-view.ts); processes are told the recipient's notifications changed (a channel), so
 * an open stream can announce it. Nobody is notified of their own action, nor by an actor either side
 * blocks or the recipient mutes (the recipient's exclusions snapshot: one read). An undone like within the grouping window
 * takes its event out again.
 *
 * Reads: a page comes from the view (rebuilt from PostgreSQL when absent: lost, expired, never built),
 * continued from PostgreSQL below what the view holds; groups of deleted items are left out. The unread
 * count is the number of groups whose newest event is above the reader's marker, exact up to the view's bound.
 */
import { fail } from '../kernel/errors.js';
import { assertId } from '../kernel/ids.js';
import type { ExclusionSource, ReaderExclusions } from '../kernel/exclusion-source.js';
import type { Logger } from '../kernel/observability.js';
import {
  groupKey,
  isHookType,
  validateHook,
  type HookNotification,
  type NotificationEvent,
  type NotificationGroup,
  type NotificationType,
} from './domain.js';
import type { GroupedView } from './grouped-view.js';
import type { NotificationMarker, NotificationStore } from './notification-store.js';

/** Tunables (config `FRESHET_NOTIFICATION_*`); durations in ms. */
export interface NotificationSettings {
  /** Grouping window (default 24 h): one group per (type, item) per window; follows per UTC day. */
  windowMs: number;
  /** Groups a recipient's view holds (older ones are read from PostgreSQL). */
  maxGroups: number;
  /** Events older than this are deleted by the sweep (default 90 days). */
  retentionMs: number;
}

/** What the service depends on. */
export interface NotificationDeps {
  store: NotificationStore;
  view: GroupedView;
  /** The recipient's exclusions: its blocked authors (both ways) and muted ones are never notified. */
  exclusions: ExclusionSource;
  /** The live ones among item ids (deleted items' groups leave the feed). */
  liveItems(ids: readonly string[]): Promise<Set<string>>;
  /** Tells every process a recipient's notifications changed (`onChange` listeners hear it). */
  changed(recipientId: string): void;
  log: Logger;
}

/** A group as a reader reads it. */
export interface ReadGroup extends NotificationGroup {
  /** Its newest event is at or below the reader's marker. */
  read: boolean;
  /**
   * A group of an application's type (`mention`, `app.<name>`) only: the `data` its newest event was sent
   * with (null when it had none). Freshet's own groups carry none.
   */
  data?: unknown;
}

/** A page of the grouped feed. */
export interface NotificationPage {
  groups: ReadGroup[];
  /** `max_id` of the next page: the last group's newest event id; null on the last page. */
  nextMaxId: number | null;
  unread: UnreadCount;
}

/** Groups above the marker. */
export interface UnreadCount {
  count: number;
  /** The count reached the cap: there are at least `count`. */
  capped: boolean;
}

/** What an event to notify names (the recipient, who acted, how, on what). */
export interface NotifyInput {
  recipientId: string;
  type: NotificationType;
  actorId: string;
  itemId: string | null;
  data?: unknown;
}

/** Rebuilds a page tries before it reads PostgreSQL directly (a recipient written to without pause). */
const REBUILD_ATTEMPTS = 3;
/** Rounds a page reads to fill up after groups of deleted items were left out. */
const FILL_ROUNDS = 3;
/** Events one sweep batch deletes. */
export const PRUNE_BATCH = 5_000;

export class Notifications {
  constructor(
    private readonly deps: NotificationDeps,
    readonly settings: NotificationSettings,
  ) {}

  /**
   * Records an event and counts it into its group. Nothing happens (null) for one's own action, an actor
   * either side blocks or the recipient mutes, or an event of Freshet's own types already recorded.
   * @throws FreshetError INVALID_ID; store errors propagate.
   */
  async notify(input: NotifyInput, nowMs: number): Promise<NotificationEvent | null> {
    assertId(input.recipientId, 'recipient_id');
    assertId(input.actorId, 'actor_id');
    if (input.actorId === input.recipientId) return null;
    const ex = await this.deps.exclusions.forReader(input.recipientId, nowMs);
    if (ex.blockedAuthors.has(input.actorId) || ex.mutedAuthors.has(input.actorId)) return null;
    const event = await this.deps.store.record({
      ...input,
      atMs: nowMs,
      groupKey: groupKey(input.type, input.itemId, nowMs, this.settings.windowMs),
    });
    if (!event) return null;
    await this.deps.view.add(event);
    this.deps.changed(event.recipientId);
    return event;
  }

  /**
   * {@link notify} for a batch (a batch of engagements), with the same rules: each recipient's exclusions
   * read once per time of the batch, the events recorded in one statement, each counted into its group.
   * @returns per element, in order: the event, or null as {@link notify} answers it.
   * @throws FreshetError INVALID_ID naming the element, before anything is written; store errors propagate.
   */
  async notifyMany(batch: readonly { input: NotifyInput; nowMs: number }[]): Promise<(NotificationEvent | null)[]> {
    batch.forEach(({ input }, i) => {
      assertId(input.recipientId, `notifications[${i}].recipient_id`);
      assertId(input.actorId, `notifications[${i}].actor_id`);
    });
    const reads = new Map<string, Promise<ReaderExclusions>>();
    const exclusionsOf = (recipientId: string, nowMs: number) => {
      const key = `${recipientId}\n${nowMs}`;
      let read = reads.get(key);
      if (!read) reads.set(key, (read = this.deps.exclusions.forReader(recipientId, nowMs)));
      return read;
    };
    const kept = await Promise.all(
      batch.map(async ({ input, nowMs }) => {
        if (input.actorId === input.recipientId) return false;
        const ex = await exclusionsOf(input.recipientId, nowMs);
        return !ex.blockedAuthors.has(input.actorId) && !ex.mutedAuthors.has(input.actorId);
      }),
    );
    const chosen = batch.filter((_, i) => kept[i]);
    const events = await this.deps.store.recordMany(
      chosen.map(({ input, nowMs }) => ({
        ...input,
        atMs: nowMs,
        groupKey: groupKey(input.type, input.itemId, nowMs, this.settings.windowMs),
      })),
    );
    const recorded = events.filter((e): e is NotificationEvent => e !== null);
    await Promise.all(recorded.map((e) => this.deps.view.add(e)));
    for (const r of new Set(recorded.map((e) => e.recipientId))) this.deps.changed(r);
    let next = 0;
    return kept.map((k) => (k ? events[next++]! : null));
  }

  /**
   * An application's notification (`POST /v1/notifications`): checked ({@link validateHook}), then as {@link notify}.
   * @returns the event, or null when it is not delivered (the actor is blocked or muted).
   * @throws FreshetError INVALID_ID, INVALID_INPUT naming the field.
   */
  hook(n: HookNotification, nowMs: number): Promise<NotificationEvent | null> {
    validateHook(n);
    return this.notify(
      {
        recipientId: n.recipientId,
        type: n.type as NotificationType,
        actorId: n.actorId,
        itemId: n.itemId ?? null,
        data: n.data,
      },
      nowMs,
    );
  }

  /**
   * Takes back the newest matching event of the grouping window ending at `nowMs` (an undone like):
   * its group's count goes down by one, and the group leaves when it reaches 0.
   * @returns whether an event was taken back.
   */
  async retract(
    recipientId: string,
    type: NotificationType,
    actorId: string,
    itemId: string | null,
    nowMs: number,
  ): Promise<boolean> {
    const e = await this.deps.store.retract(recipientId, type, actorId, itemId, nowMs - this.settings.windowMs);
    if (!e) return false;
    if ((await this.deps.view.remove(e)) === 'refill') {
      const g = await this.deps.store.group(recipientId, e.groupKey);
      if (g) await this.deps.view.refill(recipientId, g);
    }
    this.deps.changed(recipientId);
    return true;
  }

  /**
   * A page of the reader's grouped notifications, newest group first, below `maxId` (a group's newest
   * event id; absent: from the top), with each group's read flag and the unread count.
   * @throws FreshetError INVALID_ID; store errors propagate.
   */
  async page(readerId: string, q: { limit: number; maxId?: number }): Promise<NotificationPage> {
    assertId(readerId, 'reader id');
    const [marker, groups] = await Promise.all([
      this.deps.store.getMarker(readerId),
      this.liveGroups(readerId, q.maxId ?? null, q.limit),
    ]);
    const [unread, data] = await Promise.all([
      this.unreadAfter(readerId, marker.lastReadId),
      this.hookData(readerId, groups),
    ]);
    return {
      groups: groups.map((g) => ({
        ...g,
        read: g.latestId <= marker.lastReadId,
        ...(isHookType(g.type) ? { data: data.get(g.latestId) ?? null } : {}),
      })),
      nextMaxId: groups.length === q.limit ? groups[groups.length - 1]!.latestId : null,
      unread,
    };
  }

  /** The reader's marker and unread count. @throws FreshetError INVALID_ID. */
  async marker(readerId: string): Promise<NotificationMarker & { unread: UnreadCount }> {
    assertId(readerId, 'reader id');
    const m = await this.deps.store.getMarker(readerId);
    return { ...m, unread: await this.unreadAfter(readerId, m.lastReadId) };
  }

  /**
   * Moves the reader's marker to `lastReadId` (an event id: a group's `latest_id`) — forward only,
   * unless `force`: of two devices racing, the newer marker stays.
   * @throws FreshetError INVALID_INPUT when `lastReadId` is not an integer ≥ 0 or is above the reader's
   *   newest notification (nothing stored).
   */
  async setMarker(
    readerId: string,
    lastReadId: number,
    force: boolean,
    nowMs: number,
  ): Promise<NotificationMarker & { moved: boolean; unread: UnreadCount }> {
    assertId(readerId, 'reader id');
    if (!Number.isSafeInteger(lastReadId) || lastReadId < 0) {
      throw fail(
        'INVALID_INPUT',
        `last_read_id must be a notification id (a whole number ≥ 0; got ${String(lastReadId).slice(0, 40)})`,
      );
    }
    const newest = await this.deps.store.newestId(readerId);
    if (lastReadId > newest) {
      throw fail(
        'INVALID_INPUT',
        `last_read_id ${lastReadId} is above the newest notification id of ${readerId} (${newest}): send the latest_id of a group you read`,
      );
    }
    const m = await this.deps.store.setMarker(readerId, lastReadId, nowMs, force);
    if (m.moved) this.deps.changed(readerId);
    return { ...m, unread: await this.unreadAfter(readerId, m.lastReadId) };
  }

  /**
   * Erases a user (src/use-cases/personal-data.ts): the notifications they received or caused, their marker,
   * their grouped view and the views of everyone they notified (rebuilt from PostgreSQL, without them).
   * @returns rows removed per kind.
   */
  async forgetUser(userId: string): Promise<Record<string, number>> {
    assertId(userId, 'user id');
    const r = await this.deps.store.forgetUser(userId);
    await Promise.all([userId, ...r.recipients].map((id) => this.deps.view.forget(id)));
    for (const id of r.recipients) this.deps.changed(id);
    return { received: r.received, caused: r.caused, markers: r.markers };
  }

  /** Drops the recipient's grouped view (not its events): it is rebuilt from PostgreSQL on the next read. */
  forgetView(recipientId: string): Promise<void> {
    return this.deps.view.forget(recipientId);
  }

  /** Deletes events older than the retention, in batches. @returns how many. */
  async prune(nowMs: number): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.deps.store.prune(nowMs - this.settings.retentionMs, PRUNE_BATCH);
      total += n;
      if (n < PRUNE_BATCH) return total;
    }
  }

  /** Groups below `beforeId` whose item is live (or that have none), filling up to `limit` (a few rounds). */
  /** The data of the newest events of the groups of an application's type (none: no query). */
  private hookData(readerId: string, groups: readonly NotificationGroup[]): Promise<Map<number, unknown>> {
    const ids = groups.filter((g) => isHookType(g.type)).map((g) => g.latestId);
    return ids.length === 0 ? Promise.resolve(new Map()) : this.deps.store.dataOf(readerId, ids);
  }

  private async liveGroups(readerId: string, beforeId: number | null, limit: number): Promise<NotificationGroup[]> {
    const out: NotificationGroup[] = [];
    let before = beforeId;
    for (let round = 0; round < FILL_ROUNDS && out.length < limit; round++) {
      const want = limit - out.length;
      const groups = await this.groups(readerId, before, want);
      const itemIds = groups.flatMap((g) => (g.itemId ? [g.itemId] : []));
      const live = itemIds.length ? await this.deps.liveItems(itemIds) : new Set<string>();
      out.push(...groups.filter((g) => !g.itemId || live.has(g.itemId)));
      if (groups.length < want) break; // the last groups there are
      before = groups[groups.length - 1]!.latestId;
    }
    return out;
  }

  /** Groups below `beforeId`: from the view (rebuilt when absent), then PostgreSQL below what it holds. */
  private async groups(readerId: string, beforeId: number | null, limit: number): Promise<NotificationGroup[]> {
    const page =
      (await this.deps.view.page(readerId, beforeId, limit)) ??
      ((await this.rebuild(readerId)) ? await this.deps.view.page(readerId, beforeId, limit) : null);
    if (!page) return this.deps.store.groups(readerId, beforeId, limit);
    if (page.groups.length === limit || !page.truncated) return page.groups;
    const last = page.groups.length ? page.groups[page.groups.length - 1]!.latestId : beforeId;
    return [...page.groups, ...(await this.deps.store.groups(readerId, last, limit - page.groups.length))];
  }

  /**
   * Groups above the marker, from the view (one ZCOUNT): exact while the view holds every unread group;
   * when it holds only unread groups and dropped older ones, its bound with `capped` (there are at least
   * that many). Only a view that cannot be built makes PostgreSQL count (up to the bound).
   */
  private async unreadAfter(readerId: string, afterId: number): Promise<UnreadCount> {
    const cap = this.settings.maxGroups;
    let c = await this.deps.view.countAfter(readerId, afterId);
    if (!c && (await this.rebuild(readerId))) c = await this.deps.view.countAfter(readerId, afterId);
    if (!c) {
      const count = await this.deps.store.countGroupsAfter(readerId, afterId, cap);
      return { count, capped: count >= cap };
    }
    return { count: Math.min(c.count, cap), capped: c.truncated && c.count >= cap };
  }

  /** Rebuilds the reader's view from PostgreSQL; false when writes kept racing it (the caller reads PostgreSQL). */
  private async rebuild(readerId: string): Promise<boolean> {
    for (let attempt = 0; attempt < REBUILD_ATTEMPTS; attempt++) {
      const token = await this.deps.view.beginRebuild(readerId);
      const groups = await this.deps.store.groups(readerId, null, this.settings.maxGroups + 1);
      const truncated = groups.length > this.settings.maxGroups;
      if (await this.deps.view.completeRebuild(readerId, token, groups.slice(0, this.settings.maxGroups), truncated))
        return true;
    }
    this.deps.log.warn(
      { readerId },
      'notifications: the grouped view could not be rebuilt (writes kept racing it); read from PostgreSQL',
    );
    return false;
  }
}
