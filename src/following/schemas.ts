/**
 * JSON schemas (TypeBox) of the following timeline's HTTP API (note 4): the graph routes and
 * `GET /v1/feeds/following`. `limit` is an integer coerced from the query string; cursors (`max_id`,
 * `since_id`, `cursor`) are strings checked in the handlers (a tid below 2^53, a cursor this API
 * returned), so a bad one is INVALID_INPUT (40001), not INVALID_ID.
 */
import { Type } from 'typebox';
import { Envelope, FeedHeaders, FeedItemOut, Id } from '../kernel/http/schemas.js';

/** `/v1/users/:id/{following|blocks}/:author_id`. */
export const PairParams = Type.Object({ id: Id, author_id: Id });

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
  },
  { additionalProperties: false },
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
