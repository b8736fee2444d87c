/**
 * Personal data routes, a Fastify plugin under `/v1` (docs/api.md "Personal data"; src/use-cases/personal-data.ts):
 * - `DELETE /users/:id?items=delete|keep` (service key) — erases the user from every store; answers what
 *   was removed, with counts, and what keeps a hashed trace until it expires. Idempotent.
 * - `GET /users/:id/export` (service key, or that reader's token) — one JSON document of everything
 *   Freshet holds about the user, streamed in the envelope (`{code, msg, data: <UserExport>}`); 404 when it
 *   holds nothing about them.
 * These span every room, so they are the app's.
 */
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { readerOfRequest, serviceRequest, type RequestAccess } from '../../kernel/http/access.js';
import { Envelope, IdParams, NowHeaders, ok, LOOKUP_ERRORS } from '../../kernel/http/schemas.js';
import type { UseCases } from '../../use-cases/verbs.js';
import { UserExport } from '../../use-cases/schemas.js';

const EraseQuery = Type.Object(
  {
    items: Type.Optional(
      Type.Union([Type.Literal('delete'), Type.Literal('keep')], {
        default: 'delete',
        description: 'delete (default): their items leave every feed; keep: their items stay, under their id',
      }),
    ),
  },
  { additionalProperties: false },
);

const EraseResult = Envelope(
  Type.Object({
    user_id: Type.String(),
    items: Type.String(),
    removed: Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer())),
    kept: Type.Array(Type.String(), { description: 'what keeps a hashed or counted trace, and until when' }),
  }),
);

/** What the routes call: the erase and export verbs (src/use-cases/verbs.ts). */
export interface PersonalDataRouteDeps {
  access: RequestAccess;
  verbs: Pick<UseCases, 'eraseUser' | 'exportUser'>;
}

/** Registers the erase and export routes (see the module doc). */
export const personalDataRoutes: FastifyPluginAsync<{ deps: PersonalDataRouteDeps }> = async (app, { deps }) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { access } = deps;

  r.delete(
    '/users/:id',
    {
      schema: {
        tags: ['users'],
        summary: 'Erase a user from every store (service key); idempotent',
        params: IdParams,
        querystring: EraseQuery,
        headers: NowHeaders,
        response: { 200: EraseResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { nowMs } = serviceRequest(req, access);
      const e = await deps.verbs.eraseUser(req.params.id, req.query.items ?? 'delete', nowMs);
      return ok({ user_id: e.userId, items: e.items, removed: e.removed, kept: e.kept });
    },
  );

  r.get(
    '/users/:id/export',
    {
      schema: {
        tags: ['users'],
        summary: 'Everything Freshet holds about a user, as one JSON document (streamed)',
        params: IdParams,
        response: { 200: Envelope(UserExport), ...LOOKUP_ERRORS },
      },
    },
    async (req, reply) => {
      const readerId = readerOfRequest(req, req.params.id);
      const chunks = deps.verbs.exportUser(readerId, access.clock.now());
      const first = await chunks.next(); // a user Freshet knows nothing about is a 404, before any byte is sent
      async function* body(): AsyncGenerator<string> {
        yield '{"code":0,"msg":"success","data":';
        if (!first.done) yield first.value;
        yield* chunks;
        yield '}';
      }
      // a stream bypasses the response serializer; its bytes are the envelope around UserExport
      return reply.type('application/json; charset=utf-8').send(Readable.from(body()) as never);
    },
  );
};
