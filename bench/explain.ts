/**
 * Explain latency (docs/explain.md): `freshet.explain` for each feed at 20,000 items (the catalog of
 * bench/preferences-pages.ts), on PostgreSQL + Redis and on the embedded stores.
 *
 * Per reader (no interests, no follows): one for-you refresh and two load_mores of 20 (60 impressions),
 * the first discover page, then, timed: for each feed, the explain of an item the reader was served (the
 * `seen` rule, with its filter's rate; the score from a second pass where the feed needs one) and of an
 * item it was not (eligible: the rank needs a read-only run of the feed — the for-you walk, discover's
 * first pages). Views of 200 items make the hot snapshot. Service level (`freshet.explain`), no HTTP.
 * Printed: p50/p99 per feed and kind.
 */
import type { Freshet } from '../src/compose/open.js';
import { fmtMs, printTable, summarize } from './stats.js';
import { corpus, NOW, open, vocabulary } from './preferences-pages.js';
import { printTitle, range, runIfMain, withCleanup } from './support.js';

/** Readers timed per store pair, after this many warm-up readers. */
const READERS = 30;
const WARMUP = 3;
const FEEDS = ['for-you', 'hot', 'discover', 'following'] as const;

async function measure(f: Freshet, name: string): Promise<void> {
  const items = corpus(vocabulary());
  for (let i = 0; i < items.length; i += 1000) await f.content.upsertItems(items.slice(i, i + 1000), NOW);
  const views = range(200, (i) => ({
    itemId: items[(i * 97) % items.length]!.id,
    visitorId: `v${i % 50}`,
    nowMs: NOW,
  }));
  await f.useCases.recordViews(views);
  const samples = new Map<string, number[]>();
  const time = async (key: string, fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    const list = samples.get(key) ?? [];
    list.push(performance.now() - t);
    samples.set(key, list);
  };
  for (let i = -WARMUP; i < READERS; i++) {
    const reader = `ex${i + WARMUP}`;
    const served = (await f.forYou.page(reader, 'refresh', 20, NOW)).items.map((x) => x.id);
    await f.forYou.page(reader, 'load_more', 20, NOW);
    await f.forYou.page(reader, 'load_more', 20, NOW);
    await f.discover.feed.page(reader, 20, undefined, NOW);
    const fresh = items[(i + WARMUP) * 13]!.id;
    for (const feed of FEEDS) {
      for (const [kind, itemId] of [
        ['served', served[0]!],
        ['not served', fresh],
      ] as const) {
        const call = () => f.explain({ feed, readerId: reader, itemId, nowMs: NOW });
        if (i < 0) await call();
        else await time(`${feed}|${kind}`, call);
      }
    }
  }
  const rows = [...samples].map(([key, list]) => {
    const [feed, kind] = key.split('|');
    const s = summarize(list);
    return [feed!, kind!, String(s.n), fmtMs(s.p50), fmtMs(s.p99)];
  });
  printTable(
    `${name}: explain at ${items.length.toLocaleString('en')} items (ms)`,
    ['feed', 'item', 'n', 'p50', 'p99'],
    rows,
  );
}

/** Runs both store pairs (`--stores=redis` or `--stores=embedded` for one). */
export async function run(): Promise<void> {
  printTitle('Explain latency per feed');
  const arg = process.argv.find((a) => a.startsWith('--stores='))?.slice('--stores='.length);
  for (const redis of [true, false]) {
    if (arg && arg !== (redis ? 'redis' : 'embedded')) continue;
    await withCleanup(async (cleanup) => {
      const stack = await open(cleanup, redis);
      await measure(stack.f, stack.name);
    });
  }
}

runIfMain(import.meta.url, run);
