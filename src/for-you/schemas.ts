/**
 * JSON schemas (TypeBox) of the for-you feed's HTTP API (docs/for-you.md): `POST /v1/feeds/for-you`,
 * `GET /v1/feeds/for-you/peek` and the
 * reader interests `PUT|GET /v1/users/:id/interests` that drive recall relevance.
 */
import { Type, type Static } from 'typebox';
import { Envelope, FeedItemOut } from '../kernel/http/schemas.js';
import { MAX_TERM_LENGTH, MAX_TERMS } from '../kernel/items/terms.js';

/** `POST /v1/feeds/for-you` body (the for-you design's request). */
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
  Type.Object({
    items: Type.Array(FeedItemOut),
    has_more: Type.Boolean({ description: 'the delivery buffer holds more' }),
  }),
);

/** `GET /v1/feeds/for-you/peek` (the "new" badge): fresh unseen candidates a refresh would bring. */
export const PeekResult = Envelope(
  Type.Object({
    count: Type.Integer({
      minimum: 0,
      description: 'fresh (inside the decay window) unseen candidates a refresh would now bring',
    }),
    capped: Type.Boolean({ description: 'count reached the bound of the check (the recall size): there may be more' }),
  }),
);

/**
 * `PUT /v1/users/:id/interests` body: at most `MAX_TERMS` terms of at most `MAX_TERM_LENGTH` characters
 * (the bounds the content store keeps after normalizing, src/kernel/items/terms.ts).
 */
export const InterestsBody = Type.Object(
  { terms: Type.Array(Type.String({ minLength: 1, maxLength: MAX_TERM_LENGTH }), { maxItems: MAX_TERMS }) },
  { additionalProperties: false },
);
export const InterestsResult = Envelope(Type.Object({ reader_id: Type.String(), terms: Type.Array(Type.String()) }));
