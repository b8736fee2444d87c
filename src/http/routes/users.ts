/**
 * Reader routes: `PUT|GET /v1/users/:id/interests` — explicit interest terms that drive recall
 * relevance (note 1). Writing needs the service key; a reader token may read its own.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Freshet } from '../../container.js';
import { principalOf, readerOf, requireService } from '../access.js';
import { ErrorEnvelope, IdParams, InterestsBody, InterestsResult } from '../schemas.js';

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope };

export async function userRoutes(app: FastifyInstance, f: Freshet): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.put('/v1/users/:id/interests', { schema: { tags: ['users'], summary: 'Set interest terms (service key)', params: IdParams, body: InterestsBody, response: { 200: InterestsResult, ...errors } } }, async (req) => {
    requireService(await principalOf(req, f.tokens));
    await f.content.setInterests(req.params.id, req.body.terms, f.clock.now());
    const terms = await f.content.getInterests(req.params.id);
    return { code: 0 as const, msg: 'success' as const, data: { reader_id: req.params.id, terms } };
  });
  r.get('/v1/users/:id/interests', { schema: { tags: ['users'], summary: 'Read interest terms', params: IdParams, response: { 200: InterestsResult, ...errors } } }, async (req) => {
    const readerId = readerOf(await principalOf(req, f.tokens), req, req.params.id);
    const terms = await f.content.getInterests(readerId);
    return { code: 0 as const, msg: 'success' as const, data: { reader_id: readerId, terms } };
  });
}
