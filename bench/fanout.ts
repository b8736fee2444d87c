/**
 * Following-timeline benchmark (note 4) on loopback Redis and PostgreSQL.
 *
 * (a) Fan-out throughput to Redis inboxes: `RedisTimelineStore.pushToInboxes` (tlPush-2N: state check,
 *     then the packed ring of includes/ring.lua: header, one slot, the trim by overwriting the oldest)
 *     of one tid into 5,000 ready inboxes in chunks of 1,000 (the worker's chunk), 40 tids → 200,000
 *     deliveries; against a bare pipelined `ZADD key tid tid` of the same entries into other keys (plain
 *     ZSETs), in the same run, rounds interleaved (target ≥ 70 % of bare). Four times: fresh inboxes
 *     (the rings grow), full ones (800 entries, 500 readers: every push trims), full ones taking late
 *     pushes (tids in blocks of 8 pushed newest first: 7 of 8 land below the newest entry, as when
 *     concurrent fan-out jobs finish out of order), and full ones taking tids they hold 200–400 entries
 *     down (a job run again much later: the ring's slow path). Then the whole worker job (`FanoutWorker.handle`:
 *     outbox, author lookup, active followers paged from PostgreSQL, pushes).
 * (b) Timeline read latency: a reader following 500 authors, 5 of them celebrities (pulled from their
 *     outboxes), 20 items per author (10,000 items, inbox of 800): first page, pages inside the inbox
 *     (random `max_id`), deep pages below the inbox floor (PostgreSQL fallback), `since_id` polls
 *     (target p99 < 10 ms). Service level (`FollowingTimeline.page`), sequential.
 * Prints figures; asserts nothing. Run alone with `npx tsx bench/fanout.ts`.
 */
import { loadConfig } from '../src/compose/config.js';
import { openFreshet, type Freshet } from '../src/compose/open.js';
import { ManualClock } from '../src/kernel/clock.js';
import { openPostgres, type Sql } from '../src/kernel/sql/sql.js';
import { insertEdges, recountFollows } from '../src/following/adapters/postgres-graph-import.js';
import { Keys } from '../src/kernel/redis/keys.js';
import { RedisTimelineStore } from '../src/following/adapters/redis-timeline-store.js';
import type { RedisClient } from '../src/kernel/redis/client.js';
import type { ItemInput } from '../src/kernel/items/content-store.js';
import { FanoutWorker } from '../src/following/fanout-worker.js';
import { noTimelineMetrics } from '../src/following/timeline-metrics.js';
import { silentLogger } from '../src/kernel/observability.js';
import {
  BENCH_DATABASE_URL,
  BENCH_REDIS_URL,
  dropPrefix,
  dropSchema,
  openRedis,
  printTitle,
  runIfMain,
  uniquePrefix,
  uniqueSchema,
  withCleanup,
} from './support.js';
import { TIMING_COLUMNS, fmtInt, fmtPct, printNotes, printTable, timeLoop, timingRow, type Summary } from './stats.js';

const NOW = Date.UTC(2026, 2, 6, 12);
const CHUNK = 1_000;
const TTL = 7 * 86_400_000;

export async function run(): Promise<void> {
  printTitle('following timeline: fan-out and reads (bench/fanout.ts)');
  await withCleanup(async (cleanup) => {
    const redis = openRedis();
    const prefix = uniquePrefix('fanout');
    cleanup.add(() => redis.disconnect());
    cleanup.add(() => dropPrefix(redis, prefix));
    await fanoutThroughput(redis, prefix);
    const schema = uniqueSchema();
    cleanup.add(() => dropSchema(schema));
    await timelineReads(prefix, schema, cleanup.add.bind(cleanup));
  });
}

// ---------------------------------------------------------------- (a) fan-out

async function prepare(store: RedisTimelineStore, readers: string[], fill: number, maxLen: number): Promise<void> {
  const base = Array.from({ length: fill }, (_, i) => i + 1);
  for (let i = 0; i < readers.length; i += 200) {
    await Promise.all(
      readers.slice(i, i + 200).map(async (r) => {
        await store.beginRebuild(r, TTL);
        await store.completeRebuild(r, base, 0, maxLen, TTL);
      }),
    );
  }
}

/** The bare baseline's inboxes: plain ZSETs of `fill` tids (member = score = tid), as a ZADD-only design keeps them. */
async function prepareBare(redis: RedisClient, keys: Keys, readers: string[], fill: number): Promise<void> {
  if (fill === 0) return;
  const members = Array.from({ length: fill }, (_, i) => [i + 1, String(i + 1)]).flat();
  for (let i = 0; i < readers.length; i += 200) {
    const pipe = redis.pipeline();
    for (const r of readers.slice(i, i + 200)) pipe.zadd(keys.inbox(r), ...members);
    await pipe.exec();
  }
}

/** Deliveries per second of `push` over `tids`, one call per tid. */
async function rate(tids: number[], readers: number, push: (tid: number) => Promise<void>): Promise<number> {
  const t0 = performance.now();
  for (const tid of tids) await push(tid);
  return (tids.length * readers * 1000) / (performance.now() - t0);
}

async function scenario(
  redis: RedisClient,
  prefix: string,
  name: string,
  nReaders: number,
  fill: number,
  nTids: number,
  order: 'in order' | 'late' | 'repeat' = 'in order',
): Promise<string[]> {
  const keys = new Keys(`${prefix}${name}:`);
  const bareKeys = new Keys(`${prefix}${name}-bare:`);
  const store = new RedisTimelineStore(redis, keys);
  const readers = Array.from({ length: nReaders }, (_, i) => `r${i}`);
  await prepare(store, readers, fill, 800);
  await prepareBare(redis, bareKeys, readers, fill);
  let next = 1_000_000;
  const viaStore = async (tid: number) => {
    for (let i = 0; i < readers.length; i += CHUNK) await store.pushToInboxes(readers.slice(i, i + CHUNK), tid, 800);
  };
  const bare = async (tid: number) => {
    for (let i = 0; i < readers.length; i += CHUNK) {
      const pipe = redis.pipeline();
      for (const r of readers.slice(i, i + CHUNK)) pipe.zadd(bareKeys.inbox(r), tid, String(tid));
      await pipe.exec();
    }
  };
  // late: blocks of 8 tids, newest first (7 of 8 pushes land below the newest entry of the inbox);
  // repeat: tids the inboxes hold already, 200–400 entries below the newest (a job run again much later)
  let repeated = 0;
  const tids = () => {
    if (order === 'repeat') return Array.from({ length: nTids }, () => fill - 200 - (repeated++ % 200));
    const block = Array.from({ length: nTids }, () => next++);
    if (order === 'in order') return block;
    return block.map((_, i) => block[i - (i % 8) + (7 - (i % 8))] ?? block[i]!);
  };
  await viaStore(next++);
  await bare(next++); // warm-up: scripts loaded, connections hot
  const storeRates: number[] = [];
  const bareRates: number[] = [];
  for (let round = 0; round < 3; round++) {
    bareRates.push(await rate(tids(), nReaders, bare));
    storeRates.push(await rate(tids(), nReaders, viaStore));
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
  const s = med(storeRates);
  const b = med(bareRates);
  return [
    name,
    fmtInt(nReaders),
    fmtInt(nTids * nReaders * 3),
    fmtInt(b),
    fmtInt(s),
    fmtPct(s / b),
    order === 'repeat' ? '– (slow path)' : s / b >= 0.7 ? '≥ 70 % ✓' : '≥ 70 % ✗',
  ];
}

async function workerRate(f: Freshet, sql: Sql): Promise<string[]> {
  const g = f.following.graph;
  const fans = Array.from({ length: 5_000 }, (_, i) => `wf${i}`);
  await g.ensureUsers(['w_author', ...fans], NOW);
  await insertEdges(
    sql,
    fans.map((fan) => [fan, 'w_author'] as const),
    NOW,
  );
  await recountFollows(sql);
  await Promise.all(fans.map((fan) => g.touch(fan, NOW)));
  await prepare(f.following.store as RedisTimelineStore, fans, 0, 800);
  const items: ItemInput[] = Array.from({ length: 20 }, (_, i) => ({
    id: `w${i}`,
    authorId: 'w_author',
    title: 'w',
    text: '',
    url: null,
    tags: [],
    publishedAt: NOW,
    popularity: 0,
  }));
  await f.content.upsertItems(items, NOW);
  const published = await f.following.index.publish(
    items.map((i) => i.id),
    NOW,
  );
  const ctx = { checkpoint: async () => {} };
  // The app's worker runs with the read benchmark's threshold (3): this author is an ordinary one here.
  const { graph, index, store, queue } = f.following;
  const worker = new FanoutWorker(
    { graph, index, store, queue, metrics: noTimelineMetrics, log: silentLogger },
    {
      activeWindowMs: TTL,
      inboxLength: 800,
      outboxLength: 800,
      celebrityThreshold: 10_000,
      chunkSize: CHUNK,
      staleMs: 60_000,
      sweepEveryMs: 60_000,
    },
  );
  const t0 = performance.now();
  let deliveries = 0;
  for (const p of published)
    deliveries += (await worker.handle({ ...p, nowMs: NOW, enqueuedAtMs: Date.now() }, ctx)).deliveries;
  const perS = (deliveries * 1000) / (performance.now() - t0);
  return ['whole job (FanoutWorker.handle, PostgreSQL + Redis)', '5,000', fmtInt(deliveries), '', fmtInt(perS), '', ''];
}

async function fanoutThroughput(redis: RedisClient, prefix: string): Promise<void> {
  const rows = [
    await scenario(redis, prefix, 'fresh inboxes', 5_000, 0, 40),
    await scenario(redis, prefix, 'full inboxes (800, trim)', 500, 800, 200),
    await scenario(redis, prefix, 'full inboxes, late pushes', 500, 800, 200, 'late'),
    await scenario(redis, prefix, 'full inboxes, repeated deep', 500, 800, 200, 'repeat'),
  ];
  printTable(
    '(a) fan-out deliveries per second into Redis inboxes (median of 3 interleaved rounds)',
    ['scenario', 'readers', 'deliveries', 'bare ZADD/s', 'tlPush/s', 'of bare', 'target'],
    rows,
  );
  printNotes(
    'bare = pipelined `ZADD inbox tid tid` of the same entries into plain ZSETs, 1,000 per pipeline; tlPush = one EVALSHA per 500 readers (state check, ring header, slot write; a late tid shifts the entries above it)',
    'repeated deep: tids 200–400 below the newest, already there (a retried job after many newer items): the ring finds each by a binary search of 7-byte reads and writes nothing',
  );
}

// ---------------------------------------------------------------- (b) reads

async function timelineReads(
  prefix: string,
  schema: string,
  onCleanup: (step: () => Promise<unknown>) => void,
): Promise<void> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    FRESHET_SERVICE_KEY: 'bench-service-key-0123456789',
    FRESHET_SECRET: 'bench-secret-0123456789abcdef',
    FRESHET_REDIS_URL: BENCH_REDIS_URL,
    FRESHET_KEY_PREFIX: `${prefix}tl:`,
    FRESHET_CELEBRITY_THRESHOLD: '3',
    FRESHET_DATA_DIR: '/tmp/freshet-bench-fanout',
  });
  const sql = await openPostgres(BENCH_DATABASE_URL, { schema });
  const f = await openFreshet(config, { sql, clock: new ManualClock(NOW), defaultMetrics: false, recoverHot: false });
  onCleanup(() => f.close());
  const worker = f.following.startWorker(4);
  onCleanup(() => worker.stop());
  const authors = Array.from({ length: 500 }, (_, i) => `a${i}`);
  await f.following.graph.ensureUsers(authors, NOW);
  for (const a of authors) await f.following.graph.follow('reader', a, NOW);
  for (const a of authors.slice(0, 5)) for (let k = 0; k < 4; k++) await f.following.graph.follow(`fan${k}`, a, NOW);
  await f.following.timeline.page('reader', { limit: 20 }, NOW); // active, inbox built
  let t = NOW;
  for (let round = 0; round < 20; round++) {
    const items: ItemInput[] = authors.map((a) => ({
      id: `${a}_${round}`,
      authorId: a,
      title: `${a} ${round}`,
      text: '',
      url: null,
      tags: [],
      publishedAt: t,
      popularity: 0,
    }));
    for (let i = 0; i < items.length; i += 100) {
      t += 60_000;
      await f.content.upsertItems(items.slice(i, i + 100), t);
      await f.following.timeline.publish(
        items.slice(i, i + 100).map((x) => x.id),
        t,
      );
    }
  }
  await f.following.queue.idle(300_000);
  await sql.exec('ANALYZE');
  const read = (q: { limit: number; maxId?: number; sinceId?: number }) => f.following.timeline.page('reader', q, t);
  const first = await read({ limit: 20 });
  const inbox = await f.following.store.readInbox('reader', { hi: Infinity, lo: 0, count: 1_000 });
  const inInbox = inbox.tids.slice(20, inbox.tids.length - 40);
  const deep = await f.following.index.timelineTids('reader', inbox.floor, 0, 5_000);
  const loop = { warmup: 50, iterations: 2_000, seconds: 10 };
  const all = [...inbox.tids, ...deep];
  /** The tid `back` entries below the newest (a read marker that far behind). */
  const markerAt = (back: number) => all[Math.min(back, all.length - 1)]!;
  const rows: [string, Summary][] = [
    ['first page (20)', await timeLoop(() => read({ limit: 20 }), loop)],
    [
      'page inside the inbox (random max_id)',
      await timeLoop((i) => read({ limit: 20, maxId: inInbox[Math.abs(i * 7919) % inInbox.length] }), loop),
    ],
    [
      'deep page below the floor (SQL)',
      await timeLoop((i) => read({ limit: 20, maxId: deep[Math.abs(i * 7919) % (deep.length - 40)] }), loop),
    ],
    ['since_id poll (nothing new)', await timeLoop(() => read({ limit: 20, sinceId: first.items[0]!.tid }), loop)],
    [
      'unread count, marker 200 entries back',
      await timeLoop(() => f.following.timeline.unread('reader', markerAt(200), t), loop),
    ],
    [
      'unread count, marker a day back (1000+)',
      await timeLoop(() => f.following.timeline.unread('reader', markerAt(5_000), t), { ...loop, iterations: 300 }),
    ],
    [
      'catch-up page (20, oldest first) from a marker a day back',
      await timeLoop(() => f.following.timeline.catchUp('reader', { minId: markerAt(5_000), limit: 20 }, t), loop),
    ],
  ];
  const base = await timeLoop(() => sql.query('SELECT 1'), loop);
  printTable(
    '(b) following-timeline read, 500 followed authors of which 5 celebrities, 10,000 items (ms; ratios against PostgreSQL SELECT 1)',
    TIMING_COLUMNS,
    [
      ...rows.map(([what, s]) => timingRow(what, s, { p99: 10 }, base)),
      timingRow('floor: PostgreSQL SELECT 1', base, {}, base),
    ],
  );
  const probe = openRedis();
  const inboxBytes = Number(
    await probe.call('MEMORY', 'USAGE', new Keys(`${prefix}tl:`).inbox('reader'), 'SAMPLES', '0'),
  );
  probe.disconnect();
  printNotes(
    `inbox holds ${inbox.tids.length} tids in ${fmtInt(inboxBytes)} B (MEMORY USAGE), floor ${inbox.floor > 0 ? 'set' : 'none'}; each read = 1 PostgreSQL statement (reader state + watermark), then inbox + 5 outboxes in parallel, then 1 hydrate query`,
  );
  const rowsA = [await workerRate(f, sql)];
  printTable(
    '(a′) fan-out including PostgreSQL',
    ['scenario', 'readers', 'deliveries', 'bare ZADD/s', 'deliveries/s', 'of bare', 'target'],
    rowsA,
  );
}

runIfMain(import.meta.url, run);
