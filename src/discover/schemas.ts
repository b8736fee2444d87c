/**
 * JSON schemas of the discover feed (docs/discover.md): `GET /v1/feeds/discover?limit=20&cursor=…`.
 */
import { Type } from 'typebox';
import { Envelope, FeedItemOut } from '../kernel/http/schemas.js';

/** Most items per discover page. */
export const MAX_DISCOVER_LIMIT = 100;
/** Longest cursor accepted (a real one is ~150 characters). */
export const MAX_CURSOR_LENGTH = 1024;

export const DiscoverQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_DISCOVER_LIMIT,
        default: 20,
        description: `items per page, 1..${MAX_DISCOVER_LIMIT}`,
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_CURSOR_LENGTH,
        pattern: '^[A-Za-z0-9_.-]+$',
        description: 'the next_cursor of the previous page, as returned (opaque)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const DiscoverResult = Envelope(
  Type.Object({
    items: Type.Array(FeedItemOut),
    sources: Type.Array(
      Type.Union([
        Type.Literal('followed'),
        Type.Literal('trending'),
        Type.Literal('discovery'),
        Type.Literal('newest'),
      ]),
      {
        description: 'where each item came from, aligned with items',
      },
    ),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'null on the last page (every phase exhausted)',
    }),
    restarted: Type.Boolean({
      description: 'the cursor was stale (older than the cursor TTL): this is a fresh first page',
    }),
  }),
);

/**
 * `PUT /v1/users/:id/embedding`: the reader's embedding in the space of the items' app embeddings, of the
 * configured dimension `dim` (`FRESHET_EMBEDDING_DIM`), so the OpenAPI document states its exact length.
 */
export function readerEmbeddingBody(dim: number) {
  return Type.Object(
    {
      embedding: Type.Array(Type.Number(), {
        minItems: dim,
        maxItems: dim,
        description: `${dim} finite numbers (FRESHET_EMBEDDING_DIM), not all zero (normalised when stored)`,
      }),
    },
    { additionalProperties: false },
  );
}

export const ReaderEmbeddingResult = Envelope(
  Type.Object({
    reader_id: Type.String(),
    dim: Type.Integer({ description: 'components stored' }),
  }),
);

export const ReaderEmbeddingRemoved = Envelope(
  Type.Object({ reader_id: Type.String(), removed: Type.Boolean({ description: 'false: there was none' }) }),
);
