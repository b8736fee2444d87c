/**
 * Operations routes (no token, not under `/v1`): `/healthz` (the process answers), `/readyz` (every
 * store answers; 503 otherwise), `/metrics` (Prometheus text format).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { sendError } from '../http-errors.js';
import { HealthResult, NotReadyResult, ok, ReadyResult } from '../../kernel/http/schemas.js';

/** What the routes read. */
export interface OpsRouteDeps {
  /** Which stores answer, by name. */
  ready(): Promise<Record<string, boolean>>;
  registry: Registry;
}

/** Registers the operations routes. */
export const opsRoutes: FastifyPluginAsync<{ deps: OpsRouteDeps }> = async (app, { deps }) => {
  app.get(
    '/healthz',
    { schema: { tags: ['ops'], summary: 'The process answers', response: { 200: HealthResult } } },
    async () => ok({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['ops'],
        summary: 'Every store answers (503 / 50301 naming the stores otherwise)',
        response: { 200: ReadyResult, 503: NotReadyResult },
      },
    },
    async (_req, reply) => {
      const stores = await deps.ready();
      const down = Object.keys(stores).filter((name) => !stores[name]);
      if (down.length > 0)
        return sendError(reply, 'STORE_UNAVAILABLE', `a store is unavailable: ${down.join(', ')}`, {
          status: 'unavailable',
          stores,
        });
      return ok({ status: 'ready' as const, stores });
    },
  );
  app.get('/metrics', { schema: { tags: ['ops'], hide: true } }, async (_req, reply) => {
    void reply.header('content-type', deps.registry.contentType);
    return deps.registry.metrics();
  });
};
