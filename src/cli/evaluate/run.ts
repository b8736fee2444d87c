/**
 * `freshet evaluate <ratings file>`: offline evaluation of the engine on a `user,item,rating,time` file
 * (docs/evaluation.md). The run is a list of named steps over one state ({@link EvalState}) — load, split,
 * publish, replay signals, settle, read pages, score, baselines, report (steps.ts, engine-steps.ts) — each
 * timed and shown with a progress bar of its own; a new step (say, training a model after the replay) is one
 * more entry of {@link EVALUATION_STEPS}. The engine is driven through the library (`openFreshet`,
 * `freshet.useCases`), not HTTP, on scratch stores (src/cli/scratch.ts: an in-memory PGlite and in-process
 * stores on the embedded default; with `FRESHET_DATABASE_URL` / Redis, a schema and a key prefix of its own),
 * removed afterwards: a configured data folder is never touched.
 */
import { forJobs, type Config } from '../../compose/config.js';
import { openFreshet, type Freshet } from '../../compose/open.js';
import { ManualClock } from '../../kernel/clock.js';
import { cliLogger } from '../log.js';
import { openScratch, type Scratch } from '../scratch.js';
import type { Metrics } from './metrics.js';
import type { ItemInfo, Ratings } from './ratings.js';
import type { Split, SplitKind } from './split.js';

/** The signals a train rating is sent as: a view (through the hot ranking) and/or engagements. */
export type SignalKind = 'view' | 'like' | 'reply' | 'share';

/** Options of {@link runEvaluate} (the command's flags). */
export interface EvaluateOptions {
  ratingsPath: string;
  /** `item,title,tags` (MovieLens movies.csv): titles and tags published; absent: a neutral title. */
  itemsPath?: string;
  split: SplitKind;
  testFraction: number;
  seed: number;
  minRatings: number;
  /** The cut-off of every metric and the size of the page read from each feed (1..100). */
  k: number;
  signals: readonly SignalKind[];
  /** Where the JSON document goes (absent: none). */
  jsonPath?: string;
  /** Draw progress bars (default: when stderr is a terminal; otherwise a line every 5 s). */
  progress?: boolean;
  out?: (text: string) => void;
}

/** The methods measured: the two feeds and the three baselines. */
export const FEEDS = ['for-you', 'discover'] as const;
export const BASELINES = ['Random', 'MostPop', 'ItemKNN'] as const;
export type Method = (typeof FEEDS)[number] | (typeof BASELINES)[number];

/** The engine a run drives, on its scratch stores. */
export interface Engine {
  f: Freshet;
  clock: ManualClock;
}

/** What the steps read and fill, in step order. */
export interface EvalState {
  opts: EvaluateOptions;
  config: Config;
  out: (text: string) => void;
  /** Where the stores are (the report's first line). */
  where: string;
  ratings?: Ratings;
  /** The items file's titles and tags by item key (absent: no items file). */
  itemInfo?: Map<string, ItemInfo>;
  split?: Split;
  engine?: Engine;
  /** Virtual times (epoch ms): every item's publication, the first replayed signal, the page reads. */
  times: { publishedAt: number; replayFrom: number; spacingMs: number; readAt: number };
  /** What was sent and what the engine did with it. */
  counts: Record<string, unknown>;
  /** Per method, one list per evaluated reader (aligned with `split.evaluated`), item indices best first. */
  lists: Partial<Record<Method, number[][]>>;
  metrics: Partial<Record<Method, Metrics>>;
  /** Per feed, each page read's latency, ms. */
  pageMs: Partial<Record<Method, number[]>>;
  /** Each step's wall time, ms, in run order. */
  timings: { step: string; ms: number }[];
}

/** One step of a run; `engine` steps run on the opened engine (opened before the first of them). */
export interface EvalStep {
  name: string;
  engine?: boolean;
  run(s: EvalState): Promise<void>;
}

/** `value`, or a failure naming the step that should have set it. */
export function need<T>(value: T | undefined, what: string, step: string): T {
  if (value === undefined) throw new Error(`evaluate: ${what} is missing — the "${step}" step runs before this one`);
  return value;
}

/**
 * Runs `steps` in order on scratch stores, timing each, and closes and removes the stores at the end.
 * @returns the final state (lists, metrics, counts, timings).
 * @throws InputRefused / ImportReadError for an unreadable input (before any store is set up); store errors.
 */
export async function runEvaluate(
  config: Config,
  opts: EvaluateOptions,
  steps: readonly EvalStep[],
): Promise<EvalState> {
  const s: EvalState = {
    opts,
    config,
    out: opts.out ?? ((text: string) => process.stdout.write(`${text}\n`)),
    where: '',
    times: { publishedAt: 0, replayFrom: 0, spacingMs: 0, readAt: 0 },
    counts: {},
    lists: {},
    metrics: {},
    pageMs: {},
    timings: [],
  };
  let scratch: Scratch | undefined;
  try {
    for (const step of steps) {
      if (step.engine && !s.engine) {
        const t0 = performance.now();
        scratch = await openScratch(config, 'evaluate');
        s.where = scratch.where;
        s.out(`evaluate: ${scratch.where}`);
        s.engine = await openEngine(config, scratch, s.times.publishedAt);
        s.timings.push({ step: 'open stores', ms: performance.now() - t0 });
      }
      const t0 = performance.now();
      await step.run(s);
      s.timings.push({ step: step.name, ms: performance.now() - t0 });
    }
    return s;
  } finally {
    await s.engine?.f.close();
    if (scratch) {
      if (!s.engine) await scratch.sql.close();
      await scratch.remove();
    }
  }
}

/** The engine on the scratch stores, its clock at `nowMs`. */
async function openEngine(config: Config, scratch: Scratch, nowMs: number): Promise<Engine> {
  const clock = new ManualClock(nowMs);
  const f = await openFreshet(forJobs(scratch.config), {
    sql: scratch.sql,
    clock,
    defaultMetrics: false,
    recoverHot: false,
    log: cliLogger(config),
  });
  return { f, clock };
}
