/**
 * The `freshet` command line: serve, token, migrate, import, simulate (and simulate live), replay views, hot rebuild,
 * evaluate.
 * Configuration comes from the environment (README "Configuration").
 *
 * A command loads the stores and capabilities it runs (PGlite, usearch, BullMQ, Fastify) only once it is
 * chosen (`await import(…)` in its action), so `freshet token` and `--help` start in ~0.3 s instead of
 * the ~1 s that loading every command's modules takes.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { ensureSecrets, loadConfig, readSecrets } from '../compose/config.js';
import { mintReaderToken } from '../kernel/http/tokens.js';
import { importers } from './import.js';
import { DEFAULT_START } from './for-you/simulate.js';
import { registerFollowingCommands } from './following/commands.js';
import { registerDiscoverCommands } from './discover/commands.js';
import { registerLiveCommand } from './live/commands.js';
import { registerEvaluateCommand } from './evaluate/commands.js';
import type { ReplayCliOptions } from './hot/commands.js';
import { intArg, limitArg, rangeArg, readerArg, ttlArg, MAX_TOKEN_TTL_S } from './args.js';
import { findServer, refuseBesideServer, serverKey, serviceKeySource } from './server.js';

/** The package's version (package.json: two folders up from src/cli/ and from dist/cli/). */
const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const program = new Command('freshet').description('Freshet feed engine').version(VERSION);

program
  .command('serve')
  .description('start the HTTP service')
  .option(
    '--workers <n>',
    'worker processes sharing the port (PostgreSQL + Redis only; default FRESHET_WORKERS, else the number of cores)',
    rangeArg(1, 256),
  )
  .action(async (opts: { workers?: number }) => (await import('./serve.js')).runServe({ workers: opts.workers }));

program
  .command('token')
  .description('print a signed reader token (last line of the output)')
  .argument('<reader>', 'reader id', readerArg)
  .option(
    '--ttl <seconds>',
    `lifetime in seconds, at most ${MAX_TOKEN_TTL_S} (365 days; default FRESHET_TOKEN_TTL_S)`,
    ttlArg,
  )
  .action(async (reader: string, opts: { ttl?: number }) => {
    const { config, generatedAt } = ensureSecrets(loadConfig());
    if (generatedAt) console.error(`generated a service key and secret into ${generatedAt}`);
    const ttl = opts.ttl ?? config.tokenTtlS;
    if (ttl > config.tokenMaxTtlS)
      throw new Error(
        `--ttl ${ttl} is over FRESHET_TOKEN_MAX_TTL_S (${config.tokenMaxTtlS}): the server would refuse it`,
      );
    console.log(await mintReaderToken(config.secret!, reader, ttl));
  });

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(async () => {
    const config = loadConfig();
    refuseBesideServer(
      config,
      'migrate',
      '`freshet serve` applies pending migrations itself when it starts, so restart the server instead (or stop it, then migrate)',
    );
    const { openSql } = await import('../compose/open.js');
    const sql = await openSql(config);
    await sql.close();
    console.log('migrations applied');
  });

program
  .command('import')
  .description('stream a data file into items (idempotent upsert by id); through the running server when there is one')
  .argument('<format>', `one of: ${Object.keys(importers).join(', ')}, graph (follow edges)`)
  .argument('<file>', 'path of the file')
  .option('--batch <n>', 'items per write (1..1000)', rangeArg(1, 1000))
  .option(
    '--url <url>',
    'send the items to this server (default: the server named by <dataDir>/server.json, else write directly)',
  )
  .option('--prefix <p>', 'graph: prepended to every node id', '')
  .action(async (format: string, file: string, opts: { batch?: number; url?: string; prefix?: string }) => {
    if (format === 'graph') {
      if (opts.url)
        throw new InvalidArgumentError(
          'import graph writes into the database directly (no HTTP route takes a graph in bulk): drop --url',
        );
      const { runGraphImport } = await import('./following/import-graph.js');
      return void (await runGraphImport(file, loadConfig(), { prefix: opts.prefix })); // follow edges (docs/following.md)
    }
    if (!importers[format])
      throw new InvalidArgumentError(
        `unknown format "${format}": use one of ${[...Object.keys(importers), 'graph'].join(', ')}`,
      );
    // secrets: generated only when the import opens the stores itself (import.ts), read when it goes through a server
    const { runImport } = await import('./import.js');
    await runImport(format, file, loadConfig(), { batchSize: opts.batch, url: opts.url });
  });

program
  .command('simulate')
  .summary('simulated traffic: MIND reader sessions on virtual time; `simulate live` for demo traffic at wall time')
  .description(
    "traffic against the running service. Without a subcommand: replay MIND reader sessions through the for-you feed on virtual time, then report. For demo traffic at wall time (the explorer's Hot, Health and Overview move), run `freshet simulate live`; `following` and `discover` replay their feeds",
  )
  .option('--url <url>', 'service base URL (default: the server named by <dataDir>/server.json, else http://HOST:PORT)')
  .option('--behaviors <file>', 'MIND behaviors.tsv.gz', '../shared/data/mind/MINDsmall_train_sample_behaviors.tsv.gz')
  .option('--sessions <n>', 'replay only the first n sessions', intArg)
  .option('--concurrency <n>', 'sessions in flight (one reader never overlaps itself)', intArg, 8)
  .option('--load-mores <n>', 'load_more requests after each refresh', intArg, 4)
  .option('--limit <n>', 'items per page (1..100)', limitArg, 20)
  .option('--start <iso>', 'virtual time of the first session day', DEFAULT_START)
  .action(
    async (opts: {
      url?: string;
      behaviors: string;
      sessions?: number;
      concurrency: number;
      loadMores: number;
      limit: number;
      start: string;
    }) => {
      const config = readSecrets(loadConfig()); // talks to a server: its key is read, never generated
      const server = findServer(config, opts.url);
      const { runSimulate } = await import('./for-you/simulate.js');
      const report = await runSimulate({
        url: server.url,
        foundBy: server.foundBy,
        serviceKey: serverKey(config),
        keySource: serviceKeySource(config),
        behaviorsPath: opts.behaviors,
        sessions: opts.sessions,
        concurrency: opts.concurrency,
        loadMores: opts.loadMores,
        limit: opts.limit,
        start: opts.start,
      });
      process.exitCode = report.exitCode;
    },
  );

program
  .command('replay')
  .description('replay logged traffic on virtual time')
  .command('views')
  .description(
    'stream a view log as views through the hot ranking (default: MIND impressions over imported HN posts), then report',
  )
  .option('--log <file>', 'view log, CSV or CSV.gz with a header', '../shared/data/mind/mind_impressions_long.csv.gz')
  .option(
    '--map <how>',
    'hn: map log items onto imported HN posts (README "Real data"); direct: the item column holds item ids',
    'hn',
  )
  .option(
    '--hn <file>',
    'the HN posts file the items were imported from (hn mapping)',
    '../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz',
  )
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
    await (await import('./hot/commands.js')).runReplayCommand(opts);
  });

program
  .command('hot')
  .description('hot ranking maintenance')
  .command('rebuild')
  .description('restore hot counters lost with Redis from the PostgreSQL checkpoints (adds to what was counted since)')
  .action(async () => (await import('./hot/commands.js')).runHotRebuild());

program
  .command('erase-user')
  .description(
    'erase a user from every store (what was removed is printed as JSON); through the running server when there is one',
  )
  .argument('<id>', 'user id', readerArg)
  .option('--items <choice>', 'delete: their items leave every feed; keep: their items stay', 'delete')
  .option('--url <url>', 'the server to send it to (default: the server named by <dataDir>/server.json, else directly)')
  .action(async (id: string, opts: { items: string; url?: string }) => {
    if (opts.items !== 'delete' && opts.items !== 'keep')
      throw new InvalidArgumentError(`--items must be delete or keep (got "${opts.items}")`);
    await (await import('./personal-data.js')).runEraseUser(id, opts.items, opts.url);
  });

program
  .command('export-user')
  .description('write everything Freshet holds about a user as one JSON document to standard output')
  .argument('<id>', 'user id', readerArg)
  .option('--url <url>', 'the server to ask (default: the server named by <dataDir>/server.json, else directly)')
  .action(async (id: string, opts: { url?: string }) =>
    (await import('./personal-data.js')).runExportUser(id, opts.url),
  );

registerFollowingCommands(program);
registerDiscoverCommands(program);
registerLiveCommand(program);
registerEvaluateCommand(program);

/**
 * Every error is one line `freshet: <what> — <what to do>` (docs/operations.md "Command line"): a usage
 * mistake (an unknown option or command, a missing or invalid argument) exits 2 and names the command's
 * help; a failure while running exits 1 with the command's own message.
 */
function oneLineErrors(cmd: Command, path: string): void {
  cmd.exitOverride().configureOutput({
    outputError: (text, write) => write(`freshet: ${text.replace(/^error: /, '').trim()} — see \`${path} --help\`\n`),
  });
  for (const sub of cmd.commands) oneLineErrors(sub, `${path} ${sub.name()}`);
}
oneLineErrors(program, 'freshet');

program.parseAsync().catch((err: unknown) => {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
      process.exit(0);
    // an InvalidArgumentError thrown by an action (commander printed only those it raised while parsing)
    if (err instanceof InvalidArgumentError) console.error(`freshet: ${err.message} — see \`freshet --help\``);
    process.exit(2);
  }
  console.error(`freshet: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
