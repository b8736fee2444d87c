/**
 * The HTTP app (Fastify 5): a plugin-style builder that the server or a test starts. It wires
 * schemas → validation, the error envelope, OpenAPI at `/docs`, request metrics and the routes.
 * Each capability's routes are an encapsulated plugin registered under `/v1`; a handler is one use-case
 * or service call. The server only calls `buildApp(freshet).listen()`; closing the app closes every store.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Freshet } from '../compose/open.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './errors.js';
import { authenticate, serviceKeyHook } from '../kernel/http/access.js';
import { checkIntervalMs, installEdgeLimits } from './limits.js';
import { installJsonBodyParser } from './json-body.js';
import { documentEdgeErrors } from '../kernel/http/schemas.js';
import { schemaController } from './validation.js';
import { forYouRoutes } from '../for-you/routes.js';
import { discoverRoutes } from '../discover/routes.js';
import { exclusionRoutes } from '../exclusions/routes.js';
import { followingRoutes } from '../following/routes.js';
import { hotRoutes } from '../hot/routes.js';
import { notificationRoutes } from '../notifications/routes.js';
import { markerRoutes } from './routes/markers.js';
import { explainRoutes } from './routes/explain.js';
import { personalDataRoutes } from './routes/personal-data.js';
import { itemRoutes } from './routes/items.js';
import { opsRoutes } from './routes/ops.js';
import { uiRoutes, type UiOptions } from './explorer.js';

/** Options of {@link buildApp}. */
export interface AppOptions {
  /** Log through the instance's pino logger (default true); false silences the app's own logging. */
  logger?: boolean;
  /** Close the Freshet stores when the app closes (default true). */
  closeStores?: boolean;
  /** The web explorer at `/ui` (docs/ui.md); its bundle folder. */
  ui?: UiOptions;
}

/** Builds (does not start) the app for a wired Freshet instance. */
export async function buildApp(f: Freshet, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = createFastify(f, opts);
  installErrorHandling(app);
  // JSON only: a text/plain body is a client mistake (MALFORMED_BODY), not a string to validate.
  installJsonBodyParser(app);
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    f.metrics.httpDuration.observe(
      { method: req.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    const reader = feedReader(req, reply.statusCode);
    if (reader) f.activeReaders.mark(reader, f.clock.now());
  });
  await registerDocsAndOps(app, f, opts);
  await app.register((v1) => registerV1(v1, f), { prefix: '/v1' });
  // open event streams never end by themselves: end them before the server waits for its connections
  app.addHook('preClose', async () => f.following.stream.close());
  if (opts.closeStores !== false) app.addHook('onClose', async () => f.close());
  return app;
}

/** The Fastify instance with the edge's options: logging, body limit, validation, early errors, timeouts. */
function createFastify(f: Freshet, opts: AppOptions): FastifyInstance {
  const { edge } = f.config;
  return Fastify({
    ...(opts.logger === false ? { logger: false } : { loggerInstance: f.log as FastifyBaseLogger }),
    bodyLimit: f.config.bodyLimitBytes,
    // query strings coerced by their schema, bodies/params/headers strict (src/server/validation.ts)
    schemaController: schemaController(),
    // failures before a route runs (bad URL, long path parameter, oversized headers) answer envelopes too
    frameworkErrors,
    clientErrorHandler,
    // Per-request lines are off: latency goes to /metrics; errors are still logged by the handler.
    logController: new LogController({ disableRequestLogging: true }),
    // slow clients: the request (headers and body) and its headers within a bound, else 408 (src/server/limits.ts)
    requestTimeout: edge.requestTimeoutMs,
    http: {
      requestTimeout: edge.requestTimeoutMs,
      headersTimeout: edge.headersTimeoutMs,
      connectionsCheckingInterval: checkIntervalMs(edge),
    },
  });
}

/** The OpenAPI document and its pages at `/docs`, the explorer at `/ui`, and the ops routes (health, metrics). */
async function registerDocsAndOps(app: FastifyInstance, f: Freshet, opts: AppOptions): Promise<void> {
  const { opsAccess } = f.config;
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Freshet',
        version: '1',
        description:
          'Feed engine API. Every answer is an envelope {code, msg, data}; the error codes are in docs/api.md "Error codes".',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  // the API document and its pages: open, or behind the service key (FRESHET_DOCS_ACCESS)
  const serviceOnly = serviceKeyHook(f.tokens);
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    ...(opsAccess.docs === 'service' ? { uiHooks: { onRequest: serviceOnly } } : {}),
  });
  await app.register(uiRoutes, opts.ui ?? {});
  await app.register(opsRoutes, {
    deps: {
      ready: () => f.ready(),
      registry: f.metrics.registry,
      metricsGuard: opsAccess.metrics === 'service' ? serviceOnly : null,
    },
  });
}

/**
 * The `/v1` API: authentication, the edge's limits and documented errors, then each capability's routes
 * with what they call (the use cases as their verbs).
 */
async function registerV1(v1: FastifyInstance, f: Freshet): Promise<void> {
  // authenticate before the body is parsed or validated; document what every route can answer
  v1.decorateRequest('principal', null);
  v1.addHook('onRequest', authenticate(f.tokens));
  // rate and concurrency limits on feed pages and views, keyed by the caller (after authentication)
  await installEdgeLimits(v1, f.config.edge, f.redis);
  v1.addHook('onRoute', documentEdgeErrors);
  const access = { tokens: f.tokens, clock: f.clock, futureSkewMs: f.config.futureSkewMs };
  const u = f.useCases;
  const { timeline, graph, stream } = f.following;
  const notifications = f.notifications.notifications;
  await v1.register(itemRoutes, { deps: { access, content: f.content, useCases: u } });
  await v1.register(forYouRoutes, { deps: { access, feed: f.forYou, content: f.content, verbs: u } });
  await v1.register(discoverRoutes, {
    deps: { access, feed: f.discover.feed, verbs: u, embeddingDim: f.config.discover.dim },
  });
  await v1.register(exclusionRoutes, { deps: { access, verbs: u, exclusions: f.exclusions } });
  await v1.register(followingRoutes, { deps: { access, timeline, graph, stream, verbs: u } });
  const hot = { ranking: f.hot, counters: f.hotCounters, content: f.content, settings: f.config.hot };
  await v1.register(hotRoutes, { deps: { access, ...hot, verbs: u, exclusions: f.exclusions } });
  await v1.register(notificationRoutes, { deps: { access, notifications } });
  await v1.register(personalDataRoutes, { deps: { access, verbs: u } });
  await v1.register(explainRoutes, { deps: { access, explain: f.explain } });
  await v1.register(markerRoutes, { deps: { access, notifications, timeline } });
}

/**
 * The reader a served feed request was for (the Overview's active readers, src/observe/active-readers.ts):
 * a `/v1/feeds/…` request answered below 400, by a reader token or by the service key naming the reader
 * in `X-Freshet-Reader` (checked by the route, as the status says); null for anything else — an explain
 * too, which reads no feed for the reader and writes nothing (an operator's "Why not?" is not the
 * reader's visit).
 */
function feedReader(req: FastifyRequest, status: number): string | null {
  const route = req.routeOptions.url ?? '';
  if (status >= 400 || !route.startsWith('/v1/feeds/') || route.endsWith('/explain') || !req.principal) return null;
  if (req.principal.kind === 'reader') return req.principal.readerId;
  const named = req.headers['x-freshet-reader'];
  return typeof named === 'string' ? named : null;
}
