/**
 * The rolling seen filters' day layouts through the real wiring (src/seen/wire.ts): a change of the
 * seen settings never makes a reader see an item again (each day keeps the layout it began with), and
 * every capacity the operations guide plans for (docs/operations.md, "Capacity planning: the seen
 * filters") starts on Redis with shard keys of at most 1 MiB.
 *
 * The promise checked: a reader is never served an item it was served before, while the filter that
 * remembers it lives (the 7-day window).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { migrate } from '../../src/compose/migrations.js';
import { DAY_MS, HOUR_MS, ManualClock, dayStamp } from '../../src/kernel/clock.js';
import { Keys, shardOf } from '../../src/kernel/redis/keys.js';
import type { ReaderSeenSettings } from '../../src/kernel/reader-seen-filter.js';
import type { SeenFilter } from '../../src/kernel/seen-filter.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { MAX_SHARD_BITS } from '../../src/seen/layout.js';
import { seenSettingsLayout, wireSeen, type SeenSettings, type SeenWiring } from '../../src/seen/wire.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../support/env.js';
import { deleteByPrefix, fileRedis } from '../support/redis.js';

const { redis, nextPrefix } = fileRedis();
/** Friday 2026-03-06 09:00 UTC. */
const T0 = Date.UTC(2026, 2, 6, 9);
/** 4 shards a day at first. */
const SEEN: SeenSettings = {
  days: 7,
  capacityPerDay: 40_000,
  windowRate: 0.01,
  shards: 4,
  shardCapacity: 1_000_000,
  cacheBytes: 64 * 2 ** 20,
  checkpointMs: 0,
};
const READER: ReaderSeenSettings = { initialCapacity: 100, errorRate: 0.01, ttlMs: 30 * DAY_MS };
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
  const d = mkdtempSync(join(tmpdir(), 'freshet-seen-layouts-'));
  dirs.push(d);
  return d;
}

/** The seen filters of one process on Redis under `prefix`, with its checkpoints in `sql`. */
async function open(sql: Sql, prefix: string, settings: Partial<SeenSettings> = {}, nowMs = T0): Promise<SeenWiring> {
  return wireSeen({ ...SEEN, ...settings }, READER, {
    sql,
    redis: {
      redis,
      keys: new Keys(prefix),
      connectBlocking: () => {
        throw new Error('not used');
      },
    },
    dataDir: tempDir(),
    log: pino({ level: 'silent' }),
    registry: new Registry(),
    clock: new ManualClock(nowMs),
  });
}

/** A feed's page: the first `PAGE` items of the pool the filter says the reader has not seen, marked. */
async function servePage(filter: SeenFilter, reader: string, nowMs: number): Promise<string[]> {
  const seen = await filter.seen(reader, POOL, nowMs);
  const page = POOL.filter((_, i) => !seen[i]).slice(0, PAGE);
  await filter.markSeen(reader, page, nowMs);
  return page;
}

/**
 * Serves pages to every reader at each of `times` and checks none repeats an item served before;
 * returns every item served per reader.
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

describe('changing the seen settings later', () => {
  it('keeps each day under the layout it began with: a capacity that needs more shards never causes a repeat', async () => {
    const prefix = nextPrefix();
    const sql = await database();
    const first = await open(sql, prefix, { checkpointMs: 3_600_000 });
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
    const bigger = { capacityPerDay: 2_000_000, shardCapacity: 50_000, checkpointMs: 3_600_000 };
    const second = await open(sql, prefix, bigger);
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
    const third = await open(sql, prefix, bigger, T0 + DAY_MS + HOUR_MS);
    try {
      await serveWithoutRepeats(third.rolling, served, [T0 + DAY_MS + HOUR_MS]);
      expect(await redis.get(new Keys(prefix).seenLayout(dayStamp(T0)))).toMatch(/^n4c/);
    } finally {
      await third.close();
      await deleteByPrefix(redis, prefix);
    }
  });
});

describe('the capacities the operations guide plans for', () => {
  // docs/operations.md "Capacity planning: the seen filters": 10 million readers × 200 a day, and the
  // largest accepted capacity, 16,384 shards of what 1 MiB holds at 1 % over 7 days (~10 billion a day)
  for (const [capacity, shards] of [
    [2_000_000_000, 3_249],
    [16_384 * 615_611, 16_384],
  ] as const) {
    it(`start on Redis at FRESHET_SEEN_CAPACITY_PER_DAY=${capacity}: ${shards} shard keys of at most 1 MiB`, async () => {
      // checkpoints off: a start's restore of every shard of an empty Redis is seen-checkpoint.test.ts's
      const config = loadConfig({ FRESHET_SEEN_CAPACITY_PER_DAY: String(capacity), FRESHET_SEEN_CHECKPOINT_S: '0' });
      const layout = seenSettingsLayout(config.seen);
      expect(layout.shards).toBe(shards);
      expect(layout.geometry.bits).toBeLessThanOrEqual(MAX_SHARD_BITS);
      const prefix = nextPrefix();
      const seen = await open(await database(), prefix, config.seen);
      try {
        // a reader's page is marked in its shard's key of today, created at its size (≤ 1 MiB), and never repeated
        const served = await serveWithoutRepeats(seen.rolling, new Map(READERS.map((r) => [r, []])), [
          T0,
          T0 + HOUR_MS,
        ]);
        expect([...served.values()].every((items) => items.length === 2 * PAGE)).toBe(true);
        const key = new Keys(prefix).seenDays(shards, shardOf('reader_0', shards)).day(dayStamp(T0));
        expect(await redis.strlen(key)).toBe(Math.ceil(layout.geometry.bits / 8));
        expect(await redis.strlen(key)).toBeLessThanOrEqual(2 ** 20);
      } finally {
        await seen.close();
        await deleteByPrefix(redis, prefix);
      }
    });
  }
});
