/**
 * The `freshet` command line: serve, token, migrate, import, simulate, replay views, hot rebuild.
 * Configuration comes from the environment (README "Configuration").
 */
import { Command, InvalidArgumentError } from 'commander';
import { ensureSecrets, loadConfig } from '../config.js';
import { openSql } from '../container.js';
import { isId } from '../domain/ids.js';
import { mintReaderToken } from '../services/tokens.js';
import { runServe } from './serve.js';
import { importers, runImport } from './import/index.js';
import { DEFAULT_START, runSimulate } from './simulate.js';
import { registerFollowingCommands } from './following-commands.js';
import { registerDiscoverCommands } from './discover-commands.js';
import { runGraphImport } from './import/graph.js';
import { runHotRebuild, runReplayCommand, type ReplayCliOptions } from './replay/command.js';

function readerArg(value: string): string {
  if (!isId(value)) throw new InvalidArgumentError('reader id must match [A-Za-z0-9_.-]{1,64}');
  return value;
}

function intArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

const program = new Command('freshet').description('Freshet feed engine').showHelpAfterError();

program.command('serve').description('start the HTTP service').action(runServe);

program
  .command('token')
  .description('print a signed reader token (last line of the output)')
  .argument('<reader>', 'reader id', readerArg)
  .option('--ttl <seconds>', 'lifetime in seconds (default FRESHET_TOKEN_TTL_S)', intArg)
  .action(async (reader: string, opts: { ttl?: number }) => {
    const { config, generatedAt } = ensureSecrets(loadConfig());
    if (generatedAt) console.error(`generated a service key and secret into ${generatedAt}`);
    console.log(await mintReaderToken(config.secret!, reader, opts.ttl ?? config.tokenTtlS));
  });

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(async () => {
    const sql = await openSql(loadConfig());
    await sql.close();
    console.log('migrations applied');
  });

program
  .command('import')
  .description('stream a data file into items (idempotent upsert by id)')
  .argument('<format>', `one of: ${Object.keys(importers).join(', ')}, graph (follow edges)`)
  .argument('<file>', 'path of the file')
  .option('--batch <n>', 'items per write (≤ 1000)', intArg)
  .option('--prefix <p>', 'graph: prepended to every node id', '')
  .action(async (format: string, file: string, opts: { batch?: number; prefix?: string }) => {
    if (format === 'graph') return void (await runGraphImport(file, loadConfig(), { prefix: opts.prefix })); // follow edges (note 4)
    if (!importers[format]) throw new InvalidArgumentError(`unknown format "${format}" (known: ${Object.keys(importers).join(', ')})`);
    await runImport(format, file, ensureSecrets(loadConfig()).config, { batchSize: opts.batch });
  });

program
  .command('simulate')
  .description('replay MIND reader sessions against the running service on virtual time, then report')
  .option('--url <url>', 'service base URL (default http://HOST:PORT)')
  .option('--behaviors <file>', 'MIND behaviors.tsv.gz', '../shared/data/mind/MINDsmall_train_sample_behaviors.tsv.gz')
  .option('--sessions <n>', 'replay only the first n sessions', intArg)
  .option('--concurrency <n>', 'sessions in flight (one reader never overlaps itself)', intArg, 8)
  .option('--load-mores <n>', 'load_more requests after each refresh', intArg, 4)
  .option('--limit <n>', 'items per page', intArg, 20)
  .option('--start <iso>', 'virtual time of the first session day', DEFAULT_START)
  .action(async (opts: { url?: string; behaviors: string; sessions?: number; concurrency: number; loadMores: number; limit: number; start: string }) => {
    const { config } = ensureSecrets(loadConfig());
    const report = await runSimulate({
      url: opts.url ?? `http://${config.host}:${config.port}`,
      serviceKey: config.serviceKey!,
      behaviorsPath: opts.behaviors,
      sessions: opts.sessions,
      concurrency: opts.concurrency,
      loadMores: opts.loadMores,
      limit: opts.limit,
      start: opts.start,
    });
    process.exitCode = report.exitCode;
  });

program
  .command('replay')
  .description('replay logged traffic on virtual time')
  .command('views')
  .description('stream a view log as views through the hot ranking (default: MIND impressions over imported HN posts), then report')
  .option('--log <file>', 'view log, CSV or CSV.gz with a header', '../shared/data/mind/mind_impressions_long.csv.gz')
  .option('--map <how>', 'hn: map log items onto imported HN posts (README "Real data"); direct: the item column holds item ids', 'hn')
  .option('--hn <file>', 'the HN posts file the items were imported from (hn mapping)', '../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz')
  .option('--item-col <name>', 'column of the viewed item', 'news_id')
  .option('--visitor-col <name>', 'column of the visitor', 'user_id')
  .option('--time-col <name>', 'column of the time (ISO 8601, epoch s or ms)', 'time')
  .option('--filter <col=value>', 'keep only rows where a column has a value (e.g. clicked=1)')
  .option('--rows <n>', 'replay only the first n usable rows', intArg)
  .option('--start <iso>', 'virtual day the first view is moved to (hn default 2016-09-20T00:00:00Z)')
  .option('--rescore-min <n>', 'virtual minutes between rescoring passes', intArg, 10)
  .option('--report-hours <n>', 'virtual hours between top-10 snapshots in the report', intArg, 24)
  .option('--top <n>', 'items per snapshot', intArg, 10)
  .option('--concurrency <n>', 'views in flight', intArg, 64)
  .option('--visitor-budget <n>', 'override FRESHET_HOT_VISITOR_BUDGET_PER_MIN for this replay', intArg)
  .action(async (opts: ReplayCliOptions) => {
    await runReplayCommand(opts);
  });

program
  .command('hot')
  .description('hot ranking maintenance')
  .command('rebuild')
  .description('restore hot counters lost with Redis from the PostgreSQL checkpoints (adds to what was counted since)')
  .action(runHotRebuild);

registerFollowingCommands(program);
registerDiscoverCommands(program);

program.parseAsync().catch((err: unknown) => {
  console.error(`freshet: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
