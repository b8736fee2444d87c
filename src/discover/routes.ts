/**
 * Discover feed route (docs/discover.md): `GET /v1/feeds/discover?limit=20&cursor=…` → `{items, sources,
 * next_cursor, restarted}`. The reader is the token's subject (or `X-Freshet-Reader` with the service
 * key); a forged, edited or foreign cursor is 400 / 40005, a stale one starts afresh (`restarted`).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { itemToJson } from '../kernel/items/item.js';
import { type RequestAccess, readerRequest } from '../kernel/http/access.js';
import { ErrorEnvelope, FeedHeaders, ok } from '../kernel/http/schemas.js';
import type { DiscoverFeed } from './service.js';
import { DiscoverQuery, DiscoverResult } from './schemas.js';

/** What the route calls. */
export interface DiscoverRouteDeps {
  access: RequestAccess;
  feed: DiscoverFeed;
}

/** Registers `GET /feeds/discover` (under `/v1`). */
export const discoverRoutes: FastifyPluginAsync<{ deps: DiscoverRouteDeps }> = async (app, { deps }) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { access, feed } = deps;
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
