/**
 * JSON schemas of the notification routes (the grouped feed, the application's hook, the marker) and the
 * functions that shape answers to them.
 */
import { Type } from 'typebox';
import { Envelope, Id } from '../kernel/http/schemas.js';
import { HOOK_TYPE_RULE } from './domain.js';
import type { NotificationMarker } from './notification-store.js';
import type { ReadGroup, UnreadCount } from './service.js';

/** A notification id (an event id, the `max_id` / `last_read_id` of the grouped feed): decimal digits. */
const EventId = Type.String({
  pattern: '^[0-9]{1,16}$',
  description: "a notification id (a group's latest_id), decimal",
});

/** `GET /v1/feeds/notifications` query. */
export const NotificationsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    max_id: Type.Optional(EventId),
  },
  { additionalProperties: false },
);

/** One group of the grouped feed. */
export const GroupOut = Type.Object({
  group_key: Type.String({ description: 'type:item:bucket — one group per (type, item) per grouping window' }),
  type: Type.String({ description: 'follow | like | reply | share | mention | app.<name>' }),
  item_id: Type.Union([Type.String(), Type.Null()]),
  actors: Type.Array(Type.String(), { description: 'up to 3 most recent distinct actors, newest first' }),
  actor_count: Type.Integer({ description: 'exact number of events in the group' }),
  latest_id: Type.String({
    description: "the group's newest notification id: its place, and the max_id / last_read_id to send",
  }),
  latest_at: Type.Integer({ description: 'epoch seconds of the newest event' }),
  read: Type.Boolean({ description: "at or below the reader's notifications marker" }),
  data: Type.Optional(
    Type.Unknown({
      description:
        'mention and app.<name> groups only: the data its newest event was sent with (null when none); absent on the groups Freshet records itself',
    }),
  ),
});

const Unread = Type.Object({
  unread_count: Type.Integer({ description: 'groups above the marker, exact up to FRESHET_NOTIFICATION_GROUPS' }),
  unread_capped: Type.Boolean({ description: 'true when there are at least unread_count' }),
});

export const NotificationsResult = Envelope(
  Type.Intersect([
    Type.Object({
      groups: Type.Array(GroupOut),
      next_max_id: Type.Union([Type.String(), Type.Null()], {
        description: 'max_id of the next page; null on the last',
      }),
    }),
    Unread,
  ]),
);

/** `POST /v1/notifications` body (service key): an event Freshet cannot see. */
export const HookBody = Type.Object(
  {
    recipient_id: Id,
    type: Type.String({ minLength: 1, maxLength: 40, description: HOOK_TYPE_RULE }),
    actor_id: Id,
    item_id: Type.Optional(Type.Union([Id, Type.Null()])),
    data: Type.Optional(Type.Unknown({ description: 'free JSON kept with the event (≤ 4 KB)' })),
  },
  { additionalProperties: false },
);

export const HookResult = Envelope(
  Type.Object({
    delivered: Type.Boolean({ description: 'false when the recipient blocks or mutes the actor (nothing stored)' }),
    id: Type.Union([Type.String(), Type.Null()], { description: 'the notification id' }),
    group_key: Type.Union([Type.String(), Type.Null()]),
  }),
);

/** `PUT /v1/users/:id/markers/notifications` body. */
export const MarkerBody = Type.Object(
  {
    last_read_id: EventId,
    force: Type.Optional(
      Type.Boolean({ default: false, description: 'move the marker back (it only moves forward otherwise)' }),
    ),
  },
  { additionalProperties: false },
);

/** A marker as read. */
export const MarkerOut = Type.Intersect([
  Type.Object({
    last_read_id: Type.String(),
    updated_at: Type.Union([Type.Integer({ description: 'epoch seconds' }), Type.Null()]),
  }),
  Unread,
]);

export const MarkerResult = Envelope(Type.Intersect([Type.Object({ moved: Type.Boolean() }), MarkerOut]));

/** A group as the API answers it (times in epoch seconds, ids as decimal strings). */
export function groupJson(g: ReadGroup) {
  return {
    group_key: g.groupKey,
    type: g.type,
    item_id: g.itemId,
    actors: g.actors,
    actor_count: g.actorCount,
    latest_id: String(g.latestId),
    latest_at: Math.floor(g.latestAt / 1000),
    read: g.read,
    ...(g.data !== undefined ? { data: g.data } : {}),
  };
}

/** A marker as the API answers it. */
export function markerJson(m: NotificationMarker & { unread: UnreadCount }) {
  return {
    last_read_id: String(m.lastReadId),
    updated_at: m.updatedAt === null ? null : Math.floor(m.updatedAt / 1000),
    unread_count: m.unread.count,
    unread_capped: m.unread.capped,
  };
}
