/**
 * Discover feed route (note 3): `GET /v1/feeds/discover?limit=20&cursor=…` → `{items, sources,
 * next_cursor, restarted}`. The reader is the token's subject (or `X-Freshet-Reader` with the service
 * key); a forged, edited or foreign cursor is 400 / 40005, a stale one starts afresh (`restarted`).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { fail } from '../../domain/errors.js';
import { itemToJson } from '../../domain/item.js';
import type { Freshet } from '../../container.js';
import { nowOf, principalOf, readerOf } from '../access.js';
import { ErrorEnvelope, FeedHeaders } from '../schemas.js';
import { DiscoverQuery, DiscoverResult, MAX_DISCOVER_LIMIT } from '../discover-schemas.js';

export async function discoverRoutes(app: FastifyInstance, f: Freshet): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.get(
    '/v1/feeds/discover',
    {
      schema: {
        tags: ['feeds'],
        summary: 'Discover feed: followed creators (+ trending), similar items, newest',
        querystring: DiscoverQuery,
        headers: FeedHeaders,
        response: { 200: DiscoverResult, 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 503: ErrorEnvelope },
      },
    },
    async (req) => {
      const p = await principalOf(req, f.tokens);
      const readerId = readerOf(p, req);
      const limit = req.query.limit === undefined ? 20 : Number(req.query.limit);
      if (!(limit >= 1 && limit <= MAX_DISCOVER_LIMIT)) throw fail('INVALID_INPUT', `limit must be an integer in 1..${MAX_DISCOVER_LIMIT}`);
      const page = await f.discover.feed.page(readerId, limit, req.query.cursor, nowOf(p, req, f.clock));
      const data = { items: page.items.map(itemToJson), sources: page.sources, next_cursor: page.nextCursor, restarted: page.restarted };
      return { code: 0 as const, msg: 'success' as const, data };
    },
  );
}
