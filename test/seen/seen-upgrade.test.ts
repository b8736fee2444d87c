/**
 * Upgrading to capacity-sized shards and small per-reader filters (issue 20) without a repeat, and
 * changing the seen settings later without one: what the previous version left behind — its single-
 * shard day keys (`bf:{global-121}:YYYYMMDD`, versions, journals), its per-reader filters of signature
 * `100000:0.01:s2:r0.5` (one string), its PostgreSQL checkpoints and its snapshot files — is read by
 * this version until it leaves the window or the reader goes idle, through the real wiring
 * (src/seen/wire.ts). The state is written as that version wrote it (test/support/seen-legacy.ts).
 *
 * The promise checked everywhere: a reader is never served an item it was served before, while the
 * filter that remembers it lives (the 7-day window for the rolling filter, the reader's activity for
 * the per-reader one).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/compose/migrations.js';
import { DAY_MS, HOUR_MS, ManualClock, dayStamp } from '../../src/kernel/clock.js';
import { Keys, shardOf } from '../../src/kernel/redis/keys.js';
import type { ReaderSeenSettings } from '../../src/kernel/reader-seen-filter.js';
import type { SeenFilter } from '../../src/kernel/seen-filter.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { dayStartMs, hashPairs, packPairs, seenDayEnd } from '../../src/seen/bloom.js';
import { daySubject, legacyLayout } from '../../src/seen/layout.js';
import { PostgresSeenCheckpoints, type CheckpointAppend } from '../../src/seen/postgres-seen-checkpoints.js';
import { readerSubject } from '../../src/seen/seen-fold.js';
import { geometrySignature } from '../../src/seen/scalable-bloom.js';
import { wireSeen, type SeenSettings, type SeenWiring } from '../../src/seen/wire.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../support/env.js';
import { deleteByPrefix, fileRedis } from '../support/redis.js';
import {
  OLD_READER_SIGNATURE,
  markLegacyDay,
  oldDayBitmap,
  putOldReader,
  writeOldReaderSnapshot,
  writeOldRollingSnapshot,
} from '../support/seen-legacy.js';

const { redis, nextPrefix } = fileRedis();
/** Friday 2026-03-06 09:00 UTC: the upgrade. */
const T0 = Date.UTC(2026, 2, 6, 9);
/** This version's settings: 4 shards a day; the previous version ran one shard of the same capacity. */
const SEEN: SeenSettings = {
  days: 7,
  capacityPerDay: 40_000,
  windowRate: 0.01,
  shards: 4,
  shardCapacity: 1_000_000,
  legacyShards: 1,
  cacheBytes: 64 * 2 ** 20,
  checkpointMs: 0,
};
/** The previous version's day filter: one shard sized for the whole day. */
const OLD_DAY = legacyLayout(SEEN, 1)!.geometry;
/** This version's per-reader settings (n0 100); the old filters were written at n0 100,000. */
const READER: ReaderSeenSettings = { initialCapacity: 100, errorRate: 0.01, ttlMs: 30 * DAY_MS };
const OLD_READER: ReaderSeenSettings = { ...READER, initialCapacity: 100_000 };
const POOL = Array.from({ length: 400 }, (_, i) => `item_${i}`);
const READERS = Array.from({ length: 6 }, (_, i) => `reader_${i}`);
const PAGE = 10;

const schemas: string[] = [];
const dirs: string[] = [];
afterAll(async () => {
  const admin = await openPostgres(TEST_DATABASE_URL);
  for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await admin.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function database(): Promise<Sql> {
  const schema = uniqueSchema();
  schemas.push(schema);
  const sql = await openPostgres(TEST_DATABASE_URL, { schema });
  await migrate(sql);
  return sql;
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'freshet-seen-upgrade-'));
  dirs.push(d);
  return d;
}

/** The seen filters of one process of this version: on Redis under `prefix`, or in process in `dataDir`. */
async function open(
  sql: Sql,
  where: { prefix: string } | { dataDir: string },
  settings: Partial<SeenSettings> = {},
  nowMs = T0,
): Promise<SeenWiring> {
  const onRedis = 'prefix' in where;
  return wireSeen({ ...SEEN, ...settings }, READER, {
    sql,
    redis: onRedis
      ? {
          redis,
          keys: new Keys(where.prefix),
          connectBlocking: () => {
            throw new Error('not used');
          },
        }
      : null,
    dataDir: onRedis ? tempDir() : where.dataDir,
    log: pino({ level: 'silent' }),
    registry: new Registry(),
    clock: new ManualClock(nowMs),
  });
}

/** What the previous version served: per reader, a page a day on the 4 days up to the upgrade (today included). */
function servedBefore(): Map<string, string[][]> {
  const out = new Map<string, string[][]>();
  READERS.forEach((reader, r) => {
    out.set(
      reader,
      [3, 2, 1, 0].map((d) => POOL.slice((r * 4 + d) * PAGE, (r * 4 + d + 1) * PAGE)),
    );
  });
  return out;
}

/** A feed's page: the first `PAGE` items of the pool the filter says the reader has not seen, marked. */
async function servePage(filter: SeenFilter, reader: string, nowMs: number): Promise<string[]> {
  const seen = await filter.seen(reader, POOL, nowMs);
  const page = POOL.filter((_, i) => !seen[i]).slice(0, PAGE);
  await filter.markSeen(reader, page, nowMs);
  return page;
}

/**
 * Serves pages to every reader at each of `times` and checks none repeats an item served before (by
 * the previous version or since); returns every item served per reader.
 */
async function serveWithoutRepeats(
  filter: SeenFilter,
  before: Map<string, string[]>,
  times: readonly number[],
): Promise<Map<string, string[]>> {
  const served = new Map([...before].map(([r, items]) => [r, [...items]]));
  for (const at of times) {
    for (const reader of READERS) {
      const page = await servePage(filter, reader, at);
      const earlier = new Set(served.get(reader));
      expect(
        page.filter((id) => earlier.has(id)),
        `${reader} at ${new Date(at).toISOString()}`,
      ).toEqual([]);
      expect(page).toHaveLength(PAGE);
      served.get(reader)!.push(...page);
    }
  }
  return served;
}

const flat = (m: Map<string, string[][]>) => new Map([...m].map(([r, pages]) => [r, pages.flat()]));

describe('upgrading the Redis seen filters', () => {
  it('reads the single-shard day keys the previous version wrote until they leave the window, and never writes them', async () => {
    const prefix = nextPrefix();
    const keys = new Keys(prefix);
    const before = servedBefore();
    for (const [reader, pages] of before) {
      for (const [d, page] of pages.entries()) {
        await markLegacyDay(redis, keys, OLD_DAY, 1, reader, page, T0 - (3 - d) * DAY_MS - HOUR_MS, true);
      }
    }
    const legacyToday = keys.legacySeenDays(1, 0);
    const version = await redis.get(legacyToday.version(dayStamp(T0)));
    const seen = await open(await database(), { prefix });
    try {
      const served = await serveWithoutRepeats(seen.rolling, flat(before), [
        T0,
        T0 + 2 * HOUR_MS,
        T0 + DAY_MS,
        T0 + 3 * DAY_MS,
      ]);
      // this version never writes the old keys: today's old bitmap is as the previous version left it
      expect(await redis.get(legacyToday.version(dayStamp(T0)))).toBe(version);
      // new marks go to the shards of this version's layout (4 shards)
      const today = keys.seenDays(4, shardOf('reader_0', 4)).day(dayStamp(T0));
      expect(await redis.exists(today)).toBe(1);
      // the oldest old day leaves the window at 00:00 UTC 7 days after it began: its items may be served again
      const gone = Date.UTC(2026, 2, 10); // 2026-03-03 + 7 days
      const answers = await seen.rolling.seen('reader_0', before.get('reader_0')![0]!, gone);
      expect(answers.filter(Boolean).length).toBeLessThan(2);
      expect(await seen.rolling.seen('reader_0', served.get('reader_0')!.slice(-PAGE), gone)).toEqual(
        Array(PAGE).fill(true),
      );
    } finally {
      await seen.close();
      await deleteByPrefix(redis, prefix);
    }
  });

  it('reads and keeps marking per-reader filters of the old geometry; new readers and filters that went idle take the new one', async () => {
    const prefix = nextPrefix();
    const keys = new Keys(prefix);
    const before = servedBefore();
    for (const [reader, pages] of before) await putOldReader(redis, keys, OLD_READER, reader, pages, T0 - HOUR_MS);
    const seen = await open(await database(), { prefix });
    try {
      const served = await serveWithoutRepeats(seen.readerSeen, flat(before), [
        T0,
        T0 + DAY_MS,
        T0 + 10 * DAY_MS,
        T0 + 25 * DAY_MS,
      ]);
      // still the old geometry (one string, 164 KB), with every mark since in it
      const d = await seen.readerSeen.describe('reader_1', T0 + 25 * DAY_MS);
      expect(d).toMatchObject({ signature: OLD_READER_SIGNATURE, members: served.get('reader_1')!.length });
      expect(await redis.exists(keys.readerSeenLevel('reader_1', 1))).toBe(0);
      // a new reader starts small
      await seen.readerSeen.markSeen('newcomer', ['x'], T0);
      expect(await seen.readerSeen.describe('newcomer', T0)).toMatchObject({
        signature: geometrySignature(100, 0.01),
        bytes: 149,
      });
      // an old filter idle for the TTL is gone, and starts again under the new geometry
      const later = T0 + 25 * DAY_MS + READER.ttlMs;
      await seen.readerSeen.markSeen('reader_2', ['y'], later);
      expect(await seen.readerSeen.describe('reader_2', later)).toMatchObject({
        signature: geometrySignature(100, 0.01),
        members: 1,
      });
    } finally {
      await seen.close();
      await deleteByPrefix(redis, prefix);
    }
  });

  it('restores, after a Redis loss, the days and readers the previous version checkpointed', async () => {
    const prefix = nextPrefix();
    const sql = await database();
    const store = new PostgresSeenCheckpoints(sql);
    const before = servedBefore();
    // the previous version's checkpoints: a journal row per old day, one per reader (its subjects, its geometry)
    const legacy = legacyLayout(SEEN, 1)!;
    const rows: CheckpointAppend[] = [];
    for (const [reader, pages] of before) {
      pages.forEach((page, d) => {
        const at = T0 - (3 - d) * DAY_MS - HOUR_MS;
        rows.push({
          subject: daySubject(legacy, 0, dayStamp(at)),
          expiresAt: seenDayEnd(at, 7),
          atMs: 0,
          pairs: packPairs(hashPairs(reader, page)),
        });
      });
      rows.push({
        subject: readerSubject(OLD_READER_SIGNATURE, reader),
        expiresAt: T0 + READER.ttlMs,
        atMs: T0 - HOUR_MS,
        pairs: packPairs(hashPairs(reader, pages.flat())),
      });
    }
    await store.append(rows);
    await sql.query(`DELETE FROM seen_checkpoints WHERE subject = 'r-signatures'`); // that version kept no list
    expect(daySubject(legacy, 0, '20260306')).toBe(`d:m${OLD_DAY.bits}k${OLD_DAY.hashes}s1:0:20260306`);
    const seen = await open(sql, { prefix }, { checkpointMs: 3_600_000 }); // Redis is empty: a restore
    try {
      await serveWithoutRepeats(seen.rolling, flat(before), [T0, T0 + DAY_MS]);
      await serveWithoutRepeats(seen.readerSeen, flat(before), [T0, T0 + DAY_MS]);
      expect(await seen.readerSeen.describe('reader_3', T0 + DAY_MS)).toMatchObject({
        signature: OLD_READER_SIGNATURE,
      });
    } finally {
      await seen.close();
      await deleteByPrefix(redis, prefix);
    }
  });
});

describe('upgrading the in-process seen filters (embedded default)', () => {
  it('reads both snapshot files the previous version wrote, and keeps them across the next restart', async () => {
    const dataDir = tempDir();
    const before = servedBefore();
    const names = new Keys('');
    const days = new Map<string, [string, string][]>();
    for (const [reader, pages] of before) {
      pages.forEach((page, d) => {
        const key = names.legacySeenDays(1, 0).day(dayStamp(T0 - (3 - d) * DAY_MS));
        days.set(key, [...(days.get(key) ?? []), ...page.map((i): [string, string] => [reader, i])]);
      });
    }
    await writeOldRollingSnapshot(
      join(dataDir, 'seen-filters.bin'),
      OLD_DAY,
      1,
      [...days].map(([key, members]) => ({
        key,
        bitmap: oldDayBitmap(OLD_DAY, members),
        expiresAt: seenDayEnd(dayStartMs(key.slice(-8)), 7),
      })),
    );
    await writeOldReaderSnapshot(join(dataDir, 'reader-seen-filters.bin'), OLD_READER, before, T0 - HOUR_MS);
    const sql = await database();
    let seen = await open(sql, { dataDir });
    let rolling: Map<string, string[]>;
    let perReader: Map<string, string[]>;
    try {
      rolling = await serveWithoutRepeats(seen.rolling, flat(before), [T0, T0 + DAY_MS]);
      perReader = await serveWithoutRepeats(seen.readerSeen, flat(before), [T0, T0 + DAY_MS]);
    } finally {
      await seen.close(); // writes this version's formats
    }
    seen = await open(sql, { dataDir });
    try {
      await serveWithoutRepeats(seen.rolling, rolling, [T0 + 2 * DAY_MS]);
      await serveWithoutRepeats(seen.readerSeen, perReader, [T0 + 2 * DAY_MS]);
      expect((await seen.readerSeen.describe('reader_4', T0 + 2 * DAY_MS)).signature).toBe(OLD_READER_SIGNATURE);
    } finally {
      await seen.close();
    }
  });
});

describe('changing the seen settings later', () => {
  it('keeps each day under the layout it began with: a capacity that needs more shards never causes a repeat', async () => {
    const prefix = nextPrefix();
    const sql = await database();
    const first = await open(sql, { prefix }, { legacyShards: 0, checkpointMs: 3_600_000 });
    let served: Map<string, string[]>;
    try {
      served = await serveWithoutRepeats(first.rolling, new Map(READERS.map((r) => [r, []])), [
        T0 - 2 * DAY_MS,
        T0 - DAY_MS,
        T0,
      ]);
      await first.checkpointer!.checkpoint();
    } finally {
      await first.close();
    }
    // 10× the capacity at a shard capacity of 50,000: 4 shards become 40, each sized differently
    const bigger = { legacyShards: 0, capacityPerDay: 2_000_000, shardCapacity: 50_000, checkpointMs: 3_600_000 };
    const second = await open(sql, { prefix }, bigger);
    try {
      served = await serveWithoutRepeats(second.rolling, served, [T0 + HOUR_MS]);
      // today began under 4 shards: it stays so; tomorrow, no process has touched yet, takes 40
      expect(await redis.get(new Keys(prefix).seenLayout(dayStamp(T0)))).toMatch(/^n4c/);
      served = await serveWithoutRepeats(second.rolling, served, [T0 + DAY_MS]);
      expect(await redis.get(new Keys(prefix).seenLayout(dayStamp(T0 + DAY_MS)))).toMatch(/^n40c/);
      // and after Redis loses everything (day layouts included), the checkpoints give each day its layout back
      await second.checkpointer!.checkpoint();
      await deleteByPrefix(redis, prefix);
    } finally {
      await second.close();
    }
    const third = await open(sql, { prefix }, bigger, T0 + DAY_MS + HOUR_MS);
    try {
      await serveWithoutRepeats(third.rolling, served, [T0 + DAY_MS + HOUR_MS]);
      expect(await redis.get(new Keys(prefix).seenLayout(dayStamp(T0)))).toMatch(/^n4c/);
    } finally {
      await third.close();
      await deleteByPrefix(redis, prefix);
    }
  });
});
