/**
 * `freshet serve`: starts the HTTP service on the configured stores and shuts it down gracefully on
 * SIGINT/SIGTERM (close-with-grace: stops accepting, finishes requests, closes every store, exits 1 when
 * closing fails or takes longer than `FRESHET_SHUTDOWN_GRACE_S`, 10 s by default). On the embedded
 * default it holds the data folder's lock while the database is open (src/compose/data-dir-lock.ts: a
 * second server or a writing CLI command on the same folder fails at once) and writes `<dataDir>/server.json` (`{pid, host, port}`) so CLI commands find it
 * (src/cli/server.ts) and send their work through its API. Logs go to stdout, pretty on a terminal
 * and JSON otherwise (`LOG_FORMAT`, src/cli/log.ts).
 *
 * Workers: on PostgreSQL + Redis, `--workers N` (or `FRESHET_WORKERS`; default one per core) starts N
 * processes sharing the port under a primary (src/cli/cluster.ts); each worker runs what follows.
 * The embedded default (PGlite, in-process stores) holds its data in one process, so it always serves
 * from one and says so when more were asked.
 */
import { writeFileSync, rmSync } from 'node:fs';
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { ensureSecrets, loadConfig, secretsPath } from '../compose/config.js';
import { openFreshet, type Freshet } from '../compose/open.js';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../server/app.js';
import closeWithGrace from 'close-with-grace';
import { serverLogger } from './log.js';
import { serverMarkerPath } from './server.js';
import { runPrimary, workerNumber } from './cluster.js';
import type { Config } from '../compose/config.js';

export { serverMarkerPath } from './server.js';

/** Options of {@link runServe}. */
export interface ServeOptions {
  /** Worker processes (`--workers`); default `FRESHET_WORKERS`, whose 0 means one per core. */
  workers?: number;
}

/** How many processes serve: 1 on the embedded default (it holds its data in process), else the asked number. */
export function servingWorkers(
  config: Pick<Config, 'databaseUrl' | 'redisUrl' | 'redisClusterNodes' | 'workers'>,
  asked?: number,
  cores = availableParallelism(),
): { workers: number; refused: boolean } {
  const wanted = asked ?? (config.workers > 0 ? config.workers : cores);
  const shared = Boolean(config.databaseUrl) && Boolean(config.redisUrl || config.redisClusterNodes?.length);
  if (shared) return { workers: wanted, refused: false };
  return { workers: 1, refused: wanted > 1 && (asked !== undefined || config.workers > 1) };
}

/** Starts the service (the primary of N workers, or one process); resolves once it listens. */
export async function runServe(opts: ServeOptions = {}): Promise<void> {
  const { config, generatedAt } = ensureSecrets(loadConfig());
  if (cluster.isPrimary) {
    const { workers, refused } = servingWorkers(config, opts.workers);
    if (workers > 1) {
      // the primary only forks and watches; secrets are settled here so every worker reads the same file
      if (generatedAt)
        serverLogger(config).warn(
          { path: generatedAt },
          'no FRESHET_SERVICE_KEY/FRESHET_SECRET set: generated them into this file',
        );
      return runPrimary(workers, config.host, serverLogger(config), config.shutdownGraceMs);
    }
    if (refused) {
      const why = config.databaseUrl
        ? 'in-process hot, seen and feed stores (no FRESHET_REDIS_URL)'
        : 'the embedded database (PGlite, no FRESHET_DATABASE_URL)';
      serverLogger(config).warn(
        { asked: opts.workers ?? config.workers },
        `serving from one process: ${why} cannot be shared between processes; --workers needs PostgreSQL and Redis`,
      );
    }
  }
  await serveOne(config, generatedAt);
}

/**
 * One serving process: the whole app, its background work, graceful shutdown. The signal handlers are
 * in place before the stores open: a SIGTERM (or SIGINT) that arrives while the process is still
 * starting — a deploy that changes its mind, the primary stopping workers that are not up yet — lets the
 * start finish, skips listening and closes what was opened, with exit 0; it is not a kill by signal.
 */
async function serveOne(config: Config, generatedAt: string | undefined): Promise<void> {
  const worker = workerNumber();
  const log = worker === null ? serverLogger(config) : serverLogger(config).child({ worker });
  const embedded = !config.databaseUrl;
  const marker = serverMarkerPath(config.dataDir);
  let opened: { f: Freshet; app?: FastifyInstance } | undefined;
  let stopping = false;
  // A worker stops on the primary's SIGTERM only: a Ctrl-C (SIGINT) or a hang-up (SIGHUP) reaches the
  // whole process group, and the primary turns them into one SIGTERM each (or a rolling restart).
  if (worker !== null) for (const s of ['SIGINT', 'SIGHUP'] as const) process.on(s, () => undefined);
  // close-with-grace: on a signal (or an uncaught error) close the app — stop accepting, finish requests,
  // stop the workers, checkpoint, close every store — within the grace (FRESHET_SHUTDOWN_GRACE_S), else
  // exit 1; a close that throws exits 1 too.
  closeWithGrace(
    {
      delay: config.shutdownGraceMs,
      ...(worker !== null ? { skip: ['SIGINT', 'SIGHUP'] } : {}),
      logger: { error: (m: unknown) => log.error(m) },
    },
    async ({ signal, err }) => {
      stopping = true;
      if (err) log.error({ err }, 'shutting down after an uncaught error');
      else log.info({ signal }, 'shutting down');
      await starting.catch(() => undefined); // a start in progress finishes first (within the grace)
      try {
        if (opened?.app) await opened.app.close();
        else await opened?.f.close();
      } finally {
        if (embedded) rmSync(marker, { force: true });
      }
    },
  );
  const starting = (async () => {
    const f = await openFreshet(config, { log });
    opened = { f };
    const app = await buildApp(f);
    opened.app = app;
    if (stopping) return;
    if (worker !== null) f.metrics.registry.setDefaultLabels({ worker: String(worker) });
    if (generatedAt && worker === null)
      f.log.warn({ path: generatedAt }, 'no FRESHET_SERVICE_KEY/FRESHET_SECRET set: generated them into this file');
    else if (!process.env.FRESHET_SERVICE_KEY && worker === null)
      f.log.info({ path: secretsPath(config) }, 'service key and secret read from the data folder');
    await app.listen({ port: config.port, host: config.host });
    startBackgroundWork(f, config, worker);
    announceListening(f, app, config, embedded ? marker : null);
  })();
  await starting;
}

/**
 * Says where the server listens (its URL, explorer, API document, where the service key is, which
 * stores), after writing the embedded server's marker file (`marker`; null on PostgreSQL) with its port.
 */
function announceListening(f: Freshet, app: FastifyInstance, config: Config, marker: string | null): void {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (marker) writeFileSync(marker, `${JSON.stringify({ pid: process.pid, host: config.host, port })}\n`);
  const url = `http://${config.host}:${port}`;
  f.log.info(
    {
      url,
      explorer: `${url}/ui/`,
      docs: `${url}/docs`,
      serviceKey: process.env.FRESHET_SERVICE_KEY ? 'FRESHET_SERVICE_KEY' : secretsPath(config),
      database: config.databaseUrl ? 'postgres' : 'pglite',
      hot: config.redisUrl || config.redisClusterNodes ? 'redis' : 'in-process',
    },
    'freshet listening',
  );
}

/**
 * Hot rescoring and archiving, snapshot refresh; stopped when the app closes. Under --workers, the
 * store-wide jobs run in worker 1 only (src/cli/cluster.ts), the per-process ones everywhere. On
 * Redis, published items stay invisible until a worker fans them out: one runs here unless the operator
 * runs `freshet worker fanout` apart (FRESHET_SERVE_FANOUT=off); stopped by `f.close()`.
 */
function startBackgroundWork(f: Freshet, config: Config, worker: number | null): void {
  const storeWide = worker === null || worker === 1;
  f.startWorkers({ maintenance: storeWide });
  if (!f.following.inlineWorker && config.following.serveFanout && storeWide) f.following.startWorker();
}
