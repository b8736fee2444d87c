/**
 * Following-timeline routes (docs/following.md): the graph — `PUT /v1/users/:id` (register a user),
 * `PUT|DELETE /v1/users/:id/following/:author_id`, `PUT|DELETE /v1/users/:id/blocks/:author_id`,
 * `GET /v1/users/:id/{following,followers,blocks}` — and `GET /v1/feeds/following`, with its realtime
 * form `GET /v1/feeds/following/stream` (Server-Sent Events, ./stream-hub.ts).
 * The service key acts for any user; a reader token only for itself (its own graph and timeline).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { fail } from '../kernel/errors.js';
import { parseTid, tidText } from './domain.js';
import type { GraphPage } from './social-graph.js';
import {
  type RequestAccess,
  readerRequest,
  readerOfRequest,
  requireServiceKey,
  serviceRequest,
} from '../kernel/http/access.js';
import {
  ErrorEnvelope,
  FeedHeaders,
  IdParams,
  NowHeaders,
  ok,
  LOOKUP_ERRORS,
  type TypedApp,
} from '../kernel/http/schemas.js';
import type { SocialGraph } from './social-graph.js';
import type { FollowingTimeline } from './service.js';
import {
  BlockResult,
  TimelineMarkerBody,
  TimelineMarkerResult,
  FollowsBody,
  FollowsResult,
  FollowResult,
  ListQuery,
  ListResult,
  PairParams,
  StreamHeaders,
  StreamQuery,
  TimelineQuery,
  TimelineResult,
  UserResult,
  timelineItemJson,
  timelineMarkerJson,
} from './schemas.js';
import { watchDrop, type StreamHub } from './stream-hub.js';

/** Parses an optional timeline id (the schema checked its digits; this checks < 2^53). @throws FreshetError INVALID_INPUT. */
function tidParam(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const t = parseTid(value);
  if (t === null)
    throw fail(
      'INVALID_INPUT',
      `query parameter ${name} ${JSON.stringify(value)} is not a timeline id: send the timeline_id or next_max_id of a page (a decimal below 2^53)`,
    );
  return t;
}

/**
 * Where a catch-up page starts: `min_id`, or `marker` for `from=marker`; null for a newest-first read.
 * @throws FreshetError INVALID_INPUT when a catch-up query also names `max_id` or `since_id`.
 */
function catchUpStart(q: {
  min_id?: string;
  from?: 'marker';
  max_id?: string;
  since_id?: string;
}): number | 'marker' | null {
  if (q.min_id === undefined && q.from === undefined) return null;
  if (q.max_id !== undefined || q.since_id !== undefined || (q.min_id !== undefined && q.from !== undefined)) {
    throw fail(
      'INVALID_INPUT',
      'query parameters min_id and from=marker (catch-up, oldest first) go alone: without max_id, since_id or each other',
    );
  }
  return q.from === 'marker' ? 'marker' : tidParam(q.min_id, 'min_id')!;
}

function listJson(userId: string, page: GraphPage) {
  return ok({
    user_id: userId,
    users: page.entries.map((e) => ({ id: e.userId, since: Math.floor(e.sinceMs / 1000) })),
    next_cursor: page.nextCursor,
  });
}

/** The verbs the routes write through (src/use-cases/verbs.ts `UseCases` has them). */
export interface FollowingVerbs {
  registerUsers(userIds: readonly string[], nowMs: number): Promise<number>;
  importFollows(
    edges: readonly (readonly [string, string])[],
    nowMs: number,
  ): Promise<{ inserted: number; blocked: number }>;
  follow(readerId: string, authorId: string, nowMs: number): Promise<{ created: boolean; backfilled: number }>;
  unfollow(readerId: string, authorId: string, nowMs: number): Promise<{ removed: boolean }>;
  block(readerId: string, authorId: string, nowMs: number): Promise<{ created: boolean }>;
  unblock(readerId: string, authorId: string): Promise<{ removed: boolean }>;
}

/** What the routes call: reads go to the timeline and graph; writes to the app's use cases. */
export interface FollowingRouteDeps {
  access: RequestAccess;
  timeline: FollowingTimeline;
  graph: SocialGraph;
  /** The realtime stream's sessions of this process. */
  stream: StreamHub;
  verbs: FollowingVerbs;
}

/** Registers the graph and timeline routes (under `/v1`). */
export const followingRoutes: FastifyPluginAsync<{ deps: FollowingRouteDeps }> = async (app, { deps }) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  userRoutes(r, deps);
  followRoutes(r, deps);
  blockRoutes(r, deps);
  listRoutes(r, deps);
  timelineRoute(r, deps);
  markerRoute(r, deps);
  streamRoute(r, deps);
};

/** `POST /v1/follows` (bulk, service key) and `PUT /v1/users/:id` (register a user). */
function userRoutes(r: TypedApp, deps: FollowingRouteDeps): void {
  const { access } = deps;

  r.post(
    '/follows',
    {
      schema: {
        tags: ['graph'],
        summary: 'Follow edges in bulk (service key): new edges only, edges across a block skipped',
        body: FollowsBody,
        headers: NowHeaders,
        response: { 200: FollowsResult, ...LOOKUP_ERRORS, 413: ErrorEnvelope },
      },
    },
    async (req) => {
      const { nowMs } = serviceRequest(req, access);
      const edges = req.body.edges.map((e) => [e.follower_id, e.followee_id] as const);
      return ok(await deps.verbs.importFollows(edges, nowMs));
    },
  );

  r.put(
    '/users/:id',
    {
      schema: {
        tags: ['graph'],
        summary: 'Register a user (service key)',
        params: IdParams,
        response: { 200: UserResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      requireServiceKey(req);
      const created = (await deps.verbs.registerUsers([req.params.id], access.clock.now())) === 1;
      return ok({ id: req.params.id, created });
    },
  );
}

/** `PUT|DELETE /v1/users/:id/following/:author_id`. */
function followRoutes(r: TypedApp, deps: FollowingRouteDeps): void {
  const { access } = deps;
  const pair = { tags: ['graph'], params: PairParams };

  r.put(
    '/users/:id/following/:author_id',
    {
      schema: {
        ...pair,
        headers: NowHeaders,
        summary: 'Follow (idempotent; backfills the inbox)',
        response: { 200: FollowResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId: userId, nowMs } = readerRequest(req, access, req.params.id);
      const res = await deps.verbs.follow(userId, req.params.author_id, nowMs);
      return ok({ user_id: userId, author_id: req.params.author_id, following: true, ...res });
    },
  );

  r.delete(
    '/users/:id/following/:author_id',
    {
      schema: {
        ...pair,
        summary: 'Unfollow (idempotent)',
        headers: NowHeaders,
        response: { 200: FollowResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId: userId, nowMs } = readerRequest(req, access, req.params.id);
      const res = await deps.verbs.unfollow(userId, req.params.author_id, nowMs);
      return ok({ user_id: userId, author_id: req.params.author_id, following: false, ...res });
    },
  );
}

/** `PUT|DELETE /v1/users/:id/blocks/:author_id`. */
function blockRoutes(r: TypedApp, deps: FollowingRouteDeps): void {
  const { access } = deps;
  const pair = { tags: ['graph'], params: PairParams };

  r.put(
    '/users/:id/blocks/:author_id',
    {
      schema: {
        ...pair,
        headers: NowHeaders,
        summary: 'Block (removes follows both ways)',
        response: { 200: BlockResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId: userId, nowMs } = readerRequest(req, access, req.params.id);
      const res = await deps.verbs.block(userId, req.params.author_id, nowMs);
      return ok({ user_id: userId, author_id: req.params.author_id, blocking: true, created: res.created });
    },
  );

  r.delete(
    '/users/:id/blocks/:author_id',
    { schema: { ...pair, summary: 'Unblock (idempotent)', response: { 200: BlockResult, ...LOOKUP_ERRORS } } },
    async (req) => {
      const userId = readerOfRequest(req, req.params.id);
      const res = await deps.verbs.unblock(userId, req.params.author_id);
      return ok({ user_id: userId, author_id: req.params.author_id, blocking: false, ...res });
    },
  );
}

/** `GET /v1/users/:id/{following,followers,blocks}`, newest first. */
function listRoutes(r: TypedApp, deps: FollowingRouteDeps): void {
  const { graph } = deps;
  for (const list of ['following', 'followers', 'blocks'] as const) {
    r.get(
      `/users/:id/${list}`,
      {
        schema: {
          tags: ['graph'],
          summary: `A user's ${list}, newest first`,
          params: IdParams,
          querystring: ListQuery,
          response: { 200: ListResult, ...LOOKUP_ERRORS },
        },
      },
      async (req) => {
        const userId = readerOfRequest(req, req.params.id);
        const [known] = await graph.exists([userId]);
        if (!known) throw fail('UNKNOWN_USER', `no user ${userId}`);
        return listJson(userId, await graph[list](userId, req.query.limit ?? 100, req.query.cursor));
      },
    );
  }
}

/** `GET /v1/feeds/following`: newest first, or a catch-up oldest first. */
function timelineRoute(r: TypedApp, deps: FollowingRouteDeps): void {
  const { access, timeline: t } = deps;
  r.get(
    '/feeds/following',
    {
      schema: {
        tags: ['feeds'],
        summary: 'Following timeline, newest first',
        querystring: TimelineQuery,
        headers: FeedHeaders,
        response: { 200: TimelineResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access);
      const limit = req.query.limit ?? 20;
      const catchUp = catchUpStart(req.query);
      if (catchUp !== null) {
        const minId = catchUp === 'marker' ? (await t.marker(readerId, nowMs)).lastReadId : catchUp;
        const page = await t.catchUp(readerId, { minId, limit }, nowMs);
        return ok({
          items: page.items.map(timelineItemJson),
          next_max_id: null,
          next_min_id: page.nextMinId === null ? null : tidText(page.nextMinId),
          rebuilt: false,
        });
      }
      const q = {
        limit,
        maxId: tidParam(req.query.max_id, 'max_id'),
        sinceId: tidParam(req.query.since_id, 'since_id'),
      };
      const page = await t.page(readerId, q, nowMs);
      const items = page.items.map(timelineItemJson);
      return ok({
        items,
        next_max_id: page.nextMaxId === null ? null : tidText(page.nextMaxId),
        rebuilt: page.rebuilt,
      });
    },
  );
}

/** `PUT /v1/users/:id/markers/following`. */
function markerRoute(r: TypedApp, deps: FollowingRouteDeps): void {
  const { access, timeline: t } = deps;
  r.put(
    '/users/:id/markers/following',
    {
      schema: {
        tags: ['feeds'],
        summary: 'Move the following-timeline marker (forward only unless force)',
        params: IdParams,
        body: TimelineMarkerBody,
        headers: NowHeaders,
        response: { 200: TimelineMarkerResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access, req.params.id);
      const m = await t.setMarker(readerId, Number(req.body.last_read_id), req.body.force ?? false, nowMs);
      return ok({ moved: m.moved, ...timelineMarkerJson(m) });
    },
  );
}

/** `GET /v1/feeds/following/stream`. */
function streamRoute(r: TypedApp, deps: FollowingRouteDeps): void {
  const { access } = deps;
  // Server-Sent Events: checks (token, reader, limits, cursor) answer envelopes as any route; then the
  // response is taken over and held by a StreamSession. Not in the OpenAPI document (an endless
  // text/event-stream answer; docs/api.md describes it).
  r.get(
    '/feeds/following/stream',
    { schema: { hide: true, querystring: StreamQuery, headers: StreamHeaders, response: LOOKUP_ERRORS } },
    async (req, reply) => {
      // the client may drop the socket while the cursor is read: listen before the first await
      const dropped = watchDrop(reply.raw);
      const { readerId, nowMs } = readerRequest(req, access);
      const [startNow, clockAtStart] = [nowMs, access.clock.now()];
      const resume = req.headers['last-event-id'];
      const since = tidParam(
        typeof resume === 'string' ? resume : req.query.since_id,
        typeof resume === 'string' ? 'Last-Event-ID' : 'since_id',
      );
      const now = () => startNow + (access.clock.now() - clockAtStart);
      await deps.stream.serve(readerId, since, reply.raw, dropped, now, () => void reply.hijack());
    },
  );
}
