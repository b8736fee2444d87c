/**
 * The in-process cost of a reader's preferences (docs/preferences.md) and the author-diversity figure on
 * the Hacker News sample. Prints figures; asserts nothing. `npx tsx bench/preferences.ts`.
 *
 * 1. The muted-word matcher: 200 phrases against 20,000 HN titles — µs per item (first fold and cached
 *    fold) against 0 phrases, and building the snapshot of a full document (200 words, 1,000 muted
 *    authors, 3 languages) from its cached JSON: p50/p99 per request, and the JSON's size (what Redis
 *    holds per reader in `ex:{u:<r>}`).
 * 2. Author diversity at wall time: a reader without interests is served the catalog newest first (every
 *    HN post is older than the decay window), so its for-you pages are consecutive runs of 20 posts. The
 *    share of pages with more than 2 items of one author, and with exactly 2, before and after
 *    `arrangePages` (cap 2 per 20), for the home-mixer discount (0.5 / 0.25) and the cap alone.
 *
 * Not measured here (see bench/README.md): the page latency of the engine at 20k items with and without
 * preferences.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { buildReaderExclusions, NO_DURABLE } from '../src/exclusions/domain.js';
import { MutedWordMatcher } from '../src/exclusions/muted-words.js';
import { parsePreferences } from '../src/exclusions/preferences.js';
import { arrangePages, authorCap } from '../src/kernel/author-diversity.js';
import type { Item } from '../src/kernel/items/item.js';
import { printEnvironment, printTitle, runIfMain } from './support.js';

const HN = new URL('../../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz', import.meta.url);

interface Row {
  id: string;
  title: string;
  author: string;
  created_at_unix: string;
}

function loadHn(): Item[] {
  const rows = parse(gunzipSync(readFileSync(HN)), { columns: true }) as Row[];
  return rows.map((r) => ({
    id: r.id,
    authorId: r.author,
    title: r.title,
    text: '',
    url: null,
    tags: [],
    publishedAt: Number(r.created_at_unix) * 1000,
    updateTime: 0,
    popularity: 0,
    lang: 'en',
  }));
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

function matcherFigures(items: Item[]): void {
  printTitle('Muted words: 200 phrases on 20,000 HN titles');
  const words = items.slice(0, 4000).flatMap((i) => i.title.split(/\s+/).filter((w) => w.length > 4));
  const phrases = [...new Set(words)].slice(0, 200).map((phrase, i) => ({ phrase, wholeWord: i % 10 !== 0 }));
  for (const [label, rules] of [
    ['0 phrases', []],
    ['200 phrases', phrases],
  ] as const) {
    const m = new MutedWordMatcher(rules);
    const copies = items.map((i) => Object.freeze({ ...i })); // frozen like the item cache's: folds cached
    let t = performance.now();
    let hits = 0;
    for (const i of copies) if (m.match(i) !== null) hits++;
    const first = ((performance.now() - t) * 1000) / copies.length;
    t = performance.now();
    for (const i of copies) m.match(i);
    const again = ((performance.now() - t) * 1000) / copies.length;
    console.log(`${label}: ${first.toFixed(2)} µs/item first fold, ${again.toFixed(2)} µs/item cached; ${hits} hidden`);
  }
}

function snapshotFigures(): void {
  printTitle('A full preferences document in the cached snapshot');
  const now = Date.UTC(2026, 0, 1);
  const prefs = parsePreferences(
    {
      muted_words: Array.from({ length: 200 }, (_, i) => ({
        phrase: `muted phrase ${i}`,
        expires_at: now / 1000 + 86400,
      })),
      muted_authors: Array.from({ length: 1000 }, (_, i) => ({ author_id: `author_${i}` })),
      languages: ['en', 'de', 'fr'],
    },
    now,
  );
  const json = JSON.stringify({ ...NO_DURABLE, preferences: prefs });
  const times: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t = performance.now();
    const durable = JSON.parse(json);
    buildReaderExclusions('r', [], durable, now, { weight: 0.3, durationMs: 1 });
    times.push((performance.now() - t) * 1000);
  }
  const base: number[] = [];
  const empty = JSON.stringify(NO_DURABLE);
  for (let i = 0; i < 2000; i++) {
    const t = performance.now();
    buildReaderExclusions('r', [], JSON.parse(empty), now, { weight: 0.3, durationMs: 1 });
    base.push((performance.now() - t) * 1000);
  }
  console.log(`cached JSON: ${json.length} bytes (no preferences: ${empty.length} bytes)`);
  console.log(
    `parse + build per request: p50 ${pct(times, 0.5).toFixed(0)} µs, p99 ${pct(times, 0.99).toFixed(0)} µs ` +
      `(no preferences: p50 ${pct(base, 0.5).toFixed(0)} µs, p99 ${pct(base, 0.99).toFixed(0)} µs)`,
  );
}

function diversityFigures(items: Item[]): void {
  printTitle('Author diversity on the HN sample at wall time (pages of 20, newest first)');
  const ranked = [...items].sort((a, b) => b.publishedAt - a.publishedAt || (a.id < b.id ? 1 : -1));
  const share = (list: Item[]) => {
    let over = 0;
    let two = 0;
    let pages = 0;
    for (let i = 0; i + 20 <= list.length; i += 20, pages++) {
      const counts = new Map<string, number>();
      for (const x of list.slice(i, i + 20)) counts.set(x.authorId, (counts.get(x.authorId) ?? 0) + 1);
      const top = Math.max(...counts.values());
      if (top > 2) over++;
      if (top === 2) two++;
    }
    return `${pages} pages: ${((100 * over) / pages).toFixed(2)} % with > 2 of one author, ${((100 * two) / pages).toFixed(1)} % with 2`;
  };
  console.log(`before: ${share(ranked)}`);
  const cap = authorCap(2, 20);
  for (const [label, d] of [
    ['home-mixer 0.5/0.25', { decay: 0.5, floor: 0.25 }],
    ['cap only (no discount)', { decay: 1, floor: 1 }],
  ] as const) {
    // the walk hands pages of N = 500 candidates to the arrangement (FRESHET_RECALL_LIMIT)
    const out: Item[] = [];
    for (let i = 0; i < ranked.length; i += 500)
      out.push(...arrangePages(ranked.slice(i, i + 500), 20, cap, false, d).ordered);
    const moved = out.reduce((s, x, i) => s + Math.abs(i - ranked.indexOf(x)), 0) / out.length;
    console.log(`after, ${label}: ${share(out)}; mean displacement ${moved.toFixed(1)} positions`);
  }
}

/** Runs the three parts. */
export async function run(): Promise<void> {
  await printEnvironment().catch(() => undefined);
  const items = loadHn();
  matcherFigures(items);
  snapshotFigures();
  diversityFigures(items);
}

runIfMain(import.meta.url, run);
