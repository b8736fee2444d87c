/**
 * JSON schemas (TypeBox) of the following timeline's HTTP API (docs/following.md): the graph routes and
 * `GET /v1/feeds/following`. `limit` is an integer coerced from the query string; cursors (`max_id`,
 * `since_id`, `cursor`) are strings checked in the handlers (a tid below 2^53, a cursor this API
 * returned), so a bad one is INVALID_INPUT (40001), not INVALID_ID.
 */
import { Type } from 'typebox';
import { Envelope, FeedHeaders, FeedItemOut, Id } from '../kernel/http/schemas.js';
import { itemToJson } from '../kernel/items/item.js';
import { tidText } from './domain.js';
import type { TimelineItem } from './timeline-index.js';

/** `/v1/users/:id/{following|blocks}/:author_id`. */
export const PairParams = Type.Object({ id: Id, author_id: Id });

/** Most follow edges per `POST /v1/follows`. */
export const MAX_FOLLOWS_PER_REQUEST = 5_000;

/** `POST /v1/follows` (service key): follow edges in bulk, as `freshet import graph` sends them. */
export const FollowsBody = Type.Object(
  {
    edges: Type.Array(Type.Object({ follower_id: Id, followee_id: Id }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: MAX_FOLLOWS_PER_REQUEST,
    }),
  },
  { additionalProperties: false },
);

export const FollowsResult = Envelope(
  Type.Object({
    inserted: Type.Integer({ description: 'edges new to the graph' }),
    blocked: Type.Integer({ description: 'edges skipped because one of the two users blocks the other' }),
  }),
);

/** `PUT /v1/users/:id` (register). */
export const UserResult = Envelope(Type.Object({ id: Type.String(), created: Type.Boolean() }));

export const FollowResult = Envelope(
  Type.Object({
    user_id: Type.String(),
    author_id: Type.String(),
    following: Type.Boolean(),
    created: Type.Optional(Type.Boolean({ description: 'false when the follow already existed' })),
    removed: Type.Optional(Type.Boolean({ description: 'false when there was no follow' })),
    backfilled: Type.Optional(Type.Integer({ description: "the author's items pushed into the inbox" })),
  }),
);

export const BlockResult = Envelope(
  Type.Object({
    user_id: Type.String(),
    author_id: Type.String(),
    blocking: Type.Boolean(),
    created: Type.Optional(Type.Boolean()),
    removed: Type.Optional(Type.Boolean()),
  }),
);

/** Most users per graph list page. */
export const MAX_LIST_LIMIT = 1000;
/** Most items per following-timeline page. */
export const MAX_TIMELINE_LIMIT = 100;

/** Query of the lists: `limit` (1..1000, default 100) and the opaque `cursor` of the previous page. */
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LIST_LIMIT,
        default: 100,
        description: `users per page, 1..${MAX_LIST_LIMIT}`,
      }),
    ),
    cursor: Type.Optional(
      Type.String({ maxLength: 200, description: 'the next_cursor of the previous page, as returned (opaque)' }),
    ),
  },
  { additionalProperties: false },
);

export const ListResult = Envelope(
  Type.Object({
    user_id: Type.String(),
    users: Type.Array(
      Type.Object({ id: Type.String(), since: Type.Integer({ description: 'epoch seconds of the edge' }) }),
    ),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  }),
);

/** `GET /v1/feeds/following` query: `limit` 1..100 (default 20), `max_id` / `since_id` timeline ids. */
export const TimelineQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_TIMELINE_LIMIT,
        default: 20,
        description: `items per page, 1..${MAX_TIMELINE_LIMIT}`,
      }),
    ),
    max_id: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,16}$',
        description: 'items older than this timeline id (a decimal below 2^53, from timeline_id or next_max_id)',
      }),
    ),
    since_id: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,16}$',
        description: 'items newer than this timeline id (a decimal below 2^53)',
      }),
    ),
    min_id: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,16}$',
        description:
          "catch-up: items newer than this timeline id, OLDEST first (Mastodon's name); the next page starts at next_min_id",
      }),
    ),
    from: Type.Optional(
      Type.Literal('marker', { description: "catch-up from the reader's read marker: min_id = its last_read_id" }),
    ),
  },
  { additionalProperties: false },
);

/** `PUT /v1/users/:id/markers/following` body. */
export const TimelineMarkerBody = Type.Object(
  {
    last_read_id: Type.String({ pattern: '^[0-9]{1,16}$', description: 'the timeline_id of the newest entry read' }),
    force: Type.Optional(
      Type.Boolean({ default: false, description: 'move the marker back (it only moves forward otherwise)' }),
    ),
  },
  { additionalProperties: false },
);

/** A following-timeline marker as read. */
export const TimelineMarkerOut = Type.Object({
  last_read_id: Type.String(),
  updated_at: Type.Union([Type.Integer({ description: 'epoch seconds' }), Type.Null()]),
  unread_count: Type.Integer({ description: 'entries above the marker a read would show, exact up to 1000' }),
  unread_capped: Type.Boolean({ description: 'true: at least 1000 ("1000+")' }),
});

export const TimelineMarkerResult = Envelope(
  Type.Intersect([Type.Object({ moved: Type.Boolean() }), TimelineMarkerOut]),
);

export const TimelineItemOut = Type.Intersect([
  FeedItemOut,
  Type.Object({ timeline_id: Type.String({ description: 'the cursor of this item' }) }),
]);

export const TimelineResult = Envelope(
  Type.Object({
    items: Type.Array(TimelineItemOut),
    next_max_id: Type.Union([Type.String(), Type.Null()], {
      description: 'max_id of the next page; null: the end, for now',
    }),
    next_min_id: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'catch-up pages (min_id, from=marker) only: min_id of the next page; null: caught up, for now',
      }),
    ),
    rebuilt: Type.Boolean({
      description: "true when the reader's inbox was regenerated from PostgreSQL for this read (a cold or new reader)",
    }),
  }),
);

/** `GET /v1/feeds/following/stream` query: `since_id`, the timeline id to deliver entries after (exclusive). */
export const StreamQuery = Type.Object(
  {
    since_id: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,16}$',
        description:
          'deliver entries newer than this timeline id first (default: only entries that arrive after connecting)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The stream's headers: the feed headers plus `Last-Event-ID` (a reconnect resumes after it; wins over `since_id`). */
export const StreamHeaders = Type.Object({
  ...FeedHeaders.properties,
  'last-event-id': Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,16}$',
      description: 'the id of the last event received: the stream resumes after it',
    }),
  ),
});

/** One `event: item` of the stream (its `data`); the SSE `id` is the same `timeline_id`. */
export const StreamItemEvent = Type.Object({ timeline_id: Type.String(), item: TimelineItemOut });

/** A timeline entry as the API answers it (`TimelineItemOut`): the item with its `timeline_id`, a decimal string. */
export function timelineItemJson(e: TimelineItem) {
  return { ...itemToJson(e.item), timeline_id: tidText(e.tid) };
}

/** A following-timeline marker as the API answers it (times in epoch seconds, tids as decimal strings). */
export function timelineMarkerJson(m: {
  lastReadId: number;
  updatedAt: number | null;
  unread: { count: number; capped: boolean };
}) {
  return {
    last_read_id: String(m.lastReadId),
    updated_at: m.updatedAt === null ? null : Math.floor(m.updatedAt / 1000),
    unread_count: m.unread.count,
    unread_capped: m.unread.capped,
  };
}
