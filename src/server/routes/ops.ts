/**
 * Operations routes (not under `/v1`): `/healthz` (the process answers), `/readyz` (every store answers;
 * 503 otherwise) — no token — and `/metrics` (Prometheus text format): open, or the service key only
 * (`FRESHET_METRICS_ACCESS`; by default open on a loopback `HOST`, the service key on any other).
 */
import type { FastifyPluginAsync, onRequestAsyncHookHandler } from 'fastify';
import type { Registry } from 'prom-client';
import { sendError } from '../errors.js';
import { HealthResult, NotReadyResult, ok, ReadyResult } from '../../kernel/http/schemas.js';

/** What the routes read. */
export interface OpsRouteDeps {
  /** Which stores answer, by name. */
  ready(): Promise<Record<string, boolean>>;
  registry: Registry;
  /** The hook guarding `/metrics` (the service key: `FRESHET_METRICS_ACCESS`); null = open. */
  metricsGuard: onRequestAsyncHookHandler | null;
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
  const guard = deps.metricsGuard ? { onRequest: deps.metricsGuard } : {};
  app.get('/metrics', { schema: { tags: ['ops'], hide: true }, ...guard }, async (_req, reply) => {
    void reply.header('content-type', deps.registry.contentType);
    return deps.registry.metrics();
  });
};
