/**
 * Grouped notifications (docs/notifications.md) on loopback Redis + PostgreSQL:
 * (a) write throughput of the grouped view — one like counted into its group (`ntAdd-2`: one field read and
 *     written, one ZADD) — for likes into ONE group (a post liked by 100,000 readers) and spread over 1,000
 *     recipients, against a bare pipelined `ZADD` of the same count in the same run, 50 callers each
 *     (target ≥ 50 % of bare);
 * (b) the grouped-feed read (`Notifications.page`, 20 groups: the marker, the view, the items' liveness)
 *     of a recipient with 100,000 events in 6,000 groups, first page and a page further down, its unread
 *     count, and the rebuild of its view from PostgreSQL (target read p99 ≤ 10 ms), against PostgreSQL
 *     `SELECT 1` in the same run.
 * `npx tsx bench/notifications.ts`. Prints figures; asserts nothing.
 */
import { loadConfig } from '../src/compose/config.js';
import { openFreshet } from '../src/compose/open.js';
import { ManualClock } from '../src/kernel/clock.js';
import { openPostgres } from '../src/kernel/sql/sql.js';
import { Keys } from '../src/kernel/redis/keys.js';
import { RedisGroupedView } from '../src/notifications/adapters/redis-grouped-view.js';
import { groupKey, type NotificationEvent } from '../src/notifications/domain.js';
import type { RedisClient } from '../src/kernel/redis/client.js';
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
import {
  TIMING_COLUMNS,
  closedLoop,
  fmtInt,
  fmtPct,
  printNotes,
  printTable,
  throughput,
  timeLoop,
  timingRow,
} from './stats.js';

const NOW = Date.UTC(2026, 10, 27, 12);
const DAY = 86_400_000;
const CALLERS = 50;

export async function run(): Promise<void> {
  printTitle('notifications: grouped-view writes and grouped-feed reads (bench/notifications.ts)');
  await withCleanup(async (cleanup) => {
    const redis = openRedis();
    const prefix = uniquePrefix('notif');
    cleanup.add(() => redis.disconnect());
    cleanup.add(() => dropPrefix(redis, prefix));
    await writes(redis, prefix);
    const schema = uniqueSchema();
    cleanup.add(() => dropSchema(schema));
    await reads(prefix, schema, cleanup.add.bind(cleanup));
  });
}

/** Likes/s of the view against bare ZADD/s, 50 callers, the same count each. */
async function writes(redis: RedisClient, prefix: string): Promise<void> {
  const view = new RedisGroupedView(redis, new Keys(`${prefix}w:`), { maxGroups: 200, ttlMs: DAY });
  const n = 100_000;
  const rows: string[][] = [];
  for (const [name, recipients] of [
    ['one group (a post liked by 100,000 readers)', 1],
    ['1,000 recipients, one group each', 1_000],
  ] as const) {
    for (let r = 0; r < recipients; r++) {
      const token = await view.beginRebuild(`rc${r}`);
      await view.completeRebuild(`rc${r}`, token, [], false);
    }
    let id = 0;
    const gk = groupKey('like', 'post', NOW, DAY);
    const like = (i: number): NotificationEvent => ({
      id: ++id,
      recipientId: `rc${i % recipients}`,
      type: 'like',
      actorId: `u${id}`,
      itemId: 'post',
      atMs: NOW,
      groupKey: gk,
    });
    const bareKey = (i: number) => `${prefix}bare:${name.length}:${i % recipients}`;
    const loop = { warmup: 20, iterations: n, seconds: 20, concurrency: CALLERS };
    const bare = await closedLoop((_w, i) => redis.zadd(bareKey(i), ++id, `u${id}`), loop);
    const viaView = await closedLoop((_w, i) => view.add(like(i)), loop);
    const ratio = throughput(viaView) / throughput(bare);
    rows.push([
      name,
      fmtInt(viaView.n),
      fmtInt(throughput(bare)),
      fmtInt(throughput(viaView)),
      fmtPct(ratio),
      ratio >= 0.5 ? '≥ 50 % ✓' : '≥ 50 % ✗',
    ]);
    const first = (await view.page('rc0', null, 1))!.groups[0]!;
    rows.push([
      `  (the group of rc0 counts ${fmtInt(first.actorCount)} likes, ${first.actors.length} actors shown)`,
      '',
      '',
      '',
      '',
      '',
    ]);
  }
  printTable(
    '(a) grouped-view writes: likes/s against a bare ZADD, 50 callers',
    ['scenario', 'likes', 'bare ZADD/s', 'likes/s', 'of bare', 'target'],
    rows,
  );
}

/** The grouped-feed read of a recipient with 100,000 events. */
async function reads(prefix: string, schema: string, onCleanup: (step: () => Promise<unknown>) => void): Promise<void> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    FRESHET_SERVICE_KEY: 'bench-service-key-0123456789',
    FRESHET_SECRET: 'bench-secret-0123456789abcdef',
    FRESHET_REDIS_URL: BENCH_REDIS_URL,
    FRESHET_KEY_PREFIX: `${prefix}r:`,
    FRESHET_DATA_DIR: '/tmp/freshet-bench-notifications',
  });
  const sql = await openPostgres(BENCH_DATABASE_URL, { schema });
  const f = await openFreshet(config, {
    sql,
    clock: new ManualClock(NOW),
    defaultMetrics: false,
    recoverHot: false,
    warmDiscover: false,
  });
  onCleanup(() => f.close());
  const n = f.notifications.notifications;
  // 2,000 items of bob; 100,000 likes by 100,000 readers over 30 days: 6,000 groups (item × day)
  await sql.exec(`INSERT INTO items (id, author_id, title, text, url, tags, published_at, popularity, update_time, tsv)
    SELECT 'it' || g, 'bob', 'item ' || g, '', NULL, '{}', ${NOW - 40 * DAY}, 0, ${NOW}, ''::tsvector FROM generate_series(1, 2000) g`);
  await sql.exec(`INSERT INTO notification_events (recipient_id, type, actor_id, item_id, group_key, created_at)
    SELECT 'bob', 'like', 'u' || g, 'it' || (g % 2000 + 1),
           'like:it' || (g % 2000 + 1) || ':' || ((${NOW} - (g % 30) * ${DAY})::bigint / ${DAY}), ${NOW} - (g % 30) * ${DAY}
    FROM generate_series(1::bigint, 100000::bigint) g`);
  await sql.exec('ANALYZE');
  const loop = { warmup: 20, iterations: 2_000, seconds: 10 };
  const rebuild = await timeLoop(
    async () => {
      await n.forgetView('bob');
      await n.page('bob', { limit: 20 });
    },
    { warmup: 2, iterations: 20, seconds: 10 },
  );
  const first = await timeLoop(() => n.page('bob', { limit: 20 }), loop);
  const top = await n.page('bob', { limit: 100 });
  const further = await timeLoop(() => n.page('bob', { limit: 20, maxId: top.groups[99]!.latestId }), loop);
  const deepCursor = (await f.notifications.store.groups('bob', null, 1_000))[999]!.latestId; // the 1,000th group: far below the view
  const deep = await timeLoop(() => n.page('bob', { limit: 20, maxId: deepCursor }), { ...loop, iterations: 200 });
  const unread = await timeLoop(() => n.marker('bob'), loop);
  const base = await timeLoop(() => sql.query('SELECT 1'), loop);
  printTable(
    '(b) grouped feed of a recipient with 100,000 events in 6,000 groups (ms; ratios against PostgreSQL SELECT 1)',
    TIMING_COLUMNS,
    [
      timingRow('first page (20 groups)', first, { p99: 10 }, base),
      timingRow('page 6 (max_id inside the view)', further, { p99: 10 }, base),
      timingRow('a page below the view (PostgreSQL aggregate)', deep, {}, base),
      timingRow('marker + unread count', unread, { p99: 5 }, base),
      timingRow('view rebuilt from PostgreSQL + first page', rebuild, {}, base),
      timingRow('floor: PostgreSQL SELECT 1', base, {}, base),
    ],
  );
  printNotes(
    `view holds ${config.notifications.maxGroups} groups (FRESHET_NOTIFICATION_GROUPS); first page unread count ${top.unread.count}${top.unread.capped ? '+' : ''}`,
  );
}

runIfMain(import.meta.url, run);
