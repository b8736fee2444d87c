/**
 * The steps of `freshet evaluate` that need no engine — load, split, score, baselines, report — and the
 * run's step list, {@link EVALUATION_STEPS} (the engine's steps are in engine-steps.ts; the runner, run.ts,
 * opens the engine before the first of them). Adding a step is adding an entry, e.g. a model trained on the
 * replayed signals between `replay signals` and `settle`.
 */
import { writeFileSync } from 'node:fs';
import { MINUTE_MS } from '../../kernel/clock.js';
import { Progress } from '../progress.js';
import { itemKnnLists, itemNeighbours, mostPopLists, randomLists } from './baselines.js';
import { publish, readPages, replaySignals, settle } from './engine-steps.js';
import { scoreLists } from './metrics.js';
import { readItems, readRatings } from './ratings.js';
import { evaluationDocument, formatReport, ITEM_KNN_NEIGHBOURS } from './report.js';
import { BASELINES, FEEDS, need, type EvalState, type EvalStep, type Method } from './run.js';
import { splitRatings } from './split.js';

/** The virtual instant every item is published at: 2024-01-01 00:00 UTC (any fixed minute would do). */
export const PUBLISHED_AT = Date.UTC(2024, 0, 1);

/** Reads the ratings (and the items file), adds the items nobody rated to the catalog, fixes the virtual times. */
export const load: EvalStep = {
  name: 'load',
  async run(s) {
    const o = s.opts;
    const progress = new Progress({ label: 'evaluate: load', total: 0, tty: o.progress });
    try {
      s.ratings = await readRatings(o.ratingsPath, (read, total) => {
        progress.setTotal(total);
        progress.update(read);
      });
      if (o.itemsPath) s.itemInfo = await readItems(o.itemsPath);
    } finally {
      progress.stop();
    }
    const r = s.ratings;
    const rated = new Set(r.items);
    for (const key of s.itemInfo?.keys() ?? []) if (!rated.has(key)) r.items.push(key);
    s.counts.ratings = r.count;
    s.counts.duplicateRatings = r.duplicates;
    s.counts.readers = r.readers.length;
    s.counts.ratedItems = rated.size;
    s.counts.catalog = r.items.length;
    // views a visitor may make per minute before the hot ranking refuses them ("budget"): space them out
    const spacingMs = Math.ceil(MINUTE_MS / s.config.hot.visitorBudgetPerMinute);
    s.times = { publishedAt: PUBLISHED_AT, replayFrom: PUBLISHED_AT + MINUTE_MS, spacingMs, readAt: 0 };
  },
};

/** Splits every reader's ratings (split.ts). */
export const split: EvalStep = {
  name: 'split',
  async run(s) {
    const { split: kind, testFraction, seed, minRatings } = s.opts;
    const sp = splitRatings(need(s.ratings, 'the ratings', 'load'), { kind, testFraction, seed, minRatings });
    s.split = sp;
    s.counts.evaluated = sp.evaluated.length;
    s.counts.trainOnly = sp.readers.length - sp.evaluated.length;
    s.counts.train = sp.readers.reduce((n, x) => n + x.train.length, 0);
    s.counts.heldOut = sp.readers.reduce((n, x) => n + x.test.length, 0);
  },
};

/** The held-out sets of the evaluated readers, aligned with `split.evaluated`. */
function heldOut(s: EvalState): Set<number>[] {
  const sp = need(s.split, 'the split', 'split');
  return sp.evaluated.map((u) => new Set(sp.readers[u]!.test));
}

/** Scores the lists of the given methods (metrics.ts). */
function scoreMethods(s: EvalState, methods: readonly Method[]): void {
  const relevant = heldOut(s);
  const catalog = need(s.ratings, 'the ratings', 'load').items.length;
  for (const m of methods) {
    const lists = s.lists[m];
    if (lists) s.metrics[m] = scoreLists(lists, relevant, s.opts.k, catalog);
  }
}

/** Scores the feeds' pages against each reader's held-out items. */
export const score: EvalStep = {
  name: 'score',
  async run(s) {
    scoreMethods(s, FEEDS);
  },
};

/** Random, MostPop and ItemKNN on the same split (baselines.ts), scored like the feeds. */
export const baselines: EvalStep = {
  name: 'baselines',
  async run(s) {
    const r = need(s.ratings, 'the ratings', 'load');
    const sp = need(s.split, 'the split', 'split');
    const train = sp.readers.map((x) => x.train);
    const n = r.items.length;
    const { k, seed } = s.opts;
    s.lists.Random = randomLists(train, sp.evaluated, n, k, seed);
    s.lists.MostPop = mostPopLists(train, sp.evaluated, n, k);
    const progress = new Progress({
      label: 'evaluate: ItemKNN neighbours',
      total: n,
      counts: true,
      tty: s.opts.progress,
    });
    let model: ReturnType<typeof itemNeighbours>;
    try {
      model = itemNeighbours(train, n, ITEM_KNN_NEIGHBOURS, (done) => done % 500 === 0 && progress.update(done));
      progress.update(n);
    } finally {
      progress.stop();
    }
    s.lists.ItemKNN = itemKnnLists(train, sp.evaluated, model, k);
    scoreMethods(s, BASELINES);
  },
};

/** Prints the table and writes the JSON document. */
export const report: EvalStep = {
  name: 'report',
  async run(s) {
    const doc = evaluationDocument(s);
    s.out(formatReport(s, doc));
    if (s.opts.jsonPath) {
      writeFileSync(s.opts.jsonPath, `${JSON.stringify(doc)}\n`);
      s.out(`JSON written to ${s.opts.jsonPath}`);
    }
  },
};

/** The run, step by step (docs/evaluation.md "Protocol"). */
export const EVALUATION_STEPS: readonly EvalStep[] = [
  load,
  split,
  publish,
  replaySignals,
  settle,
  readPages,
  score,
  baselines,
  report,
];
