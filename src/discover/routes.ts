/**
 * Discover feed route (docs/discover.md): `GET /v1/feeds/discover?limit=20&cursor=…` → `{items, sources,
 * next_cursor, restarted}`. The reader is the token's subject (or `X-Freshet-Reader` with the service
 * key); a forged, edited or foreign cursor is 400 / 40005, a stale one starts afresh (`restarted`).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { itemToJson } from '../kernel/items/item.js';
import { type RequestAccess, readerRequest, serviceRequest } from '../kernel/http/access.js';
import {
  ErrorEnvelope,
  FeedHeaders,
  IdParams,
  NowHeaders,
  ok,
  ROUTE_ERRORS,
  type TypedApp,
} from '../kernel/http/schemas.js';
import type { DiscoverFeed } from './service.js';
import {
  DiscoverQuery,
  DiscoverResult,
  readerEmbeddingBody,
  ReaderEmbeddingRemoved,
  ReaderEmbeddingResult,
} from './schemas.js';

/** What the routes call. */
export interface DiscoverRouteDeps {
  access: RequestAccess;
  feed: DiscoverFeed;
  /** The verbs the routes write through (src/use-cases/verbs.ts `UseCases` has them). */
  verbs: DiscoverVerbs;
  /** The embedding dimension (`FRESHET_EMBEDDING_DIM`): a given reader embedding has exactly this length. */
  embeddingDim: number;
}

/** The use case giving (or, with null, removing) a reader's embedding. */
export interface DiscoverVerbs {
  setReaderEmbedding(readerId: string, vector: readonly number[] | null, nowMs: number): Promise<boolean>;
}

/** Registers `GET /feeds/discover` and `PUT|DELETE /users/:id/embedding` (under `/v1`). */
export const discoverRoutes: FastifyPluginAsync<{ deps: DiscoverRouteDeps }> = async (app, { deps }) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { access, feed } = deps;
  readerEmbeddingRoutes(r, deps);
  r.get(
    '/feeds/discover',
    {
      schema: {
        tags: ['feeds'],
        summary: 'Discover feed: followed creators (+ trending), similar items, newest',
        querystring: DiscoverQuery,
        headers: FeedHeaders,
        response: {
          200: DiscoverResult,
          400: ErrorEnvelope,
          401: ErrorEnvelope,
          403: ErrorEnvelope,
          503: ErrorEnvelope,
        },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access);
      const page = await feed.page(readerId, req.query.limit ?? 20, req.query.cursor, nowMs);
      return ok({
        items: page.items.map(itemToJson),
        sources: page.sources,
        next_cursor: page.nextCursor,
        restarted: page.restarted,
      });
    },
  );
};

/**
 * `PUT /users/:id/embedding` (service key): the application gives a reader's embedding, in the space of
 * its items' embeddings; `DELETE` removes it (phase 2 goes back to the mean of the reader's signals).
 */
function readerEmbeddingRoutes(r: TypedApp, deps: DiscoverRouteDeps): void {
  const errors = ROUTE_ERRORS;
  r.put(
    '/users/:id/embedding',
    {
      schema: {
        tags: ['users'],
        summary: "Give a reader's embedding (the discover feed's similar phase searches with it)",
        params: IdParams,
        headers: NowHeaders,
        body: readerEmbeddingBody(deps.embeddingDim),
        response: { 200: ReaderEmbeddingResult, ...errors },
      },
    },
    async (req) => {
      const { nowMs } = serviceRequest(req, deps.access);
      await deps.verbs.setReaderEmbedding(req.params.id, req.body.embedding, nowMs);
      return ok({ reader_id: req.params.id, dim: req.body.embedding.length });
    },
  );
  r.delete(
    '/users/:id/embedding',
    {
      schema: {
        tags: ['users'],
        summary: "Remove a reader's given embedding",
        params: IdParams,
        headers: NowHeaders,
        response: { 200: ReaderEmbeddingRemoved, ...errors },
      },
    },
    async (req) => {
      const { nowMs } = serviceRequest(req, deps.access);
      return ok({ reader_id: req.params.id, removed: await deps.verbs.setReaderEmbedding(req.params.id, null, nowMs) });
    },
  );
}
