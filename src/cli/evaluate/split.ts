/**
 * The per-reader train/test split of `freshet evaluate` (docs/evaluation.md "Split"), pure and seeded.
 *
 * Each reader with at least `minRatings` ratings gives `round(n × testFraction)` of them (at least 1, at
 * most n − 1) to its test set:
 * - `random`: chosen by a seeded shuffle (Fisher–Yates over the kernel's mulberry32, seeded per reader by
 *   FNV-1a of `seed:readerKey`), so a reader's split depends only on its own ratings, the seed and its key —
 *   not on the file's order nor on the other readers (RecBole's per-user "RS" ratio split, Recommenders'
 *   `python_stratified_split`);
 * - `time`: its latest ones by time, ties by item key (a per-user temporal "leave-last-out" split).
 * Readers with fewer ratings keep them all in train and are not evaluated. Both sets list item indices in
 * time order (ties by item key): the order the replay sends the train ratings in.
 */
import { fnv1a } from '../../kernel/hash.js';
import { prng } from '../../kernel/prng.js';
import type { Ratings } from './ratings.js';

/** How the held-out ratings are chosen. */
export type SplitKind = 'random' | 'time';

/** Options of {@link splitRatings}. */
export interface SplitOptions {
  kind: SplitKind;
  /** Share of each evaluated reader's ratings held out, in (0, 1). */
  testFraction: number;
  seed: number;
  /** Readers with fewer ratings are not evaluated (at least 2: one to train on, one to test). */
  minRatings: number;
}

/** One reader's split. */
export interface ReaderSplit {
  /** Item indices to replay, oldest first. */
  train: number[];
  /** Held-out item indices (empty: the reader is not evaluated), oldest first. */
  test: number[];
}

/** The split of every reader, by reader index; `evaluated` lists the readers with a test set, ascending. */
export interface Split {
  readers: ReaderSplit[];
  evaluated: number[];
}

/**
 * Splits every reader of `r` (see the module doc).
 * @throws RangeError when `testFraction` is not in (0, 1) or `minRatings` is under 2.
 */
export function splitRatings(r: Ratings, o: SplitOptions): Split {
  if (!(o.testFraction > 0 && o.testFraction < 1)) throw new RangeError('testFraction must be in (0, 1)');
  if (!Number.isInteger(o.minRatings) || o.minRatings < 2) throw new RangeError('minRatings must be an integer ≥ 2');
  const readers: ReaderSplit[] = [];
  const evaluated: number[] = [];
  r.byReader.forEach((mine, u) => {
    const order = mine.items.map((_, j) => j);
    const key = (j: number) => r.items[mine.items[j]!]!;
    order.sort((a, b) => mine.times[a]! - mine.times[b]! || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    const n = order.length;
    if (n < o.minRatings) {
      readers.push({ train: order.map((j) => mine.items[j]!), test: [] });
      return;
    }
    const nTest = Math.min(n - 1, Math.max(1, Math.round(n * o.testFraction)));
    const held = new Set(
      o.kind === 'time' ? order.slice(n - nTest) : shuffled(order, o.seed, r.readers[u]!).slice(0, nTest),
    );
    readers.push({
      train: order.filter((j) => !held.has(j)).map((j) => mine.items[j]!),
      test: order.filter((j) => held.has(j)).map((j) => mine.items[j]!),
    });
    evaluated.push(u);
  });
  return { readers, evaluated };
}

/** A copy of `xs` shuffled by Fisher–Yates (Knuth's Algorithm P) with a generator seeded by `seed` and `readerKey`. */
function shuffled(xs: readonly number[], seed: number, readerKey: string): number[] {
  const out = xs.slice();
  const next = prng(fnv1a(`${seed}:${readerKey}`));
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
