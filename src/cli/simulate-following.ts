/**
 * `freshet simulate following`: replays the HN posts as items of authors mapped onto an imported
 * follow graph, in time order on virtual time, while sampled readers page their following timelines,
 * then checks sampled timelines against SQL exactly. Runs in process on the configured stores
 * (PGlite + in-process by default; PostgreSQL / Redis + BullMQ when configured).
 *
 * Mapping (deterministic): HN authors ranked by number of posts (desc, then name) are mapped onto graph
 * users ranked by followers (desc, then id): the i-th most prolific author publishes as the i-th most
 * followed user (wrapping around if the graph has fewer users). So heavy-degree nodes publish, and those
 * above the celebrity threshold (`--celebrity-threshold`, default 1,000: the Slashdot and Twitter graphs
 * top out at 1.6k–3.5k followers, below the 10,000 production default) are pulled, not pushed. Item ids
 * are `hnf_<hn id>`, so the for-you import of the same file (`hn_<id>`) is untouched.
 *
 * Readers: `--readers` users that follow someone (by md5 of the id). Each reads at a first time spread
 * over the first `--mean-gap-hours`, then after exponential gaps of that mean (so some go cold, beyond
 * the 7-day window, and get their inbox rebuilt); a session reads up to `--pages` pages of 20. At its 3rd
 * session a reader unfollows its newest followee, at its 5th it blocks its newest followee; every 200th
 * post is deleted 6 virtual hours later.
 *
 * Check: each of the first `--check` readers pages through its whole timeline (pages of 50) after the
 * last event, and the tids must equal, in order, an independent SQL statement of what it should see
 * (`EXPECTED_SQL`: live published items of the authors it follows and does not block, newest tid first)
 * — not the service's own SQL fallback.
 */
import { SECOND_MS, HOUR_MS, ManualClock } from '../domain/clock.js';
import type { ItemInput } from '../ports/content-store.js';
import type { Config } from '../config.js';
import { openFreshet, openSql, type Freshet } from '../container.js';
import type { Sql } from '../adapters/postgres/sql.js';
import { MemoryTimelineStore } from '../adapters/memory/timeline-store.js';
import { createRedis, closeRedis } from '../adapters/redis/client.js';
import { Keys } from '../adapters/redis/keys.js';
import { parseHn } from './import/hn.js';
import { liveServer } from './import/index.js';
import { FollowingStats, formatFollowingReport, type FollowingReport } from './simulate-following-report.js';
import { prng } from '../domain/prng.js';

export { formatFollowingReport, type FollowingReport } from './simulate-following-report.js';

/** Options of {@link runSimulateFollowing}. */
export interface SimulateFollowingOptions {
  /** HN posts file (CSV or CSV.gz). */
  postsPath: string;
  /** Publish only the first N posts (default all). */
  posts?: number;
  readers?: number;
  meanGapHours?: number;
  pages?: number;
  /** Readers whose whole timeline is compared with SQL at the end (default 50). */
  check?: number;
  celebrityThreshold?: number;
  /** Fan-out worker concurrency (default the config's). */
  concurrency?: number;
  out?: (text: string) => void;
}

/** What a reader should see, written apart from the service's queries: $1 = the reader. */
const EXPECTED_SQL = `
  SELECT i.tid FROM follows f JOIN items i ON i.author_id = f.followee_id
  WHERE f.follower_id = $1 AND i.tid IS NOT NULL AND i.deleted_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = $1 AND b.blocked_id = f.followee_id)
  ORDER BY i.tid DESC`;

type Event = { t: number; kind: 'publish'; item: ItemInput } | { t: number; kind: 'delete'; itemId: string } | { t: number; kind: 'session'; reader: string; n: number };


function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Reads the posts and maps their authors onto graph users (see the module doc). */
async function mappedPosts(f: Freshet, path: string, limit: number | undefined): Promise<{ items: ItemInput[]; authors: number; topFollowers: number; celebrities: number; threshold: number }> {
  let posts: ItemInput[] = [];
  for await (const batch of parseHn(path, { batchSize: 1000 })) posts.push(...batch.items);
  posts.sort((a, b) => a.publishedAt - b.publishedAt || a.id.localeCompare(b.id));
  if (limit !== undefined) posts = posts.slice(0, limit);
  const counts = new Map<string, number>();
  for (const p of posts) counts.set(p.authorId, (counts.get(p.authorId) ?? 0) + 1);
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([a]) => a);
  const users = await f.following.graph.mostFollowed(ranked.length);
  if (users.length === 0) throw new Error('the graph is empty: run `freshet import graph FILE` first');
  const to = new Map(ranked.map((a, i) => [a, users[i % users.length]!.userId]));
  const threshold = f.config.following.celebrityThreshold;
  const items = posts.map((p) => ({ ...p, id: p.id.replace(/^hn_/, 'hnf_'), authorId: to.get(p.authorId)! }));
  const celebrities = users.slice(0, ranked.length).filter((u) => u.followers > threshold).length;
  return { items, authors: ranked.length, topFollowers: users[0]!.followers, celebrities, threshold };
}

/** The reading schedule of the sampled readers. */
async function sessions(sql: Sql, n: number, from: number, to: number, meanGapMs: number): Promise<{ readers: string[]; events: Event[] }> {
  const rows = await sql.query<{ id: string }>(`SELECT id FROM users WHERE following > 0 ORDER BY md5(id), id LIMIT $1::int`, [n]);
  const events: Event[] = [];
  for (const { id } of rows) {
    const rnd = prng(hash(id));
    let k = 0;
    for (let t = from + rnd() * meanGapMs; t < to; t += -Math.log(1 - rnd()) * meanGapMs) events.push({ t: Math.floor(t), kind: 'session', reader: id, n: k++ });
  }
  return { readers: rows.map((r) => r.id), events };
}

/**
 * Runs the simulation and prints the report.
 * @throws Error when the graph is empty, the posts file cannot be read, or the embedded server holds
 *   the PGlite database.
 */
export async function runSimulateFollowing(config: Config, opts: SimulateFollowingOptions): Promise<FollowingReport> {
  if (!config.databaseUrl && liveServer(config.dataDir)) throw new Error('the embedded server is running and holds the PGlite database: stop it first (or use FRESHET_DATABASE_URL)');
  const cfg: Config = { ...config, following: { ...config.following, celebrityThreshold: opts.celebrityThreshold ?? 1_000 } };
  const out = opts.out ?? ((text: string) => process.stdout.write(text + '\n'));
  const sql = await openSql(cfg);
  const clock = new ManualClock(0);
  const f = await openFreshet(cfg, { sql, clock, defaultMetrics: false, recoverHot: false });
  const stats = new FollowingStats();
  const started = performance.now();
  try {
    const worker = f.following.inlineWorker ? null : f.following.startWorker(opts.concurrency);
    f.following.onFanout((_job, outcome, lagMs) => {
      stats.fanoutJobs++;
      if (outcome.pulled) stats.pulledJobs++;
      stats.deliveries += outcome.deliveries;
      stats.lag.push(lagMs);
    });
    const posts = await mappedPosts(f, opts.postsPath, opts.posts);
    const from = posts.items[0]!.publishedAt;
    const to = posts.items.at(-1)!.publishedAt + HOUR_MS;
    const plan = await sessions(sql, opts.readers ?? 300, from, to, (opts.meanGapHours ?? 96) * HOUR_MS);
    const events: Event[] = [...posts.items.map((item) => ({ t: item.publishedAt, kind: 'publish' as const, item })), ...plan.events];
    posts.items.forEach((item, i) => i % 200 === 199 && events.push({ t: item.publishedAt + 6 * HOUR_MS, kind: 'delete', itemId: item.id }));
    events.sort((a, b) => a.t - b.t);
    await replay(f, events, opts.pages ?? 3, stats);
    await f.following.queue.idle(600_000);
    const check = await checkTimelines(f, sql, plan.readers.slice(0, opts.check ?? 50), to + SECOND_MS);
    const report: FollowingReport = {
      virtualFrom: new Date(from).toISOString(),
      virtualTo: new Date(to).toISOString(),
      wallMs: Math.round(performance.now() - started),
      graphUsers: Number((await sql.query<{ n: string | number }>(`SELECT count(*) AS n FROM users`))[0]?.n ?? 0),
      authors: posts.authors,
      celebrities: posts.celebrities,
      celebrityThreshold: posts.threshold,
      topFollowers: posts.topFollowers,
      published: stats.published,
      deleted: stats.deleted,
      readers: plan.readers.length,
      sessions: stats.sessions,
      reads: stats.reads.length,
      rebuilds: stats.rebuilds,
      unfollows: stats.unfollows,
      blocks: stats.blocks,
      fanoutJobs: stats.fanoutJobs,
      pulledJobs: stats.pulledJobs,
      deliveries: stats.deliveries,
      lagMs: FollowingStats.summary(stats.lag),
      readMs: FollowingStats.summary(stats.reads),
      inboxes: await inboxMemory(f),
      ...check,
      exitCode: check.mismatches > 0 ? 1 : 0,
    };
    await worker?.stop();
    out(formatFollowingReport(report));
    return report;
  } finally {
    await f.close();
  }
}

/** Plays the events in virtual-time order: publishes in runs of up to 100, deletes, reading sessions. */
async function replay(f: Freshet, events: Event[], pages: number, stats: FollowingStats): Promise<void> {
  const t = f.following.timeline;
  for (let i = 0; i < events.length; ) {
    const e = events[i]!;
    if (e.kind === 'publish') {
      const run: ItemInput[] = [];
      while (i < events.length && events[i]!.kind === 'publish' && run.length < 100) run.push((events[i++] as Extract<Event, { kind: 'publish' }>).item);
      const now = run.at(-1)!.publishedAt;
      await f.content.upsertItems(run, now);
      stats.published += (await t.publish(run.map((p) => p.id), now)).length;
      continue;
    }
    i++;
    if (e.kind === 'delete') {
      if (await f.content.deleteItem(e.itemId, e.t)) stats.deleted++;
    } else {
      await session(f, e.reader, e.n, e.t, pages, stats);
    }
  }
}

async function session(f: Freshet, reader: string, n: number, now: number, pages: number, stats: FollowingStats): Promise<void> {
  stats.sessions++;
  if (n === 2) {
    const [newest] = (await f.following.graph.following(reader, 1)).entries;
    if (newest && (await f.following.timeline.unfollow(reader, newest.userId)).removed) stats.unfollows++;
  }
  if (n === 4) {
    const [newest] = (await f.following.graph.following(reader, 1)).entries;
    if (newest && (await f.following.timeline.block(reader, newest.userId, now)).created) stats.blocks++;
  }
  let maxId: number | undefined;
  for (let p = 0; p < pages; p++) {
    const t0 = performance.now();
    const page = await f.following.timeline.read(reader, { limit: 20, maxId }, now);
    stats.reads.push(performance.now() - t0);
    if (page.rebuilt) stats.rebuilds++;
    if (page.nextMaxId === null) break;
    maxId = page.nextMaxId;
  }
}

/** Pages through each reader's whole timeline and compares it with {@link EXPECTED_SQL}, tid for tid. */
async function checkTimelines(f: Freshet, sql: Sql, readers: string[], now: number): Promise<Pick<FollowingReport, 'checked' | 'checkedRebuilt' | 'checkedItems' | 'mismatches' | 'mismatchExamples'>> {
  let mismatches = 0;
  let rebuilt = 0;
  let items = 0;
  const examples: string[] = [];
  for (const reader of readers) {
    const got: number[] = [];
    let maxId: number | undefined;
    for (;;) {
      const page = await f.following.timeline.read(reader, { limit: 50, maxId }, now);
      if (page.rebuilt) rebuilt++;
      got.push(...page.items.map((i) => i.tid));
      if (page.nextMaxId === null) break;
      maxId = page.nextMaxId;
    }
    const want = (await sql.query<{ tid: number | string }>(EXPECTED_SQL, [reader])).map((r) => Number(r.tid));
    items += want.length;
    if (got.length !== want.length || got.some((tid, k) => tid !== want[k])) {
      mismatches++;
      if (examples.length < 5) examples.push(`${reader}: paged ${got.length} items, SQL has ${want.length}`);
    }
  }
  return { checked: readers.length, checkedRebuilt: rebuilt, checkedItems: items, mismatches, mismatchExamples: examples };
}

/** Inboxes and their memory: `MEMORY USAGE` of every inbox key on standalone Redis; counts in process. */
async function inboxMemory(f: Freshet): Promise<FollowingReport['inboxes']> {
  const store = f.following.store;
  if (store instanceof MemoryTimelineStore) {
    const s = store.inboxStats();
    return { count: s.inboxes, entries: s.entries, bytes: null };
  }
  if (!f.config.redisUrl) return { count: 0, entries: 0, bytes: null };
  const redis = createRedis({ url: f.config.redisUrl });
  try {
    const keys = new Keys(f.config.keyPrefix);
    let cursor = '0';
    const r = { count: 0, entries: 0, bytes: 0 };
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', keys.inboxPattern(), 'COUNT', 1000);
      cursor = next;
      for (const key of found) {
        r.count++;
        r.entries += await redis.zcard(key);
        r.bytes += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
      }
    } while (cursor !== '0');
    return r;
  } finally {
    await closeRedis(redis);
  }
}
