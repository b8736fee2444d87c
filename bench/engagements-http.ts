/**
 * A MovieLens replay over HTTP (issue 32: "a 100k-rating replay takes under a minute"): every rating of
 * ml-latest-small (100,836 by 610 readers) sent to the real `freshet serve` (a child process, PostgreSQL +
 * Redis on loopback) through the typed client, as a view and as a like:
 * - views in batches of 1,000 (`POST /v1/views`, service key, `visitor_id` and `at` per view, each
 *   reader's views 1 s apart so none is over the per-visitor budget);
 * - likes in batches (`POST /v1/engagements` with an array: up to 1,000 of one reader's per request);
 * - the baseline of the same run: likes one at a time (`POST /v1/engagements` with one object) for the
 *   first {@link SINGLES} ratings, as other readers (so each is new, as in the batched run), one after the
 *   other — the rate a replay had before batches.
 * Requests of the batched runs go 4 at a time (one reader never twice at once). Prints the counts, the
 * time, the rate and the batched likes' speed against the single ones; never asserts. The data set is read
 * from ../shared/data (FRESHET_BENCH_MOVIELENS overrides the folder). `npx tsx bench/engagements-http.ts`.
 */
import { join } from 'node:path';
import { FreshetClient } from '../src/client/index.js';
import { readItems, readRatings, type ItemInfo, type Ratings } from '../src/cli/evaluate/ratings.js';
import { HOUR_MS, MINUTE_MS } from '../src/kernel/clock.js';
import { serveEnv, startServer } from './http.js';
import { fmtInt, printNotes, printTable } from './stats.js';
import {
  BENCH_REDIS_URL,
  dropPrefix,
  openRedis,
  printTitle,
  runIfMain,
  uniquePrefix,
  withCleanup,
  type Cleanup,
  BENCH_SERVICE_KEY,
} from './support.js';

const DATA =
  process.env.FRESHET_BENCH_MOVIELENS ?? join(import.meta.dirname, '../../shared/data/movielens/ml-latest-small');
const SERVICE_KEY = BENCH_SERVICE_KEY;
/** Likes sent one at a time for the baseline. */
const SINGLES = 2_000;
/** Requests in flight in the batched runs. */
const CONCURRENCY = 4;
const BATCH = 1000;

/** Runs `tasks` at most `n` at a time. */
async function inFlight(tasks: (() => Promise<unknown>)[], n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < tasks.length) await tasks[next++]!();
    }),
  );
}

/** Seconds since `t0` (performance.now). */
const since = (t0: number) => (performance.now() - t0) / 1000;

/** One row of the table: what, requests, sent, seconds, per second, note. */
function row(what: string, requests: number, sent: number, s: number, note = ''): string[] {
  return [what, fmtInt(requests), fmtInt(sent), s.toFixed(1), fmtInt(sent / s), note];
}

/** `freshet serve` on a schema, key prefix and data folder of its own (removed by `cleanup`); its client. */
async function startOwnServer(cleanup: Cleanup): Promise<FreshetClient> {
  const prefix = uniquePrefix('eng');
  const redis = openRedis();
  cleanup.add(async () => {
    await dropPrefix(redis, prefix);
    redis.disconnect();
  });
  const env = await serveEnv(cleanup, 'engagements', {
    FRESHET_REDIS_URL: BENCH_REDIS_URL,
    FRESHET_KEY_PREFIX: prefix,
  });
  const server = await startServer(env, 1);
  cleanup.add(() => server.stop());
  return new FreshetClient({ baseUrl: server.url, serviceKey: SERVICE_KEY, retry: { attempts: 1 } });
}

/** Publishes every rated movie at `publishedAt` (batches of 1,000). */
async function publish(client: FreshetClient, r: Ratings, info: Map<string, ItemInfo>, publishedAt: number) {
  const t0 = performance.now();
  for (let i = 0; i < r.items.length; i += BATCH)
    await client.items.publish(
      r.items.slice(i, i + BATCH).map((key) => ({
        id: `i_${key}`,
        author_id: `a_${key}`,
        title: info.get(key)?.title ?? `Item ${key}`,
        tags: info.get(key)?.tags ?? [],
        published_at: publishedAt / 1000,
      })),
    );
  return row('publish (batches of 1,000)', Math.ceil(r.items.length / BATCH), r.items.length, since(t0));
}

/** Every rating as a view, the i-th of every reader at `from + i s`, batches of 1,000 in time order. */
async function views(client: FreshetClient, r: Ratings, from: number): Promise<{ row: string[]; s: number }> {
  const all: { item_id: string; visitor_id: string; at: number }[] = [];
  const longest = r.byReader.reduce((m, x) => Math.max(m, x.items.length), 0);
  for (let i = 0; i < longest; i++)
    r.byReader.forEach((x, u) => {
      if (i < x.items.length)
        all.push({ item_id: `i_${r.items[x.items[i]!]}`, visitor_id: `u_${r.readers[u]}`, at: from + i * 1000 });
    });
  let counted = 0;
  const t0 = performance.now();
  // one batch at a time: no visitor's later views land before its earlier ones
  for (let b = 0; b < all.length; b += BATCH)
    counted += (await client.views.recordBatch(all.slice(b, b + BATCH))).summary.counted;
  const s = since(t0);
  return {
    row: row('views (batches of 1,000)', Math.ceil(all.length / BATCH), all.length, s, `${fmtInt(counted)} counted`),
    s,
  };
}

/** Every rating as a like, in batches of up to 1,000 of one reader's, {@link CONCURRENCY} requests in flight. */
async function likes(client: FreshetClient, r: Ratings, now: number): Promise<{ row: string[]; s: number }> {
  const calls: (() => Promise<unknown>)[] = [];
  let created = 0;
  r.byReader.forEach((x, u) => {
    for (let i = 0; i < x.items.length; i += BATCH) {
      const batch = x.items.slice(i, i + BATCH).map((j) => ({ item_id: `i_${r.items[j]}`, kind: 'like' as const }));
      calls.push(async () => {
        // awaited first: `created += await …` would read `created` before the await and lose updates
        const out = await client.engagements.recordBatch(batch, { reader: `u_${r.readers[u]}`, now });
        created += out.summary.created;
      });
    }
  });
  const t0 = performance.now();
  await inFlight(calls, CONCURRENCY);
  const s = since(t0);
  return { row: row('likes (batches ≤ 1,000 of a reader)', calls.length, r.count, s, `${fmtInt(created)} new`), s };
}

/** The baseline: the first {@link SINGLES} ratings as likes one at a time, as other readers (each new). */
async function likesOneByOne(client: FreshetClient, r: Ratings, now: number): Promise<{ row: string[]; rate: number }> {
  const singles: { reader: string; item: string }[] = [];
  r.byReader.forEach((x, u) =>
    x.items.forEach(
      (j) => singles.length < SINGLES && singles.push({ reader: `s_${r.readers[u]}`, item: `i_${r.items[j]}` }),
    ),
  );
  const t0 = performance.now();
  for (const one of singles)
    await client.engagements.record({ item_id: one.item, kind: 'like' }, { reader: one.reader, now });
  const s = since(t0);
  const rate = singles.length / s;
  return {
    row: row(
      'likes one at a time',
      singles.length,
      singles.length,
      s,
      `${fmtInt(r.count / rate)} s for all ${fmtInt(r.count)}`,
    ),
    rate,
  };
}

export async function run(): Promise<void> {
  await withCleanup(async (cleanup) => {
    printTitle(
      'MovieLens ml-latest-small replayed over HTTP: views and likes in batches, likes one at a time (same run)',
    );
    const ratings = await readRatings(join(DATA, 'ratings.csv.gz'));
    const info = await readItems(join(DATA, 'movies.csv.gz'));
    const client = await startOwnServer(cleanup);
    const now = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
    const publishedAt = now - 2 * HOUR_MS;
    const published = await publish(client, ratings, info, publishedAt);
    const v = await views(client, ratings, publishedAt + MINUTE_MS);
    const l = await likes(client, ratings, now);
    const one = await likesOneByOne(client, ratings, now);
    printTable(
      'one run; PostgreSQL + Redis on loopback, `freshet serve` (1 process) in a child process',
      ['what', 'requests', 'sent', 's', 'per second', 'note'],
      [published, v.row, l.row, one.row],
    );
    printNotes(
      `the whole replay — ${fmtInt(ratings.count)} ratings as views and likes, in batches — took ${(v.s + l.s).toFixed(1)} s (views ${v.s.toFixed(1)} s + likes ${l.s.toFixed(1)} s)`,
      `batched likes ran at ${(ratings.count / l.s / one.rate).toFixed(1)}× the rate of likes one at a time in the same run`,
      'the client, the server, Redis and PostgreSQL share the machine',
    );
  });
}

runIfMain(import.meta.url, run);
