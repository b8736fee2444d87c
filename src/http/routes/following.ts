/**
 * Following-timeline routes (note 4): the graph — `PUT /v1/users/:id` (register a user),
 * `PUT|DELETE /v1/users/:id/following/:author_id`, `PUT|DELETE /v1/users/:id/blocks/:author_id`,
 * `GET /v1/users/:id/{following,followers,blocks}` — and `GET /v1/feeds/following`.
 * The service key acts for any user; a reader token only for itself (its own graph and timeline).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { fail } from '../../domain/errors.js';
import { itemToJson } from '../../domain/item.js';
import { parseTid, tidText } from '../../domain/timeline.js';
import type { Freshet } from '../../container.js';
import type { GraphPage } from '../../ports/social-graph.js';
import { nowOf, principalOf, readerOf, requireService } from '../access.js';
import { ErrorEnvelope, FeedHeaders, IdParams } from '../schemas.js';
import { BlockResult, FollowResult, ListQuery, ListResult, PairParams, TimelineQuery, TimelineResult, UserResult } from '../following-schemas.js';

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 503: ErrorEnvelope };
const ok = <T>(data: T) => ({ code: 0 as const, msg: 'success' as const, data });

/** Parses an optional integer query value in [min, max]. @throws FreshetError INVALID_INPUT. */
function intParam(value: string | undefined, name: string, min: number, max: number, def: number): number {
  if (value === undefined) return def;
  const n = /^[0-9]{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) throw fail('INVALID_INPUT', `${name} must be an integer in ${min}..${max}`);
  return n;
}

/** Parses an optional timeline id. @throws FreshetError INVALID_INPUT. */
function tidParam(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const t = parseTid(value);
  if (t === null) throw fail('INVALID_INPUT', `${name} must be a timeline id (decimal, < 2^53)`);
  return t;
}

function listJson(userId: string, page: GraphPage) {
  return ok({ user_id: userId, users: page.entries.map((e) => ({ id: e.userId, since: Math.floor(e.sinceMs / 1000) })), next_cursor: page.nextCursor });
}

export async function followingRoutes(app: FastifyInstance, f: Freshet): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const t = f.following.timeline;
  const graph = f.following.graph;
  const pair = { tags: ['graph'], params: PairParams, headers: FeedHeaders };

  r.put('/v1/users/:id', { schema: { tags: ['graph'], summary: 'Register a user (service key)', params: IdParams, response: { 200: UserResult, ...errors } } }, async (req) => {
    requireService(await principalOf(req, f.tokens));
    const created = (await graph.ensureUsers([req.params.id], f.clock.now())) === 1;
    return ok({ id: req.params.id, created });
  });

  r.put('/v1/users/:id/following/:author_id', { schema: { ...pair, summary: 'Follow (idempotent; backfills the inbox)', response: { 200: FollowResult, ...errors } } }, async (req) => {
    const p = await principalOf(req, f.tokens);
    const userId = readerOf(p, req, req.params.id);
    const res = await t.follow(userId, req.params.author_id, nowOf(p, req, f.clock));
    return ok({ user_id: userId, author_id: req.params.author_id, following: true, ...res });
  });

  r.delete('/v1/users/:id/following/:author_id', { schema: { ...pair, summary: 'Unfollow (idempotent)', response: { 200: FollowResult, ...errors } } }, async (req) => {
    const userId = readerOf(await principalOf(req, f.tokens), req, req.params.id);
    const res = await t.unfollow(userId, req.params.author_id);
    return ok({ user_id: userId, author_id: req.params.author_id, following: false, ...res });
  });

  r.put('/v1/users/:id/blocks/:author_id', { schema: { ...pair, summary: 'Block (removes follows both ways)', response: { 200: BlockResult, ...errors } } }, async (req) => {
    const p = await principalOf(req, f.tokens);
    const userId = readerOf(p, req, req.params.id);
    const res = await t.block(userId, req.params.author_id, nowOf(p, req, f.clock));
    await f.exclusions.blocksChanged([userId, req.params.author_id]); // note 5: blocked authors, both ways
    return ok({ user_id: userId, author_id: req.params.author_id, blocking: true, created: res.created });
  });

  r.delete('/v1/users/:id/blocks/:author_id', { schema: { ...pair, summary: 'Unblock (idempotent)', response: { 200: BlockResult, ...errors } } }, async (req) => {
    const userId = readerOf(await principalOf(req, f.tokens), req, req.params.id);
    const res = await t.unblock(userId, req.params.author_id);
    await f.exclusions.blocksChanged([userId, req.params.author_id]); // note 5: blocked authors, both ways
    return ok({ user_id: userId, author_id: req.params.author_id, blocking: false, ...res });
  });

  for (const list of ['following', 'followers', 'blocks'] as const) {
    r.get(`/v1/users/:id/${list}`, { schema: { tags: ['graph'], summary: `A user's ${list}, newest first`, params: IdParams, querystring: ListQuery, response: { 200: ListResult, ...errors } } }, async (req) => {
      const userId = readerOf(await principalOf(req, f.tokens), req, req.params.id);
      const limit = intParam(req.query.limit, 'limit', 1, 1000, 100);
      const [known] = await graph.exists([userId]);
      if (!known) throw fail('UNKNOWN_USER', `no user ${userId}`);
      return listJson(userId, await graph[list](userId, limit, req.query.cursor));
    });
  }

  r.get('/v1/feeds/following', { schema: { tags: ['feeds'], summary: 'Following timeline, newest first', querystring: TimelineQuery, headers: FeedHeaders, response: { 200: TimelineResult, ...errors } } }, async (req) => {
    const p = await principalOf(req, f.tokens);
    const readerId = readerOf(p, req);
    const q = { limit: intParam(req.query.limit, 'limit', 1, 100, 20), maxId: tidParam(req.query.max_id, 'max_id'), sinceId: tidParam(req.query.since_id, 'since_id') };
    const page = await t.read(readerId, q, nowOf(p, req, f.clock));
    const items = page.items.map((e) => ({ ...itemToJson(e.item), timeline_id: tidText(e.tid) }));
    return ok({ items, next_max_id: page.nextMaxId === null ? null : tidText(page.nextMaxId), rebuilt: page.rebuilt });
  });
}
