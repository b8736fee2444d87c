/**
 * The HTTP edge's limits on slow, greedy and noisy clients: request and header
 * timeouts, and per-caller rate and concurrency limits — on every `/v1` route a reader token can call.
 *
 * - **Timeouts** (Node's HTTP server, set through Fastify): a request whose headers have not all arrived
 *   within `headersTimeoutMs`, or whose body has not within `requestTimeoutMs`, is answered 408 / 40801 and
 *   its socket closed (src/server/errors.ts `clientErrorHandler`). Node checks open requests every
 *   {@link checkIntervalMs} (its default, 30 s, would let a slow client hold a socket that much longer).
 * - **Rate** (`@fastify/rate-limit`, a fixed window): each caller — a reader token's `sub`, or the service
 *   key as a whole — gets `readerRequests` / `serviceRequests` requests per `rateWindowMs` on the
 *   {@link LIMITED_ROUTES} (the feed pages, peek, explains and views: each runs a recall round or writes);
 *   a reader also gets `readerOtherRequests` per window on every other `/v1` route (export, notifications,
 *   exclusions, markers, preferences, the graph, …: a budget of its own, so polling them never costs a
 *   page; the service key is not limited there). Past either, 429 / 42901 with `Retry-After` (seconds to
 *   the window's end). The counts live in Redis when Redis is configured (src/server/rate-stores.ts:
 *   shared by every worker and server), in process otherwise (the library's LRU store, {@link
 *   RATE_CALLERS} callers).
 * - **Concurrency** (ours, in process): a reader has at most `readerConcurrency` feed pages in flight in
 *   one process; one more is 429 / 42901 with `Retry-After: 1`. `@fastify/rate-limit` counts requests, not
 *   requests in flight, and a queue (p-limit and the like) would let a greedy reader hold sockets and
 *   memory instead of being told to back off — the counter is a map of small integers, released when the
 *   response's socket closes (answered or abandoned). An export (`GET /v1/users/:id/export`, a stream
 *   of everything held about a user) runs one at a time per user in one process, whoever asks.
 *
 * Sizes (defaults): a reader scrolling reads a page every few seconds, one at a time (a refresh may race
 * a load_more), and records a view per item it opens — well under 1 request a second. 30 requests per
 * 10 s (3 a second) and 2 pages in flight are far above that. The window is short so that a greedy
 * reader's burst at the start of a window is short too: on the embedded default every request runs
 * to its end without yielding (PGlite answers in process), so requests never overlap there and only the
 * rate bounds one reader's share; on PostgreSQL + Redis both bound it (bench/noisy-neighbour.ts).
 * The service key is the application's own backend, acting for every reader: unlimited unless
 * `FRESHET_RATE_SERVICE` gives it a budget.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { fail } from '../kernel/errors.js';
import { ErrorEnvelope } from '../kernel/http/schemas.js';
import type { EdgeSettings } from '../kernel/http/edge-settings.js';
import type { RedisHandle } from '../kernel/stores.js';
import { memoryRateStore, redisRateStore } from './rate-stores.js';

/** The edge's limits (src/kernel/http/edge-settings.ts: the composition parses them, below the server). */
export type { EdgeSettings } from '../kernel/http/edge-settings.js';

/** Callers the in-process rate counts remember (an LRU; ~100 B each): a forgotten caller starts a new window. */
export const RATE_CALLERS = 100_000;

/** How often Node looks for requests past their timeouts: a quarter of the shorter one, 250 ms to 5 s. */
export function checkIntervalMs(s: Pick<EdgeSettings, 'requestTimeoutMs' | 'headersTimeoutMs'>): number {
  return Math.min(5000, Math.max(250, Math.floor(Math.min(s.requestTimeoutMs, s.headersTimeoutMs) / 4)));
}

/**
 * The routes a greedy client can make expensive (method and path under `/v1`): feed pages, peek and
 * explains (the concurrency limit too, `pages`) and views. Every other `/v1` route has a reader budget of
 * its own (`readerOtherRequests`).
 */
export const LIMITED_ROUTES: ReadonlyMap<string, { pages: boolean }> = new Map([
  ['POST /v1/feeds/for-you', { pages: true }],
  // a peek runs a recall round, as a refresh does
  ['GET /v1/feeds/for-you/peek', { pages: true }],
  ['GET /v1/feeds/discover', { pages: true }],
  ['GET /v1/feeds/following', { pages: true }],
  ['GET /v1/hot', { pages: true }],
  // an explain runs a feed's read path (discover's: up to 3 pages of 100)
  ['GET /v1/feeds/:feed/explain', { pages: true }],
  ['POST /v1/views', { pages: false }],
]);

/** Who a request counts against: a reader (its token's `sub`) or the service key. */
function callerOf(req: FastifyRequest): { readerId: string } | 'service' {
  const p = req.principal;
  return p && p.kind === 'reader' ? { readerId: p.readerId } : 'service';
}

/** The route whose requests run one at a time per user (see the module doc). */
const EXPORT_ROUTE = 'GET /v1/users/:id/export';

/** The {@link LIMITED_ROUTES} entry of a route (HEAD runs the GET handler: limited alike), if any. */
function limitedRoute(route: RouteOptions): { pages: boolean } | undefined {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return methods
    .map((m) => LIMITED_ROUTES.get(`${m === 'HEAD' ? 'GET' : m} ${route.url}`))
    .find((x) => x !== undefined);
}

/** Adds `limit`'s check to the route's `onRequest` hooks (after those it has: authentication ran first). */
function enterFirst(route: RouteOptions, limit: ConcurrencyLimit): void {
  const hooks = route.onRequest ? [route.onRequest].flat() : [];
  route.onRequest = [...hooks, (req, reply, done) => done(limit.enter(req, reply))] as RouteOptions['onRequest'];
}

/**
 * The rate-limit settings of the routes outside {@link LIMITED_ROUTES}: a reader's budget of its own
 * (`o:<reader>`), the service key not limited.
 */
function otherBudget(s: EdgeSettings) {
  return {
    max: s.readerOtherRequests,
    allowList: (req: FastifyRequest) => callerOf(req) === 'service' || s.readerOtherRequests === 0,
    keyGenerator: (req: FastifyRequest) => {
      const c = callerOf(req);
      return c === 'service' ? 'service' : `o:${c.readerId}`;
    },
    errorResponseBuilder: (_req: FastifyRequest, ctx: { max: number; after: string }) =>
      fail(
        'RATE_LIMITED',
        `this reader sent more than ${ctx.max} requests to routes other than feeds and views in ${Math.round(s.rateWindowMs / 1000)} s (FRESHET_RATE_READER_OTHER); retry after ${ctx.after}`,
      ),
  };
}

/**
 * Installs the rate and concurrency limits on every route of the `/v1` scope `v1` (see the module doc):
 * call it inside that scope, after the authentication hook and before its routes are registered.
 */
export async function installEdgeLimits(
  v1: FastifyInstance,
  s: EdgeSettings,
  redis: RedisHandle | null,
): Promise<void> {
  const pages = new ConcurrencyLimit(
    s.readerConcurrency,
    readerKey,
    (n) => `this reader already has ${n} feed pages in flight (FRESHET_READER_CONCURRENCY); wait for one to answer`,
  );
  // the path's user, whoever asks (the service key or that reader's token)
  const exports = new ConcurrencyLimit(
    1,
    (req) => `export:${(req.params as { id?: string }).id ?? ''}`,
    () => 'an export of this user is already running; wait for it to end',
  );
  const other = otherBudget(s);
  // documents 429 and adds the concurrency hooks; the rate limit is the library's (its own onRoute hook)
  v1.addHook('onRoute', (route) => {
    const kind = limitedRoute(route);
    route.config = { ...(route.config ?? {}), rateLimit: kind ? {} : other } as typeof route.config;
    const response = ((route.schema ??= {}).response ??= {}) as Record<string, unknown>;
    response['429'] ??= ErrorEnvelope;
    if (kind?.pages && s.readerConcurrency > 0) enterFirst(route, pages);
    if ([route.method].flat().includes('GET') && `GET ${route.url}` === EXPORT_ROUTE) enterFirst(route, exports);
  });
  await v1.register(rateLimit, {
    global: false,
    hook: 'onRequest',
    timeWindow: s.rateWindowMs,
    max: (req) => (callerOf(req) === 'service' ? s.serviceRequests : s.readerRequests),
    // 0 = no limit for that kind of caller
    allowList: (req) => (callerOf(req) === 'service' ? s.serviceRequests : s.readerRequests) === 0,
    keyGenerator: (req) => {
      const c = callerOf(req);
      return c === 'service' ? 'service' : `u:${c.readerId}`;
    },
    store: redis ? redisRateStore(redis, s.rateWindowMs) : memoryRateStore(RATE_CALLERS),
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    addHeaders: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
      'retry-after': true,
    },
    errorResponseBuilder: (req, ctx) =>
      fail(
        'RATE_LIMITED',
        `${callerOf(req) === 'service' ? 'the service key' : 'this reader'} sent more than ${ctx.max} requests to feeds and views in ${Math.round(s.rateWindowMs / 1000)} s (FRESHET_RATE_${callerOf(req) === 'service' ? 'SERVICE' : 'READER'}); retry after ${ctx.after}`,
      ),
  });
}

/** The reader a request counts against in the pages in flight; null for the service key (it acts for many). */
function readerKey(req: FastifyRequest): string | null {
  const c = callerOf(req);
  return c === 'service' ? null : c.readerId;
}

/**
 * Requests in flight per key in this process (see the module doc): feed pages per reader (the service key
 * is not counted: it acts for many readers at once), exports per user.
 */
class ConcurrencyLimit {
  private readonly open = new Map<string, number>();

  /**
   * @param keyOf what a request counts against (null: not counted);
   * @param refusal the message of a refusal, given the limit.
   */
  constructor(
    private readonly max: number,
    private readonly keyOf: (req: FastifyRequest) => string | null,
    private readonly refusal: (max: number) => string,
  ) {}

  /** Counts the request in, or returns RATE_LIMITED (with `Retry-After: 1`) when its key is at the limit. */
  enter(req: FastifyRequest, reply: FastifyReply): Error | undefined {
    const id = this.keyOf(req);
    if (id === null) return undefined;
    const n = this.open.get(id) ?? 0;
    if (n >= this.max) {
      void reply.header('retry-after', '1');
      return fail('RATE_LIMITED', this.refusal(this.max));
    }
    this.open.set(id, n + 1);
    let left = false;
    // the socket's response closes once answered or abandoned: the one release, whatever happened
    reply.raw.once('close', () => {
      if (left) return;
      left = true;
      const now = (this.open.get(id) ?? 1) - 1;
      if (now <= 0) this.open.delete(id);
      else this.open.set(id, now);
    });
    return undefined;
  }
}
