/**
 * The explain API's route, a Fastify plugin under `/v1` (docs/explain.md, docs/api.md):
 * `GET /feeds/{for-you|hot|discover|following}/explain?item_id=…` — why an item would or would not be
 * in the feed of the request's reader now: every rule that removes it, its score and its rank. Auth as
 * the feed routes (a reader token acts for its own reader; the service key for `X-Freshet-Reader`, at
 * `X-Freshet-Now`). Writes nothing. One route for the four feeds: each answers from its own explain
 * (src/use-cases/explain.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { readerRequest, type RequestAccess } from '../../kernel/http/access.js';
import { FeedHeaders, Id, ok, LOOKUP_ERRORS } from '../../kernel/http/schemas.js';
import type { Explanation } from '../../kernel/explain.js';
import { explanationJson, type ExplainQuery } from '../../use-cases/explain.js';
import { RANGE_PATTERN } from '../../hot/domain.js';
import { ExplainResult, FeedName } from '../../use-cases/schemas.js';

const Params = Type.Object({ feed: FeedName });
const Query = Type.Object(
  {
    item_id: Id,
    range: Type.Optional(
      Type.String({
        pattern: RANGE_PATTERN,
        description:
          'hot only: the range of the hot list, as GET /v1/hot takes it (default 72h); other feeds refuse it',
      }),
    ),
  },
  { additionalProperties: false },
);
/** What the route calls. */
export interface ExplainRouteDeps {
  access: RequestAccess;
  explain(q: ExplainQuery): Promise<Explanation>;
}

/** Registers `GET /feeds/:feed/explain` (see the module doc). */
export const explainRoutes: FastifyPluginAsync<{ deps: ExplainRouteDeps }> = async (app, { deps }) => {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/feeds/:feed/explain',
    {
      schema: {
        tags: ['feeds'],
        summary: 'Why an item would or would not be in a feed now (writes nothing)',
        params: Params,
        querystring: Query,
        headers: FeedHeaders,
        response: { 200: ExplainResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, deps.access);
      const { item_id: itemId, range } = req.query;
      const e = await deps.explain({ feed: req.params.feed, readerId, itemId, nowMs, ...(range ? { range } : {}) });
      return ok(explanationJson(e));
    },
  );
};
