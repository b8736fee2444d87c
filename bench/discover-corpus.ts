/**
 * The real-text corpus of the discover benchmarks: the HN post titles and the MIND news (title +
 * abstract) in /work/shared/data, padded to the asked size with perturbed copies, and the three kinds
 * of phase-2 query the targets are stated for (issue 12):
 * - **diffuse readers**: the time-decayed mean of 20 random items (Freshet's reader embedding);
 * - **MIND-history readers**: the decayed mean of a real MIND user's click history (news ids of the
 *   sample that the corpus holds), newest click weighing most;
 * - **item queries**: one item's own embedding (more like this).
 *
 * Perturbed copy k of a real text: each word dropped with p = 0.15, a word of another real title
 * inserted with p = 0.1 per word, and a tag `v<k mod 97>` — near duplicates around every real item,
 * as a large site has (reposts, follow-ups, the same story from several sources). Seeded: every run
 * builds the same corpus and queries.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { parseHn } from '../src/cli/import-hn.js';
import { decayedMean } from '../src/discover/embedding.js';
import { prng } from '../src/kernel/prng.js';

export const DATA = process.env.FRESHET_DATA ?? '/work/shared/data';
const HN = `${DATA}/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz`;
const MIND_NEWS = `${DATA}/mind/MINDsmall_train_sample_news.tsv.gz`;
const MIND_BEHAVIORS = `${DATA}/mind/MINDsmall_train_sample_behaviors.tsv.gz`;

/** One text of the corpus. */
export interface CorpusText {
  id: string;
  title: string;
  text: string;
  tags: string[];
}

async function* lines(path: string): AsyncGenerator<string> {
  for await (const line of createInterface({ input: createReadStream(path).pipe(createGunzip()), crlfDelay: Infinity }))
    if (line) yield line;
}

/**
 * The real texts: MIND news first (`mind_<newsId>`: title, abstract as body, category tags), so every
 * size holds them (the MIND-history readers' clicks), then HN titles (`hn_<id>`).
 */
export async function realTexts(): Promise<CorpusText[]> {
  const out: CorpusText[] = [];
  for await (const line of lines(MIND_NEWS)) {
    const [id, category, sub, title, abstract] = line.split('\t');
    if (id && title)
      out.push({ id: `mind_${id}`, title, text: abstract ?? '', tags: [category ?? '', sub ?? ''].filter(Boolean) });
  }
  for await (const batch of parseHn(HN, { batchSize: 5000 }))
    for (const i of batch.items) out.push({ id: i.id, title: i.title, text: '', tags: [] });
  return out;
}

/** `n` texts: the real ones first, then perturbed copies `p<k>_<id>` of random real ones. */
export function padded(real: readonly CorpusText[], n: number, seed = 1): CorpusText[] {
  const out = real.slice(0, n);
  const rnd = prng(seed);
  for (let k = 0; out.length < n; k++) {
    const src = real[Math.floor(rnd() * real.length)]!;
    const donor = real[Math.floor(rnd() * real.length)]!.title.split(/\s+/);
    const words: string[] = [];
    for (const w of src.title.split(/\s+/)) {
      if (rnd() >= 0.15) words.push(w);
      if (rnd() < 0.1) words.push(donor[Math.floor(rnd() * donor.length)]!);
    }
    out.push({
      id: `p${k}_${src.id}`,
      title: words.join(' '),
      text: src.text && rnd() < 0.5 ? src.text : '',
      tags: [...src.tags, `v${k % 97}`],
    });
  }
  return out;
}

/** MIND users' click histories (news ids), in file order, of users with at least `min` clicks. */
export async function mindHistories(min = 5): Promise<string[][]> {
  const out: string[][] = [];
  for await (const line of lines(MIND_BEHAVIORS)) {
    const hist = (line.split('\t')[3] ?? '').split(' ').filter(Boolean);
    if (hist.length >= min) out.push(hist);
  }
  return out;
}

/** A phase-2 query of the benchmark. */
export interface BenchQuery {
  kind: 'diffuse reader' | 'MIND-history reader' | 'item query';
  vector: Float32Array;
}

const HOUR_MS = 3_600_000;

/**
 * `perKind` queries of each kind over `vectors` (aligned with `ids`; int8 codes): diffuse readers
 * (20 random items, one an hour), MIND-history readers (their clicks the corpus holds, at least 3,
 * one an hour, newest last) and item queries (a random item's vector). Decayed as the service does
 * (half-life `halfLifeMs`).
 */
export function benchQueries(
  ids: readonly string[],
  vectors: readonly Int8Array[],
  histories: readonly string[][],
  perKind: number,
  halfLifeMs: number,
  seed = 7,
): BenchQuery[] {
  const rnd = prng(seed);
  const dim = vectors[0]!.length;
  const now = 1_000 * HOUR_MS;
  const slot = new Map(ids.map((id, i) => [id, i]));
  const mean = (picked: number[]) =>
    decayedMean(
      picked.map((p, k) => ({ vector: vectors[p]!, atMs: now - (picked.length - k) * HOUR_MS, weight: 1 })),
      now,
      halfLifeMs,
      dim,
    )!;
  const out: BenchQuery[] = [];
  for (let q = 0; q < perKind; q++)
    out.push({
      kind: 'diffuse reader',
      vector: mean(Array.from({ length: 20 }, () => Math.floor(rnd() * ids.length))),
    });
  for (const h of histories) {
    if (out.length >= 2 * perKind) break;
    const picked = h.map((n) => slot.get(`mind_${n}`)).filter((s): s is number => s !== undefined);
    if (picked.length >= 3) out.push({ kind: 'MIND-history reader', vector: mean(picked.slice(-50)) });
  }
  for (let q = 0; q < perKind; q++)
    out.push({
      kind: 'item query',
      vector: Float32Array.from(vectors[Math.floor(rnd() * ids.length)]!, (x) => x / 127),
    });
  return out;
}
