/**
 * What it costs to keep the Redis seen filters in PostgreSQL (issue 10 item 2), option by option, on
 * the same impressions: pages of 20 items shown to random readers at 1,000 and 10,000 impressions a
 * minute (virtual minutes: the impressions of a minute are marked, then each option checkpoints).
 *
 * Options, each writing what it needs to restore the same filters:
 * - `journal` (chosen, src/seen/seen-checkpointer.ts): the packed hash pairs (8 bytes) of the
 *   members each mark added, rolling day and reader alike, taken from Redis and appended as rows;
 * - `full bitmap`: today's rolling day bitmap (1.7 MB at the default geometry) rewritten every minute;
 * - `dirty chunks 4 KiB` / `512 B`: today's bitmap read, diffed against the last one, changed chunks upserted;
 * - `changed readers, full`: the bitmap of every reader marked in the minute rewritten.
 * Per option: payload bytes a minute, WAL bytes a minute (PGlite in memory: isolated, so exact), and
 * ms per checkpoint on the PostgreSQL server (and PGlite). Then restore figures for the chosen one:
 * a lost shard (6 compacted past days + today's journal rows) and readers, against reading 7 bitmaps;
 * and what checkpoints add to `seen()` and `markSeen()` on the request path.
 *
 * `npx tsx bench/seen-checkpoint.ts` (~1–2 minutes). FRESHET_BENCH_CHECKPOINT_MINUTES (default 3).
 */
import { performance } from 'node:perf_hooks';
import { migrate } from '../src/compose/migrations.js';
import { DAY_MS, MINUTE_MS, ManualClock, dayStamp } from '../src/kernel/clock.js';
import { silentLogger } from '../src/kernel/observability.js';
import { Keys } from '../src/kernel/redis/keys.js';
import type { RedisClient } from '../src/kernel/redis/client.js';
import { sizeWindow } from '../src/seen/bloom.js';
import { PostgresSeenCheckpoints } from '../src/seen/postgres-seen-checkpoints.js';
import type { ReaderSeenSettings } from '../src/kernel/reader-seen-filter.js';
import { RedisReaderSeenFilter } from '../src/seen/redis-reader-seen-filter.js';
import { RedisSeenFilter } from '../src/seen/redis-seen-filter.js';
import { bitmapBytes, scalableLevels } from '../src/seen/scalable-bloom.js';
import { SeenCheckpointer } from '../src/seen/seen-checkpointer.js';
import { daySubject, fixedLayout } from '../src/seen/layout.js';
import { DayLayouts } from '../src/seen/day-layouts.js';
import { openPglite, openPostgres, type Sql } from '../src/kernel/sql/sql.js';
import { fmtInt, fmtMs, printNotes, printTable, summarize } from './stats.js';
import {
  BENCH_DATABASE_URL,
  dropPrefix,
  dropSchema,
  openRedis,
  printTitle,
  prng,
  randomBitmap,
  runIfMain,
  uniquePrefix,
  uniqueSchema,
  withCleanup,
} from './support.js';

const T0 = Date.UTC(2026, 2, 6, 0, 0, 0);
const GEOMETRY = sizeWindow(1_000_000, 0.01, 7); // one shard of the default capacity: 13.6 Mbit = 1.7 MB a day
const LAYOUT = fixedLayout(GEOMETRY);
const READER: ReaderSeenSettings = { initialCapacity: 10_000, errorRate: 0.01, ttlMs: 30 * DAY_MS };
const READERS = 1_000;
const PAGE = 20;
const RATES = [1_000, 10_000];
const MINUTES = Number(process.env.FRESHET_BENCH_CHECKPOINT_MINUTES ?? 3);
const OPTIONS = [
  'journal (chosen)',
  'full bitmap',
  'dirty chunks 4 KiB',
  'dirty chunks 512 B',
  'changed readers, full',
] as const;
type Option = (typeof OPTIONS)[number];
/** Journal bytes a minute that are readers' (the rest: rolling days), by engine and rate. */
const readerShare = new Map<string, number>();

interface Sample {
  payload: number;
  wal: number;
  ms: number;
}

/** One engine's filters, checkpointer and baseline tables. */
interface Rig {
  sql: Sql;
  redis: RedisClient;
  keys: Keys;
  clock: ManualClock;
  cp: SeenCheckpointer;
  store: PostgresSeenCheckpoints;
  rolling: RedisSeenFilter;
  readerSeen: RedisReaderSeenFilter;
}

async function rig(sql: Sql, redis: RedisClient, prefix: string): Promise<Rig> {
  await migrate(sql);
  await sql.exec(`
    CREATE TABLE IF NOT EXISTS bench_full (subject text PRIMARY KEY, bitmap bytea NOT NULL);
    CREATE TABLE IF NOT EXISTS bench_chunks (subject text, chunk int, bytes bytea NOT NULL, PRIMARY KEY (subject, chunk));
    CREATE TABLE IF NOT EXISTS bench_readers (reader text PRIMARY KEY, bitmap bytea NOT NULL);`);
  const keys = new Keys(prefix);
  const clock = new ManualClock(T0);
  const store = new PostgresSeenCheckpoints(sql);
  const dayLayouts = new DayLayouts(redis, keys, LAYOUT, 7);
  const cp = new SeenCheckpointer({ redis, keys, store, dayLayouts, reader: READER, clock, log: silentLogger });
  return {
    sql,
    redis,
    keys,
    clock,
    cp,
    store,
    rolling: new RedisSeenFilter(redis, keys, LAYOUT, { days: 7, checkpoints: cp }),
    readerSeen: new RedisReaderSeenFilter(redis, keys, READER, { checkpoints: cp }),
  };
}

/** WAL position in bytes (PostgreSQL's `pg_current_wal_lsn`). */
async function walBytes(sql: Sql): Promise<number> {
  const [row] = await sql.query<{ lsn: string }>(`SELECT pg_current_wal_lsn()::text AS lsn`);
  const [hi, lo] = row!.lsn.split('/').map((h) => parseInt(h, 16));
  return hi! * 2 ** 32 + lo!;
}

/** Marks one minute of impressions (pages of 20 to random readers) in both filters; returns the readers. */
async function markMinute(r: Rig, rate: number, next: () => number, nowMs: number): Promise<Set<string>> {
  const readers = new Set<string>();
  const pages: Promise<unknown>[] = [];
  for (let p = 0; p < rate / PAGE; p++) {
    const reader = `u${Math.floor(next() * READERS)}`;
    const items = Array.from({ length: PAGE }, () => `i${Math.floor(next() * 10_000_000)}`);
    readers.add(reader);
    pages.push(r.rolling.markSeen(reader, items, nowMs), r.readerSeen.markSeen(reader, items, nowMs));
    if (pages.length >= 64) await Promise.all(pages.splice(0));
  }
  await Promise.all(pages);
  return readers;
}

/** Runs `write` and measures its payload, WAL bytes and time. */
async function measure(sql: Sql, write: () => Promise<number>): Promise<Sample> {
  const wal0 = await walBytes(sql);
  const t = performance.now();
  const payload = await write();
  const ms = performance.now() - t;
  return { payload, ms, wal: (await walBytes(sql)) - wal0 };
}

/** State of the options between minutes: the last bitmap read (for the chunk diffs), journal bytes of readers. */
interface Baselines {
  last: Map<number, Buffer>;
  readerBytes: number;
}

async function runOption(r: Rig, option: Option, readers: Set<string>, b: Baselines): Promise<number> {
  const day = dayStamp(r.clock.now());
  const subject = daySubject(LAYOUT, 0, day);
  if (option === 'journal (chosen)') {
    const report = await r.cp.checkpoint();
    b.readerBytes = report.readerBytes;
    return report.bytes;
  }
  if (option === 'changed readers, full') {
    const rows: [string, Buffer][] = [];
    for (const reader of readers) rows.push([reader, (await r.redis.getBuffer(r.keys.readerSeen(reader)))!]);
    await upsert(r.sql, 'bench_readers', ['reader', 'bitmap'], rows);
    return rows.reduce((n, [, bm]) => n + bm.length, 0);
  }
  const bitmap = (await r.redis.getBuffer(r.keys.seenDays(1, 0).day(day)))!;
  if (option === 'full bitmap') {
    await upsert(r.sql, 'bench_full', ['subject', 'bitmap'], [[subject, bitmap]]);
    return bitmap.length;
  }
  const size = option === 'dirty chunks 4 KiB' ? 4096 : 512;
  const prev = b.last.get(size);
  b.last.set(size, bitmap);
  const rows: [string, number, Buffer][] = [];
  for (let c = 0; c * size < bitmap.length; c++) {
    const chunk = bitmap.subarray(c * size, (c + 1) * size);
    if (!prev || !chunk.equals(prev.subarray(c * size, (c + 1) * size))) rows.push([subject, c, chunk]);
  }
  await upsert(r.sql, 'bench_chunks', ['subject', 'chunk', 'bytes'], rows);
  return rows.length * size;
}

/** Upserts rows (the last column is the value) in one transaction, 500 per statement. */
async function upsert(sql: Sql, table: string, cols: string[], rows: readonly (readonly unknown[])[]): Promise<void> {
  if (rows.length === 0) return;
  const keyCols = cols.slice(0, -1).join(', ');
  const value = cols[cols.length - 1]!;
  await sql.transaction(async (tx) => {
    for (let s = 0; s < rows.length; s += 500) {
      const part = rows.slice(s, s + 500);
      const params: unknown[] = [];
      const tuples = part.map((row) => `(${row.map((v) => `$${params.push(v)}`).join(', ')})`);
      await tx.query(
        `INSERT INTO ${table} (${cols.join(', ')}) VALUES ${tuples.join(', ')} ON CONFLICT (${keyCols}) DO UPDATE SET ${value} = excluded.${value}`,
        params,
      );
    }
  });
}

/** Every option, `MINUTES` measured minutes (after one warm-up minute) at each rate, on one engine. */
async function runEngine(name: string, sql: Sql, redis: RedisClient): Promise<Map<string, Sample[]>> {
  const results = new Map<string, Sample[]>();
  for (const rate of RATES) {
    const prefix = uniquePrefix('ckpt');
    try {
      const r = await rig(sql, redis, prefix);
      await sql.exec(`TRUNCATE seen_checkpoints CASCADE; TRUNCATE bench_full, bench_chunks, bench_readers`);
      const next = prng(rate);
      const b: Baselines = { last: new Map(), readerBytes: 0 };
      // noon: today's filter half way to its capacity (500,000 members: 1 - e^(-k·n/m) of its bits set)
      const noon = T0 + 12 * 60 * MINUTE_MS;
      const ones = 1 - Math.exp((-GEOMETRY.hashes * 500_000) / GEOMETRY.bits);
      await redis.set(r.keys.seenDays(1, 0).day(dayStamp(noon)), randomBitmap(GEOMETRY.bits, ones), 'PX', DAY_MS);
      for (let m = 0; m <= MINUTES; m++) {
        r.clock.set(noon + m * MINUTE_MS);
        const readers = await markMinute(r, rate, next, r.clock.now());
        for (const option of OPTIONS) {
          const sample = await measure(sql, () => runOption(r, option, readers, b));
          if (m === 0) continue;
          results.set(`${rate}|${option}`, [...(results.get(`${rate}|${option}`) ?? []), sample]);
          if (option === 'journal (chosen)')
            readerShare.set(`${name}|${rate}`, (readerShare.get(`${name}|${rate}`) ?? 0) + b.readerBytes / MINUTES);
        }
      }
      const [sized] = await sql.query<{ size: number | string }>(
        `SELECT pg_total_relation_size('seen_checkpoint_log') + pg_total_relation_size('seen_checkpoints') AS size`,
      );
      console.log(
        `  ${name} @ ${fmtInt(rate)}/min: checkpoint tables hold ${fmtInt(Number(sized!.size))} B after ${MINUTES + 1} minutes`,
      );
    } finally {
      await dropPrefix(redis, prefix);
    }
  }
  return results;
}

function printOptions(pglite: Map<string, Sample[]>, server: Map<string, Sample[]>): void {
  const rows: string[][] = [];
  for (const rate of RATES) {
    for (const option of OPTIONS) {
      const lite = pglite.get(`${rate}|${option}`) ?? [];
      const pg = server.get(`${rate}|${option}`) ?? [];
      const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);
      const payload = mean(lite.map((s) => s.payload));
      const wal = mean(lite.map((s) => s.wal));
      rows.push([
        fmtInt(rate),
        option,
        fmtInt(payload),
        fmtInt(wal),
        `${((wal * 1440) / 2 ** 20).toFixed(1)} MiB`,
        fmtMs(summarize(pg.map((s) => s.ms)).p50),
        fmtMs(summarize(lite.map((s) => s.ms)).p50),
      ]);
    }
  }
  printTable(
    `Checkpoint cost per minute (${MINUTES} minutes after a warm-up; payload and WAL on PGlite, isolated)`,
    ['impr./min', 'option', 'payload B/min', 'WAL B/min', 'WAL/day', 'ms p50 (PostgreSQL)', 'ms p50 (PGlite)'],
    rows,
  );
  printNotes(
    `geometry: ${fmtInt(GEOMETRY.bits)} bits (${fmtInt(Math.ceil(GEOMETRY.bits / 8))} B) a day, k = ${GEOMETRY.hashes}; readers' n0 = ${fmtInt(READER.initialCapacity)} (${fmtInt(bitmapBytes(scalableLevels(READER.initialCapacity, READER.errorRate), 1))} B each; 10× at note 3's n0 = 100,000)`,
    'journal: rolling and per-reader journals together; the other options write one strategy each (full/chunks: rolling only; changed readers: per-reader only)',
    `journal payload that is readers' (the rest is the rolling day's): ${RATES.map((r) => `${fmtInt(readerShare.get(`PGlite|${r}`) ?? 0)} B/min at ${fmtInt(r)}/min`).join(', ')}`,
    `today's rolling filter starts at noon, ${fmtInt(500_000)} members in (28 % of its bits set), so the bitmap options write what a real mid-day bitmap weighs`,
  );
}

/** Restore of the chosen option: a lost shard (6 compacted past days + today's rows) and readers. */
async function restoreFigures(sql: Sql, redis: RedisClient): Promise<void> {
  const prefix = uniquePrefix('ckpt');
  try {
    const r = await rig(sql, redis, prefix);
    await sql.exec(`TRUNCATE seen_checkpoints CASCADE`);
    const now = T0 + 12 * 60 * MINUTE_MS;
    r.clock.set(now);
    // six past days at capacity (half their bits set), compacted bases as a checkpoint leaves them
    for (let d = 1; d < 7; d++) {
      const subject = daySubject(LAYOUT, 0, dayStamp(now - d * DAY_MS));
      await sql.query(`INSERT INTO seen_checkpoints (subject, expires_at, at_ms, bitmap) VALUES ($1, $2, 0, $3)`, [
        subject,
        now + DAY_MS,
        randomBitmap(GEOMETRY.bits, 0.5),
      ]);
    }
    const next = prng(7);
    for (let m = 0; m < 10; m++) {
      r.clock.set(now + m * MINUTE_MS);
      await markMinute(r, 10_000, next, now + m * MINUTE_MS);
      await r.cp.checkpoint();
    }
    const probe = Array.from({ length: 500 }, (_, i) => `probe${i}`);
    const subjects = Array.from({ length: 7 }, (_, d) => daySubject(LAYOUT, 0, dayStamp(now - d * DAY_MS)));
    const rows: string[][] = [];
    for (let round = 0; round < 3; round++) {
      let t = performance.now();
      await r.store.load(subjects);
      const read = performance.now() - t;
      await dropPrefix(redis, prefix);
      t = performance.now();
      await r.rolling.seen('u1', probe, now + 10 * MINUTE_MS);
      const lost = performance.now() - t;
      t = performance.now();
      await r.rolling.seen('u1', probe, now + 10 * MINUTE_MS);
      const warm = performance.now() - t;
      t = performance.now();
      await r.readerSeen.seen('u1', probe, now + 10 * MINUTE_MS);
      const reader = performance.now() - t;
      // the baseline: read the 7 bitmaps from PostgreSQL and SET them
      await sql.exec(`TRUNCATE bench_full`);
      for (let d = 0; d < 7; d++)
        await upsert(sql, 'bench_full', ['subject', 'bitmap'], [[`d${d}`, randomBitmap(GEOMETRY.bits, 0.5)]]);
      t = performance.now();
      const bitmaps = await sql.query<{ subject: string; bitmap: Uint8Array }>(
        `SELECT subject, bitmap FROM bench_full`,
      );
      for (const bm of bitmaps) await redis.set(`${prefix}full:${bm.subject}`, Buffer.from(bm.bitmap));
      const full = performance.now() - t;
      rows.push([String(round + 1), fmtMs(lost), fmtMs(read), fmtMs(warm), fmtMs(reader), fmtMs(full)]);
    }
    const [today] = await sql.query<{ n: number | string; bytes: number | string }>(
      `SELECT count(*) AS n, coalesce(sum(octet_length(pairs)), 0) AS bytes FROM seen_checkpoint_log WHERE subject LIKE 'd:%'`,
    );
    printTable(
      'Restore after a Redis loss (a check of 500 candidates on the lost shard: 6 compacted past days + today)',
      [
        'round',
        'first check: restore + check, ms',
        'PostgreSQL read alone, ms',
        'next check, ms',
        'a reader: restore + check, ms',
        'baseline: read 7 bitmaps + SET, ms',
      ],
      rows,
    );
    const todayBytes = Number(today!.bytes);
    printNotes(
      `today: ${fmtInt(Number(today!.n))} journal rows, ${fmtInt(todayBytes)} B (10 minutes at 10,000/min; ` +
        `${todayBytes < GEOMETRY.bits / 8 ? 'below one bitmap: not compacted yet' : 'compacted when they outgrew the bitmap'})`,
    );
  } finally {
    await dropPrefix(redis, prefix);
  }
}

/**
 * What checkpoints add on the request path: `seen()` of 500 candidates and `markSeen()` of a page of 20,
 * each strategy with and without checkpoints, interleaved in the same run (the shard's epoch and the
 * readers' states exist, as in steady state: no restore is measured here).
 */
async function requestPathFigures(sql: Sql, redis: RedisClient): Promise<void> {
  const prefixes = [uniquePrefix('ckpt'), uniquePrefix('ckpt')];
  try {
    const [on, off] = await Promise.all(prefixes.map((prefix) => rig(sql, redis, prefix)));
    const plain = {
      rolling: new RedisSeenFilter(redis, off!.keys, LAYOUT, { days: 7 }),
      readerSeen: new RedisReaderSeenFilter(redis, off!.keys, READER),
    };
    await on!.cp.ensureShards(T0);
    const candidates = Array.from({ length: 500 }, (_, i) => `cand${i}`);
    const rows: string[][] = [];
    for (const strategy of ['rolling', 'readerSeen'] as const) {
      const filters = { 'with checkpoints': on![strategy], without: plain[strategy] };
      for (const f of Object.values(filters)) await f.markSeen('u1', candidates.slice(0, 100), T0);
      const samples = new Map<string, { seen: number[]; mark: number[] }>();
      for (let i = 0; i < 600; i++) {
        const order = Object.entries(filters);
        if (i % 2 === 1) order.reverse(); // neither always goes first
        for (const [name, f] of order) {
          const s = samples.get(name) ?? { seen: [], mark: [] };
          samples.set(name, s);
          let t = performance.now();
          await f.seen('u1', candidates, T0 + i);
          s.seen.push(performance.now() - t);
          t = performance.now();
          await f.markSeen(
            'u1',
            Array.from({ length: PAGE }, (_, j) => `m${i}_${j}`),
            T0 + i,
          );
          s.mark.push(performance.now() - t);
        }
      }
      for (const [name, s] of samples) {
        const [seen, mark] = [summarize(s.seen), summarize(s.mark)];
        rows.push([
          strategy === 'rolling' ? 'rolling' : 'per_reader',
          name,
          fmtMs(seen.p50),
          fmtMs(seen.p99),
          fmtMs(mark.p50),
          fmtMs(mark.p99),
        ]);
      }
    }
    printTable(
      'Request path with and without checkpoints (600 interleaved rounds; a reader with 100 to 12,100 members)',
      ['strategy', 'filter', 'seen(500) p50 ms', 'p99', 'markSeen(20) p50 ms', 'p99'],
      rows,
    );
  } finally {
    for (const prefix of prefixes) await dropPrefix(redis, prefix);
  }
}

/** The benchmark (also run by `npm run bench`). */
export async function run(): Promise<void> {
  printTitle('Seen checkpoints: journal vs bitmaps (bench/seen-checkpoint.ts)');
  await withCleanup(async (cleanup) => {
    const redis = openRedis();
    cleanup.add(() => redis.quit());
    const lite = await openPglite('memory://');
    cleanup.add(() => lite.close());
    const schema = uniqueSchema();
    const server = await openPostgres(BENCH_DATABASE_URL, { schema });
    cleanup.add(() => dropSchema(schema));
    cleanup.add(() => server.close());
    const onLite = await runEngine('PGlite', lite, redis);
    const onServer = await runEngine('PostgreSQL', server, redis);
    printOptions(onLite, onServer);
    await requestPathFigures(server, redis);
    await restoreFigures(server, redis);
  });
}

runIfMain(import.meta.url, run);
