/**
 * The following timeline's commands, registered on the `freshet` program by main.ts:
 * - `freshet worker fanout [--concurrency n] [--health-port p]`: runs fan-out workers (BullMQ) apart from the
 *   HTTP server until SIGINT/SIGTERM, answering `/healthz` and `/readyz` on the health port (../health.ts);
 * - `freshet simulate following [options]`: the real-data replay (simulate.ts), on scratch stores unless
 *   `--in-place`.
 * (`freshet import graph FILE` is dispatched by the `import` command to import-graph.ts.)
 */
import type { Command } from 'commander';
import { ensureSecrets, forJobs, loadConfig } from '../../compose/config.js';
import { intArg, rangeArg } from '../args.js';
import { serverLogger } from '../log.js';

/** The graph `simulate following` imports into its scratch stores by default (README of ../shared/data). */
export const DEFAULT_GRAPH = '../shared/data/graph/slashdot0902_follow_edges.tsv.gz';

/**
 * Runs fan-out workers until a signal stops them.
 * @throws Error without Redis (the embedded queue lives in `serve`) or without PostgreSQL (the embedded
 *   database cannot be shared with the server).
 */
async function runFanoutWorker(opts: { concurrency?: number; healthPort?: number }): Promise<void> {
  const { config } = ensureSecrets(loadConfig());
  if (!config.redisUrl && !config.redisClusterNodes) {
    throw new Error(
      'no FRESHET_REDIS_URL: the embedded default runs its fan-out inside `freshet serve` (in-process queue)',
    );
  }
  if (!config.databaseUrl) {
    throw new Error(
      'no FRESHET_DATABASE_URL: a fan-out worker apart from the server needs PostgreSQL — the embedded database (PGlite) is ' +
        'single-process and belongs to `freshet serve`, which runs the fan-out itself (FRESHET_SERVE_FANOUT=on)',
    );
  }
  const { openFreshet } = await import('../../compose/open.js'); // loaded once the command is chosen (main.ts)
  const f = await openFreshet(forJobs(config), { recoverHot: false, log: serverLogger(config) });
  const worker = f.following.startWorker(opts.concurrency ?? config.following.fanoutConcurrency);
  const { serveHealth } = await import('../health.js');
  const health = opts.healthPort === undefined ? null : await serveHealth(f, config.host, opts.healthPort);
  f.log.info(
    { concurrency: opts.concurrency ?? config.following.fanoutConcurrency, health: health?.url },
    'fan-out worker running',
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    f.log.info({ signal }, 'fan-out worker stopping (finishing running jobs)');
    await health?.close();
    await worker.stop();
    await f.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

/** Adds the commands to `program` (the `simulate` command must already exist). */
export function registerFollowingCommands(program: Command): void {
  program
    .command('worker')
    .description('background workers')
    .command('fanout')
    .description('run following-timeline fan-out workers (BullMQ on FRESHET_REDIS_URL) until SIGINT/SIGTERM')
    .option('--concurrency <n>', 'jobs at once (default FRESHET_FANOUT_CONCURRENCY)', intArg)
    .option(
      '--health-port <port>',
      'answer GET /healthz and /readyz on HOST:port (for health checks and probes)',
      rangeArg(0, 65535),
    )
    .action(runFanoutWorker);

  const simulate = program.commands.find((c) => c.name() === 'simulate');
  if (!simulate) throw new Error('register the simulate command first');
  simulate
    .command('following')
    .description(
      'publish HN posts as items of graph users on virtual time while readers page their following timelines; check them against SQL',
    )
    .option('--posts-file <file>', 'HN posts CSV(.gz)', '../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz')
    .option('--posts <n>', 'publish only the first n posts', intArg)
    .option('--readers <n>', 'sampled readers', intArg, 300)
    .option('--mean-gap-hours <n>', 'mean virtual hours between a reader’s sessions', intArg, 96)
    .option('--pages <n>', 'pages of 20 per session', intArg, 3)
    .option('--check <n>', 'readers whose whole timeline is compared with SQL', intArg, 50)
    .option('--celebrity-threshold <n>', 'followers above which an author is pulled', intArg, 1000)
    .option('--concurrency <n>', 'fan-out worker concurrency (Redis)', intArg)
    .option(
      '--graph <file>',
      'follow-edge list imported into the scratch stores first (with --in-place: imported there too when given)',
    )
    .option(
      '--in-place',
      'run on the configured stores (their imported graph) instead of scratch ones; it publishes, deletes, unfollows and blocks there',
    )
    .action(runSimulateCommand);
}

/** The options of `freshet simulate following`, as commander parses them. */
interface SimulateFollowingOptions {
  postsFile: string;
  posts?: number;
  readers: number;
  meanGapHours: number;
  pages: number;
  check: number;
  celebrityThreshold: number;
  concurrency?: number;
  graph?: string;
  inPlace?: boolean;
}

/** `freshet simulate following`: runs the simulation on the configured stores' settings; its report sets the exit code. */
async function runSimulateCommand(o: SimulateFollowingOptions): Promise<void> {
  const { config } = ensureSecrets(loadConfig());
  const { runSimulateFollowing } = await import('./simulate.js');
  const report = await runSimulateFollowing(config, {
    postsPath: o.postsFile,
    posts: o.posts,
    readers: o.readers,
    meanGapHours: o.meanGapHours,
    pages: o.pages,
    check: o.check,
    celebrityThreshold: o.celebrityThreshold,
    concurrency: o.concurrency,
    inPlace: o.inPlace,
    graphPath: o.graph ?? (o.inPlace ? undefined : DEFAULT_GRAPH),
  });
  process.exitCode = report.exitCode;
}
