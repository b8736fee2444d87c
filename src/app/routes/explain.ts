/**
 * The explain API's route, a Fastify plugin under `/v1` (docs/explain.md, docs/api.md):
 * `GET /feeds/{for-you|hot|discover|following}/explain?item_id=…` — why an item would or would not be
 * in the feed of the request's reader now: every rule that removes it, its score and its rank. Auth as
 * the feed routes (a reader token acts for its own reader; the service key for `X-Freshet-Reader`, at
 * `X-Freshet-Now`). Writes nothing. One route for the four feeds: each answers from its own explain
 * (src/app/explain.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { readerRequest, type RequestAccess } from '../../kernel/http/access.js';
import { Envelope, ErrorEnvelope, FeedHeaders, Id, ok } from '../../kernel/http/schemas.js';
import type { Explanation } from '../../kernel/explain.js';
import { explanationJson, type ExplainQuery } from '../explain.js';
import { RANGE_PATTERN } from '../../hot/domain.js';

/** The feed names as a schema (spelled out: a mapped union loses its members in the static type). */
const FeedName = Type.Union([
  Type.Literal('for-you'),
  Type.Literal('hot'),
  Type.Literal('discover'),
  Type.Literal('following'),
]);

const RuleOut = Type.Object({
  rule: Type.String({ description: 'the rule (docs/explain.md lists them)' }),
  reason: Type.String({ description: 'one plain English sentence' }),
  day: Type.Optional(Type.String({ description: 'seen, rolling filter: the UTC day (YYYY-MM-DD) that holds it' })),
  sub_filter: Type.Optional(Type.Integer({ description: "seen, the reader's own filter: the sub-filter holding it" })),
  fpr: Type.Optional(Type.Number({ description: "seen: that filter's current false-positive rate, from its fill" })),
  phrase: Type.Optional(Type.String({ description: 'muted_word: the phrase as the reader wrote it' })),
  action: Type.Optional(Type.Union([Type.Literal('hide'), Type.Literal('warn')])),
  lang: Type.Optional(Type.String({ description: "language: the item's primary language tag" })),
});

/** `data` of `GET /v1/feeds/{feed}/explain`. */
export const ExplainResult = Envelope(
  Type.Object({
    feed: FeedName,
    reader_id: Type.String(),
    item_id: Type.String(),
    eligible: Type.Boolean({ description: 'rules is empty: a refresh now could serve it' }),
    rules: Type.Array(RuleOut, { description: 'every rule that removes it, in the order the feed applies them' }),
    notes: Type.Array(RuleOut, { description: 'what marks it without removing it (a warn muted word)' }),
    score: Type.Union([
      Type.Object({
        value: Type.Number(),
        parts: Type.Record(Type.String(), Type.Union([Type.Number(), Type.String()]), {
          description: 'the factors the feed combines (docs/explain.md, per feed)',
        }),
      }),
      Type.Null(),
    ]),
    rank: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: '1-based rank in a refresh now; null when not eligible or beyond one refresh',
    }),
    at_ms: Type.Integer({ description: 'the time explained, epoch ms' }),
  }),
);

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
const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 503: ErrorEnvelope };

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
        response: { 200: ExplainResult, ...errors },
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
