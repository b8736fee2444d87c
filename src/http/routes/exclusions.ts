/**
 * Exclusion routes (note 5). The reader is the token's subject (or `X-Freshet-Reader` with the
 * service key), never a body field; `X-Freshet-Now` (service key) sets the virtual time.
 * - `POST /v1/engagements` `{item_id, kind: reply|like|share}` — the item leaves the reader's feeds.
 * - `POST /v1/feedback` `{item_id, kind: "not_interested"}` — the item leaves the reader's feeds for
 *   good and its author is down-weighted for the reader for `FRESHET_NOT_INTERESTED_AUTHOR_DAYS`.
 * - `DELETE /v1/feedback/:item_id` (`?kind=not_interested`) — undoes it.
 * Unknown or deleted item → 404 (40401), nothing written.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Freshet } from '../../container.js';
import { nowOf, principalOf, readerOf } from '../access.js';
import { ErrorEnvelope, FeedHeaders } from '../schemas.js';
import {
  EngagementBody,
  EngagementResult,
  FeedbackBody,
  FeedbackDeleteResult,
  FeedbackParams,
  FeedbackQuery,
  FeedbackResult,
} from '../exclusion-schemas.js';

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 503: ErrorEnvelope };
const ok = <T>(data: T) => ({ code: 0 as const, msg: 'success' as const, data });

/** Registers the exclusion routes on `app`. */
export async function exclusionRoutes(app: FastifyInstance, f: Freshet): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post('/v1/engagements', { schema: { tags: ['exclusions'], summary: 'Record a reply, like or share', body: EngagementBody, headers: FeedHeaders, response: { 200: EngagementResult, ...errors } } }, async (req) => {
    const p = await principalOf(req, f.tokens);
    const readerId = readerOf(p, req);
    const { item_id, kind } = req.body;
    const { created } = await f.exclusions.recordEngagement(readerId, item_id, kind, nowOf(p, req, f.clock));
    return ok({ reader_id: readerId, item_id, kind, created });
  });

  r.post('/v1/feedback', { schema: { tags: ['exclusions'], summary: 'Not interested in an item', body: FeedbackBody, headers: FeedHeaders, response: { 200: FeedbackResult, ...errors } } }, async (req) => {
    const p = await principalOf(req, f.tokens);
    const readerId = readerOf(p, req);
    const { item_id, kind } = req.body;
    const res = await f.exclusions.notInterested(readerId, item_id, nowOf(p, req, f.clock));
    const until = Math.floor(res.authorPenaltyUntilMs / 1000);
    return ok({ reader_id: readerId, item_id, kind, created: res.created, author_id: res.authorId, author_penalty_until: until });
  });

  r.delete('/v1/feedback/:item_id', { schema: { tags: ['exclusions'], summary: 'Undo a "not interested"', params: FeedbackParams, querystring: FeedbackQuery, headers: FeedHeaders, response: { 200: FeedbackDeleteResult, ...errors } } }, async (req) => {
    const p = await principalOf(req, f.tokens);
    const readerId = readerOf(p, req);
    const { removed } = await f.exclusions.undoNotInterested(readerId, req.params.item_id);
    return ok({ reader_id: readerId, item_id: req.params.item_id, kind: req.query.kind ?? 'not_interested', removed });
  });
}
