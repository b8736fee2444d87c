/**
 * `freshet simulate following`: replays the HN posts as items of authors mapped onto an imported
 * follow graph, in time order on virtual time, while sampled readers page their following timelines,
 * then checks sampled timelines against SQL exactly. Runs in process, by default on scratch stores
 * (src/cli/scratch.ts: in-memory PGlite, or a schema of its own on the configured PostgreSQL; a key
 * prefix of its own on the configured Redis + BullMQ) into which `graphPath` is imported first, all
 * removed at the end; with `inPlace` on the configured stores and the graph already imported there
 * (`freshet import graph`), which it then changes (publishes, deletes, unfollows, blocks).
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
import { SECOND_MS, HOUR_MS, ManualClock } from '../../kernel/clock.js';
import type { ItemInput } from '../../kernel/items/content-store.js';
import { forJobs, type Config } from '../../compose/config.js';
import { openFreshet, openSql, type Freshet } from '../../compose/open.js';
import { runGraphImport } from './import-graph.js';
import { openScratch, type Scratch } from '../scratch.js';
import { cliLogger } from '../log.js';
import { Progress } from '../progress.js';
import { refuseBesideServer } from '../server.js';
import type { Sql } from '../../kernel/sql/sql.js';
import { parseHn } from '../import-hn.js';
import { FollowingStats, formatFollowingReport, type FollowingReport } from './simulate-report.js';
import { prng } from '../../kernel/prng.js';
import { fnv1a } from '../../kernel/hash.js';
import { authorsByItems } from '../authors.js';

export { formatFollowingReport, type FollowingReport } from './simulate-report.js';

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
  /** Follow-edge list imported into the stores first (required on scratch stores). */
  graphPath?: string;
  /** Run on the configured stores instead of scratch ones (default false). */
  inPlace?: boolean;
  /** Draw progress bars (default: when stderr is a TTY; otherwise a progress line every 5 s). */
  progress?: boolean;
  out?: (text: string) => void;
}

/** What a reader should see, written apart from the service's queries: $1 = the reader. */
const EXPECTED_SQL = `
  SELECT i.tid FROM follows f JOIN items i ON i.author_id = f.followee_id
  WHERE f.follower_id = $1 AND i.tid IS NOT NULL AND i.deleted_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = $1 AND b.blocked_id = f.followee_id)
  ORDER BY i.tid DESC`;

type Event =
  | { t: number; kind: 'publish'; item: ItemInput }
  | { t: number; kind: 'delete'; itemId: string }
  | { t: number; kind: 'session'; reader: string; n: number };

/** Reads the posts and maps their authors onto graph users (see the module doc). */
async function mappedPosts(
  f: Freshet,
  path: string,
  limit: number | undefined,
): Promise<{ items: ItemInput[]; authors: number; topFollowers: number; celebrities: number; threshold: number }> {
  let posts: ItemInput[] = [];
  for await (const batch of parseHn(path, { batchSize: 1000 })) posts.push(...batch.items);
  posts.sort((a, b) => a.publishedAt - b.publishedAt || a.id.localeCompare(b.id));
  if (limit !== undefined) posts = posts.slice(0, limit);
  const ranked = authorsByItems(posts);
  const users = await f.following.graph.mostFollowed(ranked.length);
  if (users.length === 0) throw new Error('the graph is empty: run `freshet import graph FILE` first');
  const to = new Map(ranked.map((a, i) => [a, users[i % users.length]!.userId]));
  const threshold = f.config.following.celebrityThreshold;
  const items = posts.map((p) => ({ ...p, id: p.id.replace(/^hn_/, 'hnf_'), authorId: to.get(p.authorId)! }));
  const celebrities = users.slice(0, ranked.length).filter((u) => u.followers > threshold).length;
  return { items, authors: ranked.length, topFollowers: users[0]!.followers, celebrities, threshold };
}

/** The reading schedule of the sampled readers. */
async function sessions(
  sql: Sql,
  n: number,
  from: number,
  to: number,
  meanGapMs: number,
): Promise<{ readers: string[]; events: Event[] }> {
  const rows = await sql.query<{ id: string }>(
    `SELECT id FROM users WHERE following > 0 ORDER BY md5(id), id LIMIT $1::int`,
    [n],
  );
  const events: Event[] = [];
  for (const { id } of rows) {
    const rnd = prng(fnv1a(id));
    let k = 0;
    for (let t = from + rnd() * meanGapMs; t < to; t += -Math.log(1 - rnd()) * meanGapMs)
      events.push({ t: Math.floor(t), kind: 'session', reader: id, n: k++ });
  }
  return { readers: rows.map((r) => r.id), events };
}

/**
 * Runs the simulation and prints the report (after a line saying which stores it runs on).
 * @throws Error when the graph is empty, the graph or posts file cannot be read, no `graphPath` is given
 *   for scratch stores, or (in place) another process holds the embedded data folder.
 */
export async function runSimulateFollowing(config: Config, opts: SimulateFollowingOptions): Promise<FollowingReport> {
  const out = opts.out ?? ((text: string) => process.stdout.write(`${text}\n`));
  if (!opts.inPlace && !opts.graphPath)
    throw new Error(
      'simulate following on scratch stores needs a graph to import (--graph FILE), or --in-place to use the graph already imported',
    );
  if (opts.inPlace)
    refuseBesideServer(
      config,
      'simulate following --in-place',
      'stop it first, or run without --in-place (scratch stores)',
    );
  const scratch: Scratch | null = opts.inPlace ? null : await openScratch(config, 'following');
  out(
    `simulate following: ${scratch ? `${scratch.where}; --in-place runs on the configured stores` : 'the configured stores (--in-place): publishes, deletes, unfollows and blocks stay there'}`,
  );
  const base = scratch?.config ?? config;
  const cfg: Config = {
    ...base,
    following: { ...base.following, celebrityThreshold: opts.celebrityThreshold ?? 1_000 },
  };
  try {
    const sql = scratch?.sql ?? (await openSql(cfg));
    return await simulate(cfg, sql, opts, out);
  } finally {
    await scratch?.remove();
  }
}

/** The graph import (when given) and the simulation proper on open stores (closes them, `sql` included). */
async function simulate(
  cfg: Config,
  sql: Sql,
  opts: SimulateFollowingOptions,
  out: (text: string) => void,
): Promise<FollowingReport> {
  const clock = new ManualClock(0);
  const f = await openFreshet(forJobs(cfg), {
    sql,
    clock,
    defaultMetrics: false,
    recoverHot: false,
    log: cliLogger(cfg),
  });
  const stats = new FollowingStats();
  const started = performance.now();
  try {
    if (opts.graphPath) await runGraphImport(opts.graphPath, cfg, { freshet: f, progress: opts.progress, out });
    const worker = f.following.inlineWorker ? null : f.following.startWorker(opts.concurrency);
    f.following.onFanout((_job, outcome, lagMs) => stats.fanout(outcome, lagMs));
    const posts = await mappedPosts(f, opts.postsPath, opts.posts);
    const from = posts.items[0]!.publishedAt;
    const to = posts.items.at(-1)!.publishedAt + HOUR_MS;
    const plan = await sessions(sql, opts.readers ?? 300, from, to, (opts.meanGapHours ?? 96) * HOUR_MS);
    const events = eventsOf(posts.items, plan.events);
    const progress = new Progress({
      label: 'simulate following',
      total: events.length,
      counts: true,
      tty: opts.progress,
    });
    try {
      await replay(f, events, opts.pages ?? 3, stats, progress);
    } finally {
      progress.stop();
    }
    await f.following.queue.idle(600_000);
    const check = await checkTimelines(f, sql, plan.readers.slice(0, opts.check ?? 50), to + SECOND_MS);
    const run = { from, to, wallMs: Math.round(performance.now() - started), readers: plan.readers.length };
    const report = await followingReport(f, sql, posts, stats, check, run);
    await worker?.stop();
    out(formatFollowingReport(report));
    return report;
  } finally {
    await f.close(); // closes `sql` too
  }
}

/** The run's report: its virtual span, the graph and posts, what the stats counted, the inboxes and the check. */
async function followingReport(
  f: Freshet,
  sql: Sql,
  posts: Awaited<ReturnType<typeof mappedPosts>>,
  stats: FollowingStats,
  check: Awaited<ReturnType<typeof checkTimelines>>,
  run: { from: number; to: number; wallMs: number; readers: number },
): Promise<FollowingReport> {
  return {
    virtualFrom: new Date(run.from).toISOString(),
    virtualTo: new Date(run.to).toISOString(),
    wallMs: run.wallMs,
    graphUsers: Number((await sql.query<{ n: string | number }>(`SELECT count(*) AS n FROM users`))[0]?.n ?? 0),
    authors: posts.authors,
    celebrities: posts.celebrities,
    celebrityThreshold: posts.threshold,
    topFollowers: posts.topFollowers,
    published: stats.published,
    deleted: stats.deleted,
    readers: run.readers,
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
}

/**
 * Every event of the run in virtual-time order: each post published at its time, the readers' sessions,
 * and every 200th post deleted 6 hours after it was published.
 */
function eventsOf(items: readonly ItemInput[], sessionEvents: readonly Event[]): Event[] {
  const events: Event[] = [
    ...items.map((item) => ({ t: item.publishedAt, kind: 'publish' as const, item })),
    ...sessionEvents,
  ];
  items.forEach(
    (item, i) => i % 200 === 199 && events.push({ t: item.publishedAt + 6 * HOUR_MS, kind: 'delete', itemId: item.id }),
  );
  return events.sort((a, b) => a.t - b.t);
}

/** Plays the events in virtual-time order: publishes in runs of up to 100, deletes, reading sessions. */
async function replay(
  f: Freshet,
  events: Event[],
  pages: number,
  stats: FollowingStats,
  progress: Progress,
): Promise<void> {
  for (let i = 0; i < events.length; ) {
    progress.update(i, `${stats.published} published, ${stats.sessions} sessions`);
    const e = events[i]!;
    if (e.kind === 'publish') {
      const run: ItemInput[] = [];
      while (i < events.length && events[i]!.kind === 'publish' && run.length < 100)
        run.push((events[i++] as Extract<Event, { kind: 'publish' }>).item);
      const now = run.at(-1)!.publishedAt;
      stats.published += (await f.useCases.publishItems(run, now)).inserted;
      continue;
    }
    i++;
    if (e.kind === 'delete') {
      if (await f.useCases.deleteItem(e.itemId, e.t)) stats.deleted++;
    } else {
      await session(f, e.reader, e.n, e.t, pages, stats);
    }
  }
}

async function session(
  f: Freshet,
  reader: string,
  n: number,
  now: number,
  pages: number,
  stats: FollowingStats,
): Promise<void> {
  stats.sessions++;
  if (n === 2) {
    const [newest] = (await f.following.graph.following(reader, 1)).entries;
    if (newest && (await f.useCases.unfollow(reader, newest.userId, now)).removed) stats.unfollows++;
  }
  if (n === 4) {
    const [newest] = (await f.following.graph.following(reader, 1)).entries;
    if (newest && (await f.useCases.block(reader, newest.userId, now)).created) stats.blocks++;
  }
  let maxId: number | undefined;
  for (let p = 0; p < pages; p++) {
    const t0 = performance.now();
    const page = await f.following.timeline.page(reader, { limit: 20, maxId }, now);
    stats.reads.push(performance.now() - t0);
    if (page.rebuilt) stats.rebuilds++;
    if (page.nextMaxId === null) break;
    maxId = page.nextMaxId;
  }
}

/** Pages through each reader's whole timeline and compares it with {@link EXPECTED_SQL}, tid for tid. */
async function checkTimelines(
  f: Freshet,
  sql: Sql,
  readers: string[],
  now: number,
): Promise<Pick<FollowingReport, 'checked' | 'checkedRebuilt' | 'checkedItems' | 'mismatches' | 'mismatchExamples'>> {
  let mismatches = 0;
  let rebuilt = 0;
  let items = 0;
  const examples: string[] = [];
  for (const reader of readers) {
    const got: number[] = [];
    let maxId: number | undefined;
    for (;;) {
      const page = await f.following.timeline.page(reader, { limit: 50, maxId }, now);
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
  return {
    checked: readers.length,
    checkedRebuilt: rebuilt,
    checkedItems: items,
    mismatches,
    mismatchExamples: examples,
  };
}

/** Inboxes, their memory (`MEMORY USAGE` of every inbox key on Redis) and those without a time to live; counts in process. */
async function inboxMemory(f: Freshet): Promise<FollowingReport['inboxes']> {
  return f.following.store.inboxStats();
}
