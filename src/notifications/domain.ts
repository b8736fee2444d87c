/**
 * Notifications, the domain: what an event is, which group it joins, and the grouped entry a recipient
 * reads ("alice and 3 others liked your post": Mastodon 4.3's grouped notifications; Stream's aggregated
 * feeds, whose `group` format is the model). Pure: no I/O.
 *
 * Grouping: an event joins the group `type:item:bucket`, where `bucket` counts whole grouping windows
 * since the epoch (`floor(atMs / windowMs)`, default 24 h: UTC days); follows carry no item and group per
 * day (`follow::<day>`). A group key is a function of the event alone, so the grouped view can always be
 * rebuilt from the events (PostgreSQL) and equals the truth; the price is that a burst across a window's
 * edge shows as two groups.
 */
import { fail } from '../kernel/errors.js';
import { isId } from '../kernel/ids.js';
import { preview } from '../kernel/preview.js';

/** Types Freshet records itself, from its own verbs (follow, and engagements on the recipient's items). */
export const OWN_TYPES = ['follow', 'like', 'reply', 'share'] as const;
/** Types an application may send (`POST /v1/notifications`): `mention`, and its own `app.<name>` types. */
export const HOOK_TYPE_RULE = '"mention" or "app.<name>" (name: 1 to 32 of a-z 0-9 _)';
const APP_TYPE = /^app\.[a-z0-9_]{1,32}$/;

/** A notification type: one of {@link OWN_TYPES}, `mention`, or an application type `app.<name>`. */
export type NotificationType = (typeof OWN_TYPES)[number] | 'mention' | `app.${string}`;

/** True for a type the hook accepts ({@link HOOK_TYPE_RULE}). */
export function isHookType(type: string): boolean {
  return type === 'mention' || APP_TYPE.test(type);
}

/** One thing that happened to a recipient, as recorded (the truth: PostgreSQL). */
export interface NotificationEvent {
  /** Increasing id of the event (PostgreSQL's sequence): the order of the grouped feed. */
  id: number;
  recipientId: string;
  type: NotificationType;
  actorId: string;
  /** The item it is about (likes, replies, shares, mentions); null for follows and item-less app events. */
  itemId: string | null;
  /** When it happened, epoch ms (virtual time). */
  atMs: number;
  /** The group it joins ({@link groupKey}). */
  groupKey: string;
}

/** A group as the feed serves it (`GET /v1/feeds/notifications`). */
export interface NotificationGroup {
  groupKey: string;
  type: NotificationType;
  itemId: string | null;
  /** Up to {@link GROUP_ACTORS} most recent distinct actors, newest first. */
  actors: string[];
  /** Exact number of events in the group (one per actor: an actor likes an item once). */
  actorCount: number;
  /** The newest event's id: the group's place in the feed and its `max_id` cursor. */
  latestId: number;
  /** The newest event's time, epoch ms. */
  latestAt: number;
}

/** Actors a group shows. */
export const GROUP_ACTORS = 3;

/** The group an event joins: `type:item:bucket`, bucket = floor(atMs / windowMs); follows group per UTC day. */
export function groupKey(type: string, itemId: string | null, atMs: number, windowMs: number): string {
  const bucketMs = type === 'follow' ? 86_400_000 : windowMs;
  return `${type}:${itemId ?? ''}:${Math.floor(atMs / bucketMs)}`;
}

/** The type and item of a group key (its inverse for those two parts). */
export function parseGroupKey(key: string): { type: NotificationType; itemId: string | null } {
  const last = key.lastIndexOf(':');
  const mid = key.lastIndexOf(':', last - 1);
  const itemId = key.slice(mid + 1, last);
  return { type: key.slice(0, mid) as NotificationType, itemId: itemId === '' ? null : itemId };
}

/** A notification an application sends (`POST /v1/notifications`), before it is recorded. */
export interface HookNotification {
  recipientId: string;
  type: string;
  actorId: string;
  itemId?: string | null;
  /** Free JSON the application wants back with the event (≤ 4 KB serialised). */
  data?: unknown;
}

/** Largest `data` of a hook notification, in bytes of JSON. */
export const MAX_DATA_BYTES = 4096;

/**
 * Checks a hook notification (the one check of `POST /v1/notifications`, the library and the client).
 * @throws FreshetError INVALID_ID (an id), INVALID_INPUT (the type, actor = recipient, data too large),
 *   naming the field: `type`, `actor_id`, `data`.
 */
export function validateHook(n: HookNotification): void {
  for (const [field, value] of [
    ['recipient_id', n.recipientId],
    ['actor_id', n.actorId],
  ] as const) {
    if (!isId(value)) throw fail('INVALID_ID', `${field} ${preview(value)} is not a valid id`);
  }
  if (n.itemId != null && !isId(n.itemId))
    throw fail('INVALID_ID', `item_id ${JSON.stringify(n.itemId).slice(0, 70)} is not a valid id`);
  if (typeof n.type !== 'string' || !isHookType(n.type)) {
    throw fail(
      'INVALID_INPUT',
      `type ${JSON.stringify(n.type).slice(0, 60)} is not a notification type an application may send: ${HOOK_TYPE_RULE} (follows, likes, replies and shares Freshet records itself)`,
    );
  }
  if (n.actorId === n.recipientId) {
    throw fail(
      'INVALID_INPUT',
      `actor_id must differ from recipient_id (got "${n.actorId}" for both): nobody is notified of their own action`,
    );
  }
  if (n.data !== undefined && jsonBytes(n.data) > MAX_DATA_BYTES) {
    throw fail(
      'INVALID_INPUT',
      `data is over ${MAX_DATA_BYTES} bytes of JSON; send a reference instead of the payload`,
    );
  }
}

/** Bytes of `value` as JSON; Infinity when it cannot be written (nesting too deep for the serializer). */
function jsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '');
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** The recent-actors list after `actor` acted: `actor` first, the others after it, distinct, cut to {@link GROUP_ACTORS}. */
export function withActor(actors: readonly string[], actor: string): string[] {
  return [actor, ...actors.filter((a) => a !== actor)].slice(0, GROUP_ACTORS);
}
