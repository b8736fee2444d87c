/**
 * What `freshet evaluate` prints and writes (docs/evaluation.md "Output"): the table of methods × metrics
 * with each feed's ratio to ItemKNN and MostPop of the same run, preceded by what was measured and followed
 * by each phase's wall time; and the JSON document holding everything — the configuration, the counts, the
 * timings, every method's metrics and, per evaluated reader, its held-out items and every method's list
 * (item keys as the file writes them), so each figure can be computed again from the document.
 */
import type { Metrics } from './metrics.js';
import { BASELINES, FEEDS, type EvalState, type Method } from './run.js';

/** Percentiles of a feed's page latencies, ms. */
export interface Latency {
  p50: number;
  p99: number;
  max: number;
}

/** The JSON document (`--json`). */
export interface EvaluationDocument {
  config: Record<string, unknown>;
  counts: Record<string, unknown>;
  /** Each step's wall time, ms, in run order. */
  timingsMs: Record<string, number>;
  metrics: Partial<Record<Method, Metrics>>;
  /** Per feed, its metrics divided by ItemKNN's and MostPop's (null where the divisor is 0). */
  ratios: Record<string, Record<string, Record<keyof Metrics, number | null>>>;
  pageLatencyMs: Partial<Record<Method, Latency>>;
  readers: { reader: string; heldOut: string[]; lists: Partial<Record<Method, string[]>> }[];
}

const METRICS: (keyof Metrics)[] = ['precision', 'recall', 'ndcg', 'hitRate', 'coverage'];

/** Each metric of `a` divided by `b`'s (null where `b`'s is 0). */
export function ratio(a: Metrics, b: Metrics): Record<keyof Metrics, number | null> {
  return Object.fromEntries(METRICS.map((m) => [m, b[m] === 0 ? null : a[m] / b[m]])) as Record<
    keyof Metrics,
    number | null
  >;
}

/** The document of a finished run. */
export function evaluationDocument(s: EvalState): EvaluationDocument {
  const r = s.ratings!;
  const split = s.split!;
  const ratios: EvaluationDocument['ratios'] = {};
  for (const feed of FEEDS) {
    const m = s.metrics[feed];
    if (!m) continue;
    ratios[feed] = {};
    for (const base of ['ItemKNN', 'MostPop'] as const)
      if (s.metrics[base]) ratios[feed]![base] = ratio(m, s.metrics[base]!);
  }
  const methods = [...BASELINES, ...FEEDS].filter((m) => s.lists[m]);
  return {
    config: configOf(s),
    counts: s.counts,
    timingsMs: Object.fromEntries(s.timings.map((t) => [t.step, Math.round(t.ms)])),
    metrics: s.metrics,
    ratios,
    pageLatencyMs: Object.fromEntries(Object.entries(s.pageMs).map(([m, ms]) => [m, latency(ms)])),
    readers: split.evaluated.map((u, n) => ({
      reader: r.readers[u]!,
      heldOut: split.readers[u]!.test.map((j) => r.items[j]!),
      lists: Object.fromEntries(methods.map((m) => [m, s.lists[m]![n]!.map((j) => r.items[j]!)])),
    })),
  };
}

function configOf(s: EvalState): Record<string, unknown> {
  const o = s.opts;
  const c = s.config;
  return {
    ratings: o.ratingsPath,
    items: o.itemsPath ?? null,
    split: o.split,
    testFraction: o.testFraction,
    seed: o.seed,
    minRatings: o.minRatings,
    k: o.k,
    signals: o.signals,
    itemKnnNeighbours: ITEM_KNN_NEIGHBOURS,
    stores: s.where,
    times: { ...s.times, publishedAtIso: new Date(s.times.publishedAt).toISOString() },
    engine: {
      recallLimit: c.forYou.recall.limit,
      forYouPool: c.forYou.pool.size,
      forYouInterests: c.forYou.interests,
      recentViews: c.exclusions.recentViews,
      visitorBudgetPerMinute: c.hot.visitorBudgetPerMinute,
      seen: c.seenStrategy,
      discoverMinSimilarity: c.discover.minSimilarity,
    },
  };
}

/** Neighbours ItemKNN keeps per item (the issue's and implicit's usual 100). */
export const ITEM_KNN_NEIGHBOURS = 100;

/** p50 / p99 / max of `ms` (nearest rank), rounded to 0.01 ms. */
function latency(ms: readonly number[]): Latency {
  const sorted = ms.slice().sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  const round = (x: number) => Math.round(x * 100) / 100;
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted.at(-1) ?? 0) };
}

/** The printed report: what was measured, the table, the ratios, the phase timings. */
export function formatReport(s: EvalState, doc: EvaluationDocument): string {
  const k = s.opts.k;
  const heads = [`P@${k}`, `R@${k}`, `nDCG@${k}`, `HR@${k}`, 'coverage'];
  const row = (name: string, cells: string[]) => `${name.padEnd(20)}${cells.map((c) => c.padStart(10)).join('')}`;
  const lines = [...preamble(s), '', row('method', heads)];
  for (const m of [...BASELINES, ...FEEDS]) {
    const x = doc.metrics[m];
    if (x)
      lines.push(
        row(
          m,
          METRICS.map((name) => x[name].toFixed(4)),
        ),
      );
  }
  const ratioRows = Object.entries(doc.ratios).flatMap(([feed, byBase]) =>
    Object.entries(byBase).map(([base, q]) =>
      row(
        `${feed} ÷ ${base}`,
        METRICS.map((name) => (q[name] === null ? '–' : `${q[name]!.toFixed(3)}×`)),
      ),
    ),
  );
  if (ratioRows.length) lines.push('', row('ratio', heads), ...ratioRows);
  const total = s.timings.reduce((sum, t) => sum + t.ms, 0);
  const phases = s.timings.map((t) => `${t.step} ${(t.ms / 1000).toFixed(1)}`).join(' · ');
  lines.push('', `phases (s): ${phases} · total ${(total / 1000).toFixed(1)}`);
  return lines.join('\n');
}

/** What was measured: the data, the split, the signals and how many the engine counted. */
function preamble(s: EvalState): string[] {
  const r = s.ratings!;
  const split = s.split!;
  const o = s.opts;
  const n = (x: number) => x.toLocaleString('en-US');
  const train = split.readers.reduce((sum, x) => sum + x.train.length, 0);
  const test = split.readers.reduce((sum, x) => sum + x.test.length, 0);
  const views = s.counts.views as { sent: number; counted: number; notCounted: number } | undefined;
  const out = [
    `evaluate: ${n(r.count)} ratings by ${n(r.readers.length)} readers; catalog of ${n(r.items.length)} items${o.itemsPath ? ` (titles and tags from ${o.itemsPath})` : ' (neutral titles)'}`,
    `split ${o.split}${o.split === 'random' ? ` (seed ${o.seed})` : ''}, ${o.testFraction * 100} % held out: ${n(split.evaluated.length)} readers evaluated, ${n(split.readers.length - split.evaluated.length)} kept in train only (fewer than ${o.minRatings} ratings); ${n(train)} train ratings, ${n(test)} held out`,
    `signals: each train rating as ${o.signals.join(' + ')}, a reader's ${(s.times.spacingMs / 1000).toFixed(1)} s apart${views ? `; views: ${n(views.sent)} sent, ${n(views.counted)} counted, ${n(views.notCounted)} not counted` : ''}`,
    `pages: each evaluated reader's first page of ${o.k}: for-you (refresh), discover (first page)`,
  ];
  return out;
}
