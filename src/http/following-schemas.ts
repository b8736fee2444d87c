/**
 * JSON schemas (TypeBox) of the following timeline's HTTP API (note 4): the graph routes and
 * `GET /v1/feeds/following`. Cursors (`max_id`, `since_id`, `cursor`) are strings validated in the
 * handlers, so a bad one is INVALID_INPUT (40001), not INVALID_ID.
 */
import { Type } from 'typebox';
import { Envelope, Id, ItemOut } from './schemas.js';

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

/** Query of the lists: `limit` (1..1000, default 100) and the opaque `cursor` of the previous page. */
export const ListQuery = Type.Object(
  { limit: Type.Optional(Type.String({ maxLength: 4 })), cursor: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);

export const ListResult = Envelope(
  Type.Object({
    user_id: Type.String(),
    users: Type.Array(Type.Object({ id: Type.String(), since: Type.Integer({ description: 'epoch seconds of the edge' }) })),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  }),
);

/** `GET /v1/feeds/following` query: `limit` 1..100 (default 20), `max_id` / `since_id` timeline ids. */
export const TimelineQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ maxLength: 4 })),
    max_id: Type.Optional(Type.String({ maxLength: 20, description: 'items older than this timeline id' })),
    since_id: Type.Optional(Type.String({ maxLength: 20, description: 'items newer than this timeline id' })),
  },
  { additionalProperties: false },
);

export const TimelineItemOut = Type.Intersect([ItemOut, Type.Object({ timeline_id: Type.String({ description: 'the cursor of this item' }) })]);

export const TimelineResult = Envelope(
  Type.Object({
    items: Type.Array(TimelineItemOut),
    next_max_id: Type.Union([Type.String(), Type.Null()], { description: 'max_id of the next page; null: the end, for now' }),
    rebuilt: Type.Boolean({ description: "true when the reader's inbox was regenerated from PostgreSQL for this read (a cold or new reader)" }),
  }),
);
