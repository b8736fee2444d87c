/**
 * The for-you feed's routes (docs/for-you.md), a Fastify plugin registered under `/v1`:
 * - `POST /feeds/for-you` — `{action, limit}` → `{items, has_more}`. The reader is the token's subject
 *   (or `X-Freshet-Reader` with the service key), never a body field. A `load_more` that silently fell
 *   back to a refresh answers with header `X-Freshet-Refreshed: 1`.
 * - `GET /feeds/for-you/peek` — `{count, capped}`: fresh unseen candidates a refresh would now bring
 *   (the "new" badge); bounded work, writes nothing; same auth as the feed.
 * - `PUT|GET /users/:id/interests` — explicit interest terms that drive recall relevance. Writing needs
 *   the service key; a reader token may read its own.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { itemToJson } from '../kernel/items/item.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import { type RequestAccess, readerRequest, readerOfRequest, requireServiceKey } from '../kernel/http/access.js';
import { ErrorEnvelope, FeedHeaders, IdParams, ok, ROUTE_ERRORS, type TypedApp } from '../kernel/http/schemas.js';
import type { ForYouFeed } from './service.js';
import { FeedResult, ForYouBody, InterestsBody, InterestsResult, PeekResult } from './schemas.js';

/** The verb the routes write interests through (src/use-cases/verbs.ts `UseCases` has it). */
export interface ForYouVerbs {
  /** Replaces the reader's interest terms; returns them as stored. */
  setInterests(readerId: string, terms: readonly string[], nowMs: number): Promise<string[]>;
}

/** What the routes call. */
export interface ForYouRouteDeps {
  access: RequestAccess;
  feed: ForYouFeed;
  content: ContentStore;
  verbs: ForYouVerbs;
}

/** Registers the for-you routes (see the module doc). */
export const forYouRoutes: FastifyPluginAsync<{ deps: ForYouRouteDeps }> = async (app, { deps }) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  feedRoutes(r, deps);
  interestRoutes(r, deps);
};

/** `POST /v1/feeds/for-you` and `GET /v1/feeds/for-you/peek`. */
function feedRoutes(r: TypedApp, deps: ForYouRouteDeps): void {
  const { access, feed } = deps;
  r.post(
    '/feeds/for-you',
    {
      schema: {
        tags: ['feeds'],
        summary: 'For-you feed: refresh or load_more',
        body: ForYouBody,
        headers: FeedHeaders,
        response: { 200: FeedResult, ...ROUTE_ERRORS },
      },
    },
    async (req, reply) => {
      const { readerId, nowMs } = readerRequest(req, access);
      const page = await feed.page(readerId, req.body.action, req.body.limit, nowMs);
      if (page.refreshed) void reply.header('x-freshet-refreshed', '1');
      return ok({ items: page.items.map(itemToJson), has_more: page.hasMore });
    },
  );

  r.get(
    '/feeds/for-you/peek',
    {
      schema: {
        tags: ['feeds'],
        summary: 'For-you: how many fresh unseen items a refresh would bring (writes nothing)',
        headers: FeedHeaders,
        response: { 200: PeekResult, ...ROUTE_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access);
      const peek = await feed.peek(readerId, nowMs);
      return ok({ count: peek.count, capped: peek.capped });
    },
  );
}

/** `PUT` (service key) and `GET /v1/users/:id/interests`. */
function interestRoutes(r: TypedApp, deps: ForYouRouteDeps): void {
  const { access, content } = deps;
  r.put(
    '/users/:id/interests',
    {
      schema: {
        tags: ['users'],
        summary: 'Set interest terms (service key)',
        params: IdParams,
        body: InterestsBody,
        response: { 200: InterestsResult, ...ROUTE_ERRORS, 413: ErrorEnvelope },
      },
    },
    async (req) => {
      requireServiceKey(req);
      return ok({
        reader_id: req.params.id,
        terms: await deps.verbs.setInterests(req.params.id, req.body.terms, access.clock.now()),
      });
    },
  );

  r.get(
    '/users/:id/interests',
    {
      schema: {
        tags: ['users'],
        summary: 'Read interest terms',
        params: IdParams,
        response: { 200: InterestsResult, ...ROUTE_ERRORS },
      },
    },
    async (req) => {
      const readerId = readerOfRequest(req, req.params.id);
      return ok({ reader_id: readerId, terms: await content.getInterests(readerId) });
    },
  );
}
