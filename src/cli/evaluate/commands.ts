/**
 * `freshet evaluate <ratings file> [options]` (docs/evaluation.md): its flags, checked before anything is
 * read, and the call of the run (run.ts), loaded only once the command is chosen (src/cli/main.ts).
 */
import { randomBytes } from 'node:crypto';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadConfig, readSecrets, type Config } from '../../compose/config.js';
import { limitArg, rangeArg } from '../args.js';
import type { SignalKind } from './run.js';

/** The signals each train rating can be sent as (run.ts `SignalKind`; a type import loads nothing). */
const SIGNALS: readonly SignalKind[] = ['view', 'like', 'reply', 'share'];

/** A fraction strictly between 0 and 1. */
function fractionArg(value: string): number {
  const n = Number(value);
  if (!/^\s*(0?\.\d+|0)\s*$/.test(value) || !(n > 0 && n < 1))
    throw new InvalidArgumentError('must be a number between 0 and 1 (exclusive), e.g. 0.2');
  return n;
}

/** A comma-separated list of signal kinds, each once. */
function signalsArg(value: string): SignalKind[] {
  const kinds = value.split(',').map((k) => k.trim());
  for (const k of kinds)
    if (!(SIGNALS as readonly string[]).includes(k))
      throw new InvalidArgumentError(
        `unknown signal "${k}": use one or more of ${SIGNALS.join(', ')}, comma-separated`,
      );
  if (new Set(kinds).size !== kinds.length) throw new InvalidArgumentError('each signal at most once');
  return kinds as SignalKind[];
}

/** The configuration with a service key and secret, generated in memory when none is set (nothing is written). */
function evaluationConfig(): Config {
  const config = readSecrets(loadConfig());
  return {
    ...config,
    serviceKey: config.serviceKey ?? `fsk_${randomBytes(24).toString('base64url')}`,
    secret: config.secret ?? randomBytes(32).toString('base64url'),
  };
}

/** Adds `freshet evaluate` to `program`. */
export function registerEvaluateCommand(program: Command): void {
  program
    .command('evaluate')
    .description(
      'offline evaluation on a user,item,rating,time file: per-reader split, replay, each feed’s first page scored (P, R, nDCG, HR@k, coverage) beside Random, MostPop and ItemKNN',
    )
    .argument('<ratings>', 'ratings CSV(.gz) with a header: user,item,rating,time (MovieLens ratings.csv)')
    .option('--items <file>', 'items CSV(.gz): item,title,tags (MovieLens movies.csv); titles and tags are published')
    .option('--split <how>', 'random (seeded) or time (each reader’s latest held out)', 'random')
    .option('--test-fraction <f>', 'share of each reader’s ratings held out', fractionArg, 0.2)
    .option('--seed <n>', 'seed of the random split and the Random baseline', rangeArg(0, 2 ** 32 - 1), 42)
    .option('--min-ratings <n>', 'readers with fewer ratings stay in train only', rangeArg(2, 1_000_000), 2)
    .option('--k <n>', 'cut-off of every metric and size of the page read (1..100)', limitArg, 10)
    .addOption(
      new Option('--signals <list>', `what each train rating is sent as: ${SIGNALS.join(', ')}, comma-separated`)
        .argParser(signalsArg)
        .default(['view', 'like'], 'view,like'),
    )
    .option('--json <file>', 'also write everything (config, counts, timings, metrics, lists) as JSON')
    .action(
      async (
        ratingsPath: string,
        o: {
          items?: string;
          split: string;
          testFraction: number;
          seed: number;
          minRatings: number;
          k: number;
          signals: SignalKind[];
          json?: string;
        },
      ) => {
        if (o.split !== 'random' && o.split !== 'time')
          throw new InvalidArgumentError(`--split must be random or time (got "${o.split}")`);
        const { runEvaluate } = await import('./run.js');
        const { EVALUATION_STEPS } = await import('./steps.js');
        await runEvaluate(
          evaluationConfig(),
          {
            ratingsPath,
            itemsPath: o.items,
            split: o.split,
            testFraction: o.testFraction,
            seed: o.seed,
            minRatings: o.minRatings,
            k: o.k,
            signals: o.signals,
            jsonPath: o.json,
          },
          EVALUATION_STEPS,
        );
      },
    );
}
