/**
 * `freshet simulate live`: live demo traffic at wall time against the running server (run.ts), so the
 * explorer's Hot, Health and Overview pages move right after `freshet import hn`. Finds the server and
 * reads its service key like every command that talks to one (src/cli/server.ts) — never generates
 * one. Ctrl-C (or SIGTERM) stops it after the requests in flight and prints the summary; a second Ctrl-C
 * quits at once.
 */
import type { Command } from 'commander';
import { loadConfig, readSecrets } from '../../compose/config.js';
import { minutesArg, rangeArg } from '../args.js';
import { checkServer, findServer, serverKey, serviceKeySource } from '../server.js';

/** The HN posts file read by default (the one `freshet import hn` is shown with). */
export const DEFAULT_HN = '../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz';
/** Longest `--duration`: a day, in minutes. */
export const MAX_LIVE_MINUTES = 1440;

interface LiveCliOptions {
  url?: string;
  hn: string;
  rate: number;
  duration: number;
  posts: number;
  seed: number;
}

async function runLiveCommand(o: LiveCliOptions): Promise<void> {
  const config = readSecrets(loadConfig()); // talks to a server: its key is read, never generated
  const server = findServer(config, o.url);
  const key = serverKey(config);
  const keySource = serviceKeySource(config);
  const { readLivePosts } = await import('./posts.js');
  const posts = await readLivePosts(o.hn, o.posts); // a bad file fails before anything is sent
  await checkServer(server, key, keySource);
  const { runLive } = await import('./run.js');
  const stop = new AbortController();
  const onSignal = () => {
    if (stop.signal.aborted) process.exit(130);
    process.stderr.write('\nsimulate live: stopping after the requests in flight (Ctrl-C again to quit at once)\n');
    stop.abort();
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  try {
    const { failure } = await runLive({
      url: server.url,
      foundBy: server.foundBy,
      serviceKey: key,
      keySource,
      posts,
      rate: o.rate,
      durationMs: o.duration * 60_000,
      seed: o.seed,
      signal: stop.signal,
    });
    if (failure) throw new Error(failure);
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

/** Adds `simulate live` under the `simulate` command (which must exist, with positional options). */
export function registerLiveCommand(program: Command): void {
  const simulate = program.commands.find((c) => c.name() === 'simulate');
  if (!simulate) throw new Error('register the simulate command first');
  program.enablePositionalOptions();
  simulate.enablePositionalOptions();
  simulate
    .command('live')
    .description(
      "demo traffic at wall time: the HN sample's points and comments as views and replies, rate-limited, against the running server (Hot, Health and Overview move)",
    )
    .option(
      '--url <url>',
      'server base URL (default: the server named by <dataDir>/server.json, else http://HOST:PORT)',
    )
    .option('--hn <file>', 'HN posts CSV(.gz)', DEFAULT_HN)
    .option('--rate <events/s>', 'events per second, views + replies + feed pages (1..1000)', rangeArg(1, 1000), 20)
    .option(
      '--duration <minutes>',
      `how long to run, in minutes (over 0, at most ${MAX_LIVE_MINUTES}; 0.5 = 30 s)`,
      minutesArg(MAX_LIVE_MINUTES),
      10,
    )
    .option(
      '--posts <n>',
      'the n posts with the most points are republished and replayed (1..1000)',
      rangeArg(1, 1000),
      30,
    )
    .option(
      '--seed <n>',
      'seed of the choices (visitors, order); the same seed replays the same events',
      rangeArg(0, 2 ** 31),
      1,
    )
    .action(runLiveCommand);
}
