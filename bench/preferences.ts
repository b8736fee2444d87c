/**
 * The in-process cost of a reader's preferences (docs/preferences.md) and the author-diversity figure on
 * the Hacker News sample. Prints figures; asserts nothing. `npx tsx bench/preferences.ts`.
 *
 * 1. The muted-word matcher: 200 phrases against 20,000 HN titles — µs per item (first fold, then with
 *    the fold cached and the matcher's verdicts forgotten) against 0 phrases; and a full document (200
 *    words, 1,000 muted authors, 3 languages) in the snapshot: the JSON's size (what Redis holds per reader
 *    in `ex:{u:<r>}`), parse + build per request (what every page paid before the Redis adapter kept the
 *    parsed document), build from the kept document (what a page pays now), and the heap one kept document
 *    with its compiled form takes (the process memo of redis-exclusion-cache.ts).
 * 2. Author diversity at wall time: a reader without interests is served the catalog newest first (every
 *    HN post is older than the decay window), so its for-you pages are consecutive runs of 20 posts. The
 *    share of pages with more than 2 items of one author, and with exactly 2, before and after
 *    `arrangePages` (cap 2 per 20), for the home-mixer discount (0.5 / 0.25) and the cap alone.
 *
 * 3. Page latency at 20,000 items with no preferences and with a full document, p50/p99 of both in the
 *    same run, on both store pairs (bench/preferences-pages.ts; `--pages-only` runs it alone, `--no-pages`
 *    skips it, `--stores=redis|embedded` picks one pair).
 */
import { readFileSync } from 'node:fs';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { buildReaderExclusions, NO_DURABLE } from '../src/exclusions/domain.js';
import { MutedWordMatcher, phraseWords } from '../src/exclusions/muted-words.js';
import { parsePreferences } from '../src/exclusions/preferences.js';
import { arrangePages, authorCap } from '../src/kernel/author-diversity.js';
import type { Item } from '../src/kernel/items/item.js';
import { runPages } from './preferences-pages.js';
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
    const copies = items.map((i) => Object.freeze({ ...i })); // frozen like the item cache's: folds cached
    const perItem = (m: MutedWordMatcher) => {
      const t = performance.now();
      let hits = 0;
      for (const i of copies) if (m.match(i) !== null) hits++;
      return { us: ((performance.now() - t) * 1000) / copies.length, hits };
    };
    const first = perItem(new MutedWordMatcher(rules)); // folds each item
    const m = new MutedWordMatcher(rules);
    const folded = perItem(m); // the folds cached, a new matcher (another reader's)
    const again = perItem(m); // the same matcher: its verdicts remembered
    const reference = wordByWord(rules, copies); // the previous matcher, on the same folds
    console.log(
      `${label}: ${first.us.toFixed(2)} µs/item first fold, ${folded.us.toFixed(2)} µs/item with the fold cached, ` +
        `${again.us.toFixed(3)} µs/item remembered; ${first.hits} hidden; the previous matcher (a hash lookup ` +
        `per word + one includes per substring phrase) ${reference.us.toFixed(2)} µs/item, ${reference.hits} hidden`,
    );
  }
}

/** A full collection (V8's `gc`, exposed at run time), so heap figures are what stays reachable. */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/**
 * The matcher this one replaced, for the same-run comparison: whole-word phrases found by a hash lookup of
 * each of the item's words (by first word), substring phrases by one `includes` each.
 */
function wordByWord(rules: readonly { phrase: string; wholeWord: boolean }[], items: readonly Item[]) {
  const byFirst = new Map<string, string[][]>();
  const subs: string[] = [];
  for (const r of rules) {
    const w = phraseWords(r.phrase);
    if (w.length === 0) continue;
    if (r.wholeWord) byFirst.set(w[0]!, [...(byFirst.get(w[0]!) ?? []), w]);
    else subs.push(w.join(' '));
  }
  const folded = items.map((i) => phraseWords(`${i.title}\n${i.text}\n${i.tags.join('\n')}`));
  const joined = folded.map((ws) => ` ${ws.join(' ')} `);
  const holds = (k: number) => {
    const ws = folded[k]!;
    for (let i = 0; i < ws.length; i++)
      for (const pw of byFirst.get(ws[i]!) ?? []) if (pw.every((w, j) => ws[i + j] === w)) return true;
    return subs.some((x) => joined[k]!.includes(x));
  };
  const t = performance.now();
  let hits = 0;
  for (let k = 0; k < items.length; k++) if (holds(k)) hits++;
  return { us: ((performance.now() - t) * 1000) / items.length, hits };
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
  const empty = JSON.stringify(NO_DURABLE);
  const loop = (fn: () => void) => {
    const times: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const t = performance.now();
      fn();
      times.push((performance.now() - t) * 1000);
    }
    return `p50 ${pct(times, 0.5).toFixed(0)} µs, p99 ${pct(times, 0.99).toFixed(0)} µs`;
  };
  const penalty = { weight: 0.3, durationMs: 1 };
  const parsed = loop(() => buildReaderExclusions('r', [], JSON.parse(json), now, penalty));
  const none = loop(() => buildReaderExclusions('r', [], JSON.parse(empty), now, penalty));
  const kept = JSON.parse(json);
  const fromKept = loop(() => buildReaderExclusions('r', [], kept, now, penalty));
  collect();
  const before = getHeapStatistics().used_heap_size;
  const copies = Array.from({ length: 200 }, () => {
    const d = JSON.parse(json);
    buildReaderExclusions('r', [], d, now, penalty); // with its compiled form, as a process keeps it
    return d;
  });
  collect();
  const perDoc = (getHeapStatistics().used_heap_size - before) / copies.length;
  console.log(`cached JSON: ${json.length} bytes (no preferences: ${empty.length} bytes)`);
  console.log(
    `parse + build per request (each page before the process kept it; now the first after a fill): ${parsed}`,
  );
  console.log(`build from the kept document (each page now): ${fromKept}; no preferences, parse + build: ${none}`);
  console.log(
    `heap per kept document with its compiled form: ${(perDoc / 1024).toFixed(0)} KB (${copies.length} kept)`,
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

/** Runs the parts (`--pages-only`: the page latencies alone; `--no-pages`: without them). */
export async function run(): Promise<void> {
  await printEnvironment().catch(() => undefined);
  if (!process.argv.includes('--pages-only')) {
    const items = loadHn();
    matcherFigures(items);
    snapshotFigures();
    diversityFigures(items);
  }
  if (!process.argv.includes('--no-pages')) await runPages();
}

runIfMain(import.meta.url, run);
