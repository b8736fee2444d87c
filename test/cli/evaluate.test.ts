/**
 * `freshet evaluate` end to end on a tiny ratings file generated here (30 readers, 40 items; not the real
 * data set, whose run is bench/evaluate.ts): it runs on scratch stores it removes, prints the table, and
 * writes JSON whose figures equal what the metric functions give for the lists it holds, whose held-out
 * items are the split's, and whose counts say every view counted. The replay reached the engine: no feed
 * lists an item its reader liked. A missing file is refused before any store is set up.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { InputRefused } from '../../src/cli/input-file.js';
import { scoreLists, type Metrics } from '../../src/cli/evaluate/metrics.js';
import { readRatings } from '../../src/cli/evaluate/ratings.js';
import { runEvaluate, type EvaluateOptions } from '../../src/cli/evaluate/run.js';
import { splitRatings } from '../../src/cli/evaluate/split.js';
import { EVALUATION_STEPS } from '../../src/cli/evaluate/steps.js';
import type { EvaluationDocument } from '../../src/cli/evaluate/report.js';
import { prng } from '../../src/kernel/prng.js';

const KEYS = { FRESHET_SERVICE_KEY: 'k'.repeat(20), FRESHET_SECRET: 's'.repeat(20) };
let dir: string;
let ratingsPath: string;
let itemsPath: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'freshet-evaluate-'));
  // two tastes: readers 1–15 rate mostly items 1–20, readers 16–30 mostly 21–40; reader 31 rates once
  const next = prng(11);
  const lines = ['userId,movieId,rating,timestamp'];
  for (let u = 1; u <= 30; u++) {
    const home = u <= 15 ? 0 : 20;
    for (let m = 1; m <= 40; m++) {
      const mine = m > home && m <= home + 20;
      if (next() < (mine ? 0.45 : 0.08))
        lines.push(`${u},${m},${1 + Math.floor(next() * 5)}.0,${1_000_000 + u * 100 + m}`);
    }
  }
  // a reader with one rating; a (reader, item) rated twice
  lines.push('31,7,4.0,1000001', '3,41,4.0,1500000', '3,41,5.0,2000000');
  ratingsPath = join(dir, 'ratings.csv.gz');
  writeFileSync(ratingsPath, gzipSync(`${lines.join('\n')}\n`));
  const items = ['movieId,title,genres'];
  for (let m = 1; m <= 42; m++) items.push(`${m},"Film ${m}, part ${m % 3}",${m <= 20 ? 'Drama|War' : 'Comedy'}`);
  itemsPath = join(dir, 'movies.csv');
  writeFileSync(itemsPath, `${items.join('\n')}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A run on the embedded default with a data folder of its own (which must stay untouched). */
async function evaluate(o: Partial<EvaluateOptions>) {
  const dataDir = join(dir, `data-${Math.random().toString(36).slice(2)}`);
  const config = loadConfig({ LOG_LEVEL: 'silent', FRESHET_DATA_DIR: dataDir, ...KEYS });
  const lines: string[] = [];
  const jsonPath = join(dir, `out-${Math.random().toString(36).slice(2)}.json`);
  const opts: EvaluateOptions = {
    ratingsPath,
    itemsPath,
    split: 'random',
    testFraction: 0.2,
    seed: 42,
    minRatings: 2,
    k: 5,
    signals: ['view', 'like'],
    jsonPath,
    progress: false,
    out: (text) => lines.push(...text.split('\n')),
    ...o,
  };
  const state = await runEvaluate(config, opts, EVALUATION_STEPS);
  expect(existsSync(dataDir)).toBe(false); // the configured data folder was never created
  const doc = JSON.parse(readFileSync(jsonPath, 'utf8')) as EvaluationDocument;
  return { lines, doc, state, opts };
}

describe('freshet evaluate on a tiny ratings file', () => {
  it('prints the table and writes JSON whose figures are the metric functions’ on its lists', async () => {
    const { lines, doc, opts } = await evaluate({});
    const scratch = lines[0]!.match(/data folder (\S+?)(,|$)/)?.[1];
    expect(scratch && !existsSync(scratch)).toBe(true); // the scratch folder is removed
    const table = lines.findIndex((l) => l.startsWith('method'));
    expect(lines[table]).toMatch(/P@5 +R@5 +nDCG@5 +HR@5 +coverage/);
    for (const m of ['Random', 'MostPop', 'ItemKNN', 'for-you', 'discover'])
      expect(lines.some((l) => l.startsWith(m) && /(\d\.\d{4} *){5}$/.test(l))).toBe(true);
    for (const r of ['for-you ÷ ItemKNN', 'for-you ÷ MostPop', 'discover ÷ ItemKNN', 'discover ÷ MostPop'])
      expect(lines.some((l) => l.startsWith(r))).toBe(true);
    expect(lines.some((l) => l.startsWith('phases (s): load'))).toBe(true);

    // the held-out items are the split's, for the readers it evaluates
    const ratings = await readRatings(ratingsPath);
    const split = splitRatings(ratings, { ...opts, kind: opts.split });
    expect(doc.readers.map((r) => r.reader)).toEqual(split.evaluated.map((u) => ratings.readers[u]));
    doc.readers.forEach((r, n) =>
      expect(r.heldOut).toEqual(split.readers[split.evaluated[n]!]!.test.map((j) => ratings.items[j])),
    );
    expect(doc.counts).toMatchObject({ readers: 31, evaluated: 30, trainOnly: 1, duplicateRatings: 1, catalog: 42 });

    // every figure is the metric functions' on the document's own lists
    const relevant = doc.readers.map((r) => new Set(r.heldOut));
    for (const [method, metrics] of Object.entries(doc.metrics)) {
      const lists = doc.readers.map((r) => r.lists[method as keyof typeof r.lists]!);
      expect(lists.every((l) => l.length <= 5)).toBe(true);
      expect(metrics, method).toEqual(scoreLists(lists, relevant, 5, 42));
    }
    const ratio = doc.ratios['for-you']!.ItemKNN!;
    const m = (x: string) => doc.metrics[x as 'ItemKNN'] as Metrics;
    expect(ratio.ndcg).toBeCloseTo(m('for-you').ndcg / m('ItemKNN').ndcg, 12);

    // the replay reached the engine: every view counted, every like new, no liked item served again
    const train = doc.counts.train as number;
    expect(doc.counts.views).toEqual({ sent: train, counted: train, notCounted: 0, verdicts: { counted: train } });
    expect(doc.counts.engagements).toEqual({ like: { sent: train, created: train } });
    doc.readers.forEach((r, n) => {
      const liked = new Set(split.readers[split.evaluated[n]!]!.train.map((j) => ratings.items[j]));
      for (const feed of ['for-you', 'discover'] as const)
        for (const item of r.lists[feed]!) expect(liked.has(item), `${r.reader} ${feed} ${item}`).toBe(false);
    });
    expect(Object.keys(doc.timingsMs)).toEqual([
      'load',
      'split',
      'open stores',
      'publish',
      'replay signals',
      'settle',
      'read pages',
      'score',
      'baselines',
    ]);
  });

  it('a missing file is one line naming it, before any store is set up', async () => {
    const lines: string[] = [];
    const config = loadConfig({ LOG_LEVEL: 'silent', FRESHET_DATA_DIR: join(dir, 'none'), ...KEYS });
    const run = runEvaluate(
      config,
      {
        ratingsPath: join(dir, 'nope.csv'),
        split: 'random',
        testFraction: 0.2,
        seed: 1,
        minRatings: 2,
        k: 10,
        signals: ['view'],
        progress: false,
        out: (t) => lines.push(t),
      },
      EVALUATION_STEPS,
    );
    await expect(run).rejects.toThrow(InputRefused);
    await expect(run).rejects.toThrow(/nope\.csv: no such file/);
    expect(lines).toEqual([]);
  });
});
