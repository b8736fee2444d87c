/**
 * JSON schemas of the v1 HTTP API (TypeBox): every body, query, path parameter and response.
 * They drive validation at the edge, the OpenAPI document at `/docs`, and response serialization.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { ID_PATTERN } from '../domain/ids.js';

/** An id: `[A-Za-z0-9_.-]{1,64}`. */
export const Id = Type.String({ pattern: ID_PATTERN, description: 'id matching [A-Za-z0-9_.-]{1,64}' });

/** The success envelope of note 1 around `data`. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ code: Type.Literal(0), msg: Type.Literal('success'), data });
}

/** The error envelope: a non-zero stable code (README "Error codes") and a readable message. */
export const ErrorEnvelope = Type.Object({
  code: Type.Integer({ description: 'stable error code, see README' }),
  msg: Type.String(),
  data: Type.Null(),
});

/** An item in responses (times in epoch seconds). */
export const ItemOut = Type.Object({
  id: Type.String(),
  author_id: Type.String(),
  title: Type.String(),
  text: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.String()),
  published_at: Type.Integer({ description: 'epoch seconds' }),
  update_time: Type.Integer({ description: 'epoch seconds' }),
  popularity: Type.Number(),
});

/** An item as written by the application. */
export const ItemIn = Type.Object(
  {
    id: Id,
    author_id: Id,
    title: Type.String({ maxLength: 1000 }),
    text: Type.Optional(Type.String({ maxLength: 100_000 })),
    url: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 })),
    published_at: Type.Union([Type.Number({ minimum: 0 }), Type.String({ minLength: 1, maxLength: 40 })], {
      description: 'epoch seconds, or an ISO 8601 date-time',
    }),
    popularity: Type.Optional(Type.Number({ minimum: 0, description: 'popularity prior (points, likes)' })),
    embedding: Type.Optional(
      Type.Array(Type.Number(), { minItems: 1, maxItems: 4096, description: 'the item embedding (length FRESHET_EMBEDDING_DIM); computed from the text when absent' }),
    ),
  },
  { additionalProperties: false },
);
export type ItemInJson = Static<typeof ItemIn>;

/** Maximum items per `POST /v1/items`. */
export const MAX_ITEMS_PER_REQUEST = 1000;

export const ItemsBody = Type.Array(ItemIn, { minItems: 1, maxItems: MAX_ITEMS_PER_REQUEST });
export const UpsertResult = Envelope(Type.Object({ inserted: Type.Integer(), updated: Type.Integer() }));

export const IdParams = Type.Object({ id: Id });
export const DeleteResult = Envelope(Type.Object({ id: Type.String(), deleted: Type.Boolean() }));
export const ItemResult = Envelope(ItemOut);

/** `POST /v1/feeds/for-you` body (note 1's request). */
export const ForYouBody = Type.Object(
  {
    action: Type.Union([Type.Literal('refresh'), Type.Literal('load_more')], {
      description: 'refresh: pull-to-refresh / cold start; load_more: next page from the cache',
    }),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  },
  { additionalProperties: false },
);
export type ForYouBodyJson = Static<typeof ForYouBody>;

export const FeedResult = Envelope(
  Type.Object({ items: Type.Array(ItemOut), has_more: Type.Boolean({ description: 'the delivery buffer holds more' }) }),
);

export const InterestsBody = Type.Object(
  { terms: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 }) },
  { additionalProperties: false },
);
export const InterestsResult = Envelope(Type.Object({ reader_id: Type.String(), terms: Type.Array(Type.String()) }));

/** Headers: which reader the service key acts for, and the request's virtual time. */
export const FeedHeaders = Type.Object({
  'x-freshet-reader': Type.Optional(Id),
  'x-freshet-now': Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'virtual time, epoch ms (service key only)' })),
});

export const HealthResult = Envelope(Type.Object({ status: Type.String() }));
