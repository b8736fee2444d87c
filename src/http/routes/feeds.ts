/**
 * Feed routes: `POST /v1/feeds/for-you` (note 1's `{action, limit}` → `{items, has_more}`).
 * The reader is the token's subject (or `X-Freshet-Reader` with the service key), never a body field.
 * A `load_more` that silently fell back to a refresh answers with header `X-Freshet-Refreshed: 1`.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { itemToJson } from '../../domain/item.js';
import type { Freshet } from '../../container.js';
import { nowOf, principalOf, readerOf } from '../access.js';
import { ErrorEnvelope, FeedHeaders, FeedResult, ForYouBody } from '../schemas.js';

export async function feedRoutes(app: FastifyInstance, f: Freshet): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.post(
    '/v1/feeds/for-you',
    {
      schema: {
        tags: ['feeds'],
        summary: 'For-you feed: refresh or load_more',
        body: ForYouBody,
        headers: FeedHeaders,
        response: { 200: FeedResult, 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 503: ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const p = await principalOf(req, f.tokens);
      const readerId = readerOf(p, req);
      const page = await f.forYou.serve(readerId, req.body.action, req.body.limit, nowOf(p, req, f.clock));
      if (page.refreshed) void reply.header('x-freshet-refreshed', '1');
      return { code: 0 as const, msg: 'success' as const, data: { items: page.items.map(itemToJson), has_more: page.hasMore } };
    },
  );
}
