/**
 * `freshet serve`: starts the HTTP service on the configured stores and shuts it down gracefully on
 * SIGINT/SIGTERM (stops accepting, finishes requests, closes every store). On the embedded default it
 * writes `<dataDir>/server.json` (`{pid, host, port}`) so `freshet import` can send items through the
 * running server instead of opening the single-process PGlite database a second time.
 */
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureSecrets, loadConfig, secretsPath } from '../config.js';
import { openFreshet } from '../container.js';
import { buildApp } from '../http/app.js';

/** Path of the embedded server's marker file. */
export function serverMarkerPath(dataDir: string): string {
  return join(dataDir, 'server.json');
}

/** Starts the service; resolves once it listens. */
export async function runServe(): Promise<void> {
  const { config, generatedAt } = ensureSecrets(loadConfig());
  const f = await openFreshet(config);
  const app = await buildApp(f);
  if (generatedAt) f.log.warn({ path: generatedAt }, 'no FRESHET_SERVICE_KEY/FRESHET_SECRET set: generated them into this file');
  else if (!process.env.FRESHET_SERVICE_KEY) f.log.info({ path: secretsPath(config) }, 'service key and secret read from the data folder');
  await app.listen({ port: config.port, host: config.host });
  f.startWorkers(); // hot rescoring, checkpoints, snapshot refresh; stopped when the app closes
  // On Redis, published items stay invisible until a worker fans them out: run one here unless the
  // operator runs `freshet worker fanout` apart (FRESHET_SERVE_FANOUT=off). Stopped by `f.close()`.
  if (!f.following.inlineWorker && config.following.serveFanout) f.following.startWorker();
  const embedded = !config.databaseUrl;
  const marker = serverMarkerPath(config.dataDir);
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (embedded) writeFileSync(marker, JSON.stringify({ pid: process.pid, host: config.host, port }) + '\n');
  f.log.info(
    { url: `http://${config.host}:${port}`, docs: '/docs', database: config.databaseUrl ? 'postgres' : 'pglite', hot: config.redisUrl || config.redisClusterNodes ? 'redis' : 'in-process' },
    'freshet listening',
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    f.log.info({ signal }, 'shutting down');
    try {
      await app.close();
    } finally {
      if (embedded) rmSync(marker, { force: true });
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
