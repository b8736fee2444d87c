/**
 * Operations routes (no token): `/healthz` (the process answers), `/readyz` (every store answers;
 * 503 otherwise), `/metrics` (Prometheus text format).
 */
import type { FastifyInstance } from 'fastify';
import type { Freshet } from '../../container.js';
import { ErrorCodes } from '../../domain/errors.js';
import { HealthResult } from '../schemas.js';

export async function opsRoutes(app: FastifyInstance, f: Freshet): Promise<void> {
  app.get('/healthz', { schema: { tags: ['ops'], response: { 200: HealthResult } } }, async () => ({ code: 0, msg: 'success', data: { status: 'ok' } }));
  app.get('/readyz', { schema: { tags: ['ops'] } }, async (_req, reply) => {
    const stores = await f.ready();
    const ok = Object.values(stores).every(Boolean);
    if (!ok) {
      return reply.status(503).send({ code: ErrorCodes.STORE_UNAVAILABLE.code, msg: 'a store is unavailable', data: { status: 'unavailable', stores } });
    }
    return { code: 0, msg: 'success', data: { status: 'ready', stores } };
  });
  app.get('/metrics', { schema: { tags: ['ops'], hide: true } }, async (_req, reply) => {
    void reply.header('content-type', f.metrics.registry.contentType);
    return f.metrics.registry.metrics();
  });
}
