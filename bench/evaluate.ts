/**
 * `freshet evaluate` on the real data set (docs/evaluation.md): MovieLens ml-latest-small (100,836 ratings
 * by 610 readers of 9,742 movies, titles and genres published), each reader's ratings split 80/20 at
 * random (seed 42), then again by time — the figures docs/evaluation.md records. The run is the command's
 * own (src/cli/evaluate/): its table, with each feed's ratio to ItemKNN and MostPop of the same run, and
 * each phase's wall time. On the embedded default (in-memory PGlite and in-process stores) unless
 * `--stores=postgres` (PostgreSQL + Redis on loopback, a schema and key prefix of its own, removed after).
 * `npx tsx bench/evaluate.ts [--split=random,time] [--stores=embedded|postgres]`; FRESHET_BENCH_MOVIELENS
 * overrides the data folder. Prints figures; never asserts.
 */
import { join } from 'node:path';
import { loadConfig } from '../src/compose/config.js';
import { runEvaluate } from '../src/cli/evaluate/run.js';
import type { SplitKind } from '../src/cli/evaluate/split.js';
import { EVALUATION_STEPS } from '../src/cli/evaluate/steps.js';
import { BENCH_DATABASE_URL, BENCH_REDIS_URL, printTitle, runIfMain } from './support.js';

const DATA =
  process.env.FRESHET_BENCH_MOVIELENS ?? join(import.meta.dirname, '../../shared/data/movielens/ml-latest-small');

/** The value of `--name=value` on the command line, or `fallback`. */
function arg(name: string, fallback: string): string {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
}

export async function run(splits: SplitKind[] = arg('split', 'random,time').split(',') as SplitKind[]): Promise<void> {
  const stores = arg('stores', 'embedded');
  const env: Record<string, string> = {
    LOG_LEVEL: 'warn',
    FRESHET_SERVICE_KEY: 'bench-service-key-0123456789',
    FRESHET_SECRET: 'bench-secret-0123456789abcdef',
    // the configured data folder is never touched: the run makes its own scratch stores
    FRESHET_DATA_DIR: join(import.meta.dirname, 'out', 'evaluate-unused'),
    ...(stores === 'postgres' ? { FRESHET_DATABASE_URL: BENCH_DATABASE_URL, FRESHET_REDIS_URL: BENCH_REDIS_URL } : {}),
  };
  for (const split of splits) {
    printTitle(
      `freshet evaluate on ml-latest-small: ${split} split, 20 % held out, seed 42, k = 10 (${stores} stores)`,
    );
    await runEvaluate(
      loadConfig(env),
      {
        ratingsPath: join(DATA, 'ratings.csv.gz'),
        itemsPath: join(DATA, 'movies.csv.gz'),
        split,
        testFraction: 0.2,
        seed: 42,
        minRatings: 2,
        k: 10,
        signals: ['view', 'like'],
        jsonPath: process.env.FRESHET_BENCH_EVALUATE_JSON
          ? `${process.env.FRESHET_BENCH_EVALUATE_JSON}.${split}.json`
          : undefined,
      },
      EVALUATION_STEPS,
    );
  }
}

runIfMain(import.meta.url, () => run());
