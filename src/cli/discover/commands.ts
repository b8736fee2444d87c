/**
 * CLI commands of the discover feed (docs/discover.md):
 * - `freshet simulate discover [options]`: the real-data replay (simulate.ts);
 * - `freshet discover embed`: computes the built-in text embeddings of items written without one
 *   (other write paths, replays, a changed dimension) — the items API and `freshet import` embed on write.
 *   Opens the stores itself, so on the embedded default it refuses while a server holds the data folder.
 */
import type { Command } from 'commander';
import { ensureSecrets, forJobs, loadConfig } from '../../compose/config.js';
import { intArg, limitArg } from '../args.js';
import { cliLogger } from '../log.js';
import { Progress } from '../progress.js';
import { refuseBesideServer } from '../server.js';

/** `freshet discover embed`: prints how many items it embedded. */
async function runEmbed(): Promise<void> {
  const { config } = ensureSecrets(loadConfig());
  refuseBesideServer(
    config,
    'discover embed',
    'stop it first (items written through its API or `freshet import` are embedded as they are written)',
  );
  const { openFreshet } = await import('../../compose/open.js'); // loaded once the command is chosen (main.ts)
  const f = await openFreshet(forJobs(config), { recoverHot: false, log: cliLogger(config), warmDiscover: false }); // serves no feed
  const progress = new Progress({ label: 'discover embed', total: 0 });
  try {
    console.log(`embedded ${await f.discover.embeddings.embedMissing(f.clock.now())} items`);
  } finally {
    progress.stop();
    await f.close();
  }
}

/** Adds the commands to `program` (the `simulate` command must already exist). */
export function registerDiscoverCommands(program: Command): void {
  program
    .command('discover')
    .description('discover feed maintenance')
    .command('embed')
    .description('compute text embeddings for items that have none (or an outdated one)')
    .action(runEmbed);

  const simulate = program.commands.find((c) => c.name() === 'simulate');
  if (!simulate) throw new Error('register the simulate command first');
  // `simulate` has its own --sessions/--limit/--behaviors: without positional options it would take
  // them from `simulate discover --sessions 60` and leave the subcommand its defaults. Commander only
  // hands a subcommand the options after its name when every ancestor is positional (the program has
  // no options of its own, so this changes nothing else).
  program.enablePositionalOptions();
  simulate.enablePositionalOptions();
  simulate
    .command('discover')
    .description(
      'replay MIND and MovieLens reader sessions against the discover feed over HN posts; report duplicates, phase mix, exclusions, latency',
    )
    .option('--hn <file>', 'HN posts CSV(.gz)', '../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz')
    .option(
      '--behaviors <file>',
      'MIND behaviors.tsv.gz',
      '../shared/data/mind/MINDsmall_train_sample_behaviors.tsv.gz',
    )
    .option('--ratings <file>', 'MovieLens ratings.csv.gz', '../shared/data/movielens/ml-latest-small/ratings.csv.gz')
    .option('--sessions <n>', 'MIND sessions replayed', intArg, 1000)
    .option('--movielens-readers <n>', 'MovieLens readers', intArg, 100)
    .option('--items <n>', 'only the newest n HN posts (default: all)', intArg)
    .option('--pages <n>', 'pages per session', intArg, 3)
    .option('--limit <n>', 'items per page (1..100)', limitArg, 20)
    .action(
      async (o: {
        hn: string;
        behaviors: string;
        ratings: string;
        sessions: number;
        movielensReaders: number;
        items?: number;
        pages: number;
        limit: number;
      }) => {
        const { config } = ensureSecrets(loadConfig());
        const { runSimulateDiscover } = await import('./simulate.js');
        const report = await runSimulateDiscover(config, {
          hnPath: o.hn,
          behaviorsPath: o.behaviors,
          ratingsPath: o.ratings,
          sessions: o.sessions,
          movielensReaders: o.movielensReaders,
          items: o.items,
          pages: o.pages,
          limit: o.limit,
        });
        process.exitCode = report.exitCode;
      },
    );
}
