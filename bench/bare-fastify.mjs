/**
 * The floor of bench/request-cost.ts: a bare Fastify 5 server with one `GET /healthz` route (no logger,
 * no hooks, no plugins), on 127.0.0.1 and a free port. Prints one JSON line `{"url": …}` once listening and
 * stops on SIGTERM. `node bench/bare-fastify.mjs`.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url })}\n`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
