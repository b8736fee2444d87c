/**
 * The health answers of a process that serves no API — `freshet worker fanout --health-port N` — so a
 * container's health check, compose's `depends_on: service_healthy` and Kubernetes' probes treat it like
 * `freshet serve`: `GET /healthz` 200 while the process runs; `GET /readyz` 200 when every store answers
 * (`Freshet.ready()`, the server's own probe: PostgreSQL `SELECT 1`, a Redis write per master, each within
 * its deadline), else 503 / 50301 naming the stores. Same envelopes as the server's routes
 * (src/server/routes/ops.ts); anything else is 404 / 40401. Plain node:http: nothing of Fastify is loaded.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCodes } from '../kernel/errors.js';
import { ok } from '../kernel/http/schemas.js';

/** What the answers read: which stores answer, by name. */
export interface HealthSource {
  ready(): Promise<Record<string, boolean>>;
}

/** A listening health server: its URL, and how to close it. */
export interface HealthServer {
  url: string;
  close(): Promise<void>;
}

/** The status and envelope of `GET <path>`. */
async function answer(path: string, source: HealthSource): Promise<[number, unknown]> {
  if (path === '/healthz') return [200, ok({ status: 'ok' })];
  if (path !== '/readyz') {
    const { code, status } = ErrorCodes.NOT_FOUND;
    return [status, { code, msg: `no route ${path}: /healthz and /readyz only`, data: null }];
  }
  const stores = await source.ready().catch(() => ({}) as Record<string, boolean>);
  const down = Object.keys(stores).filter((name) => !stores[name]);
  if (down.length === 0 && Object.keys(stores).length > 0) return [200, ok({ status: 'ready', stores })];
  const { code, status } = ErrorCodes.STORE_UNAVAILABLE;
  const msg = `a store is unavailable: ${down.join(', ') || 'the probe failed'}`;
  return [status, { code, msg, data: { status: 'unavailable', stores } }];
}

/**
 * Listens on `host`:`port` (0: any free port) and answers `/healthz` and `/readyz` (see the module doc).
 * @throws Error when the port cannot be bound (in use, not allowed).
 */
export async function serveHealth(source: HealthSource, host: string, port: number): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    void answer(req.method === 'GET' || req.method === 'HEAD' ? path : '', source).then(([status, body]) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // a prober's kept-alive connection would hold the close
      }),
  };
}
