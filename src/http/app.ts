/**
 * The HTTP app (Fastify 5): a plugin-style builder that the server or a test starts. It wires
 * schemas → validation, the error envelope, OpenAPI at `/docs`, request metrics and the routes.
 * The server only calls `buildApp(freshet).listen()`; closing the app closes every store.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Freshet } from '../container.js';
import { installErrorHandling } from './errors.js';
import { feedRoutes } from './routes/feeds.js';
import { discoverRoutes } from './routes/discover.js';
import { exclusionRoutes } from './routes/exclusions.js';
import { followingRoutes } from './routes/following.js';
import { hotRoutes } from './routes/hot.js';
import { itemRoutes } from './routes/items.js';
import { opsRoutes } from './routes/ops.js';
import { userRoutes } from './routes/users.js';

/** Options of {@link buildApp}. */
export interface AppOptions {
  /** Log through the instance's pino logger (default true); false silences the app's own logging. */
  logger?: boolean;
  /** Close the Freshet stores when the app closes (default true). */
  closeStores?: boolean;
}

/** Builds (does not start) the app for a wired Freshet instance. */
export async function buildApp(f: Freshet, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    ...(opts.logger === false ? { logger: false } : { loggerInstance: f.log as FastifyBaseLogger }),
    bodyLimit: f.config.bodyLimitBytes,
    ajv: { customOptions: { allErrors: false, coerceTypes: false, removeAdditional: false } },
    // Per-request lines are off: latency goes to /metrics; errors are still logged by the handler.
    logController: new LogController({ disableRequestLogging: true }),
  });
  installErrorHandling(app);
  // JSON only: a text/plain body is a client mistake (MALFORMED_BODY), not a string to validate.
  app.removeContentTypeParser('text/plain');
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    f.metrics.httpDuration.observe({ method: req.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
  await app.register(swagger, {
    openapi: {
      info: { title: 'Freshet', version: '1', description: 'Feed engine API. Errors: see README "Error codes".' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await opsRoutes(app, f);
  await itemRoutes(app, f);
  await userRoutes(app, f);
  await feedRoutes(app, f);
  await discoverRoutes(app, f);
  await exclusionRoutes(app, f);
  await followingRoutes(app, f);
  await hotRoutes(app, f);
  if (opts.closeStores !== false) app.addHook('onClose', async () => f.close());
  return app;
}
