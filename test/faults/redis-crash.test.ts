/**
 * Fault: a Redis crash without persistence (issue 10 item 2, reproduced and kept fixed). A redis-server
 * of the test's own, without persistence,
 * is crashed (`SHUTDOWN NOSAVE`) while readers are served, and restarted empty on the same port.
 * Two serving processes (their own Redis clients, PostgreSQL pools and checkpoint timers) serve 16
 * readers through both seen strategies and checkpoint at the same time. The promise: after the loss
 * no reader is served again an item it was served before the last checkpoint; only items first
 * served after it may come back (the bound, asserted). A process started on the empty Redis restores
 * it before serving; and the whole app (openFreshet, the for-you feed) keeps the promise across a
 * graceful close (final checkpoint), a Redis crash and a restart. And a server that keeps running
 * through the crash (HTTP, PostgreSQL of its own database, default deadlines) answers only 503 / 50301
 * while Redis is down, serves again by itself within ~1 s of Redis coming back, and repeats nothing
 * served before its last checkpoint.
 */
import { hourlyItems } from '../support/items.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/compose/migrations.js';
import { loadConfig } from '../../src/compose/config.js';
import { openFreshet } from '../../src/compose/open.js';
import { DAY_MS, HOUR_MS, ManualClock, dayStamp } from '../../src/kernel/clock.js';
import { closeRedis, createRedis, type RedisClient } from '../../src/kernel/redis/client.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import type { ReaderSeenSettings, SeenStrategy } from '../../src/kernel/reader-seen-filter.js';
import type { SeenFilter } from '../../src/kernel/seen-filter.js';
import { wireSeen, type SeenSettings, type SeenWiring } from '../../src/seen/wire.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { TEST_DATABASE_URL, uniquePrefix, uniqueSchema } from '../support/env.js';
import { crash, crashAndRestart as crashRedis, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { StatusTally, ownDatabase, openFaultApp, printFigures, until } from '../support/faults.js';

const T0 = Date.UTC(2026, 2, 6, 12);
const SEEN: SeenSettings = {
  days: 7,
  capacityPerDay: 20_000,
  windowRate: 0.01,
  shards: 2,
  shardCapacity: 1_000_000,
  cacheBytes: 64 * 2 ** 20,
  checkpointMs: 3_600_000,
};
const READER: ReaderSeenSettings = { initialCapacity: 1_000, errorRate: 0.01, ttlMs: 30 * DAY_MS };
const POOL = Array.from({ length: 300 }, (_, i) => `item_${i}`);
const READERS = Array.from({ length: 16 }, (_, i) => `reader_${i}`);
const PAGE = 10;
const STRATEGIES: SeenStrategy[] = ['rolling', 'per_reader'];

let server: RedisServer;
const schema = uniqueSchema();
const dataDir = mkdtempSync(join(tmpdir(), 'freshet-seen-loss-'));
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
  const admin = await openPostgres(TEST_DATABASE_URL);
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Crashes the Redis (no save, no persistence) and starts an empty one on the same port. */
async function crashAndRestart(): Promise<void> {
  server = await crashRedis(server);
}

/** Waits until a client that lived through the crash reconnected. */
async function reconnected(redis: RedisClient): Promise<void> {
  await expect.poll(() => redis.ping().catch(() => 'down'), { timeout: 10_000, interval: 20 }).toBe('PONG');
}

/** One serving process: its own Redis client and PostgreSQL pool, the real wiring (restore at start). */
interface Proc {
  redis: RedisClient;
  sql: Sql;
  seen: SeenWiring;
  close(): Promise<void>;
}

async function startProcess(prefix: string): Promise<Proc> {
  const redis = createRedis({ url: server.url });
  redis.on('error', () => undefined); // the crash: ioredis reconnects by itself
  const sql = await openPostgres(TEST_DATABASE_URL, { schema });
  await migrate(sql);
  const keys = new Keys(prefix, SEEN.shards);
  const connectBlocking = (): RedisClient => {
    throw new Error('not used');
  };
  const seen = await wireSeen(SEEN, READER, {
    sql,
    redis: { redis, keys, connectBlocking },
    dataDir,
    log: pino({ level: 'silent' }),
    registry: new Registry(),
    clock: new ManualClock(T0),
  });
  return {
    redis,
    sql,
    seen,
    close: async () => {
      await seen.close();
      await closeRedis(redis);
      await sql.close();
    },
  };
}

/** A feed's page: the first `PAGE` items of the pool the reader has not seen, marked before it is returned. */
async function servePage(filter: SeenFilter, reader: string, nowMs: number): Promise<string[]> {
  const seen = await filter.seen(reader, POOL, nowMs);
  const page = POOL.filter((_, i) => !seen[i]).slice(0, PAGE);
  await filter.markSeen(reader, page, nowMs);
  return page;
}

/** Serves `pages` pages to every reader in both strategies, alternating the processes. */
async function serve(procs: Proc[], pages: number, nowMs: number, into: Map<string, string[]>): Promise<void> {
  for (let p = 0; p < pages; p++) {
    await Promise.all(
      READERS.flatMap((reader, r) =>
        STRATEGIES.map(async (strategy) => {
          const proc = procs[(p + r) % procs.length]!;
          const page = await servePage(proc.seen.seenFor(strategy), reader, nowMs + p);
          const key = `${strategy}:${reader}`;
          into.set(key, [...(into.get(key) ?? []), ...page]);
        }),
      ),
    );
  }
}

describe('a Redis crash without persistence while readers are served', () => {
  it('re-serves no item served before the last checkpoint, in either strategy, with two processes checkpointing at once', async () => {
    const prefix = uniquePrefix();
    const procs = [await startProcess(prefix), await startProcess(prefix)];
    try {
      const before = new Map<string, string[]>();
      await serve(procs, 2, T0 - DAY_MS, before); // yesterday: a past day, cached by the rolling filter
      await serve(procs, 3, T0, before);
      await Promise.all(procs.map((p) => p.seen.checkpointer!.checkpoint()));
      const after = new Map<string, string[]>();
      await serve(procs, 2, T0 + HOUR_MS, after); // first served after the last checkpoint: may come back

      await crashAndRestart();
      for (const p of procs) await reconnected(p.redis);
      const again = new Map<string, string[]>();
      await serve(procs, 4, T0 + 2 * HOUR_MS, again);

      let repeats = 0;
      for (const [key, served] of again) {
        const old = new Set(before.get(key));
        const recent = new Set(after.get(key));
        expect(
          served.filter((id) => old.has(id)),
          key,
        ).toEqual([]);
        expect(new Set(served).size, key).toBe(served.length);
        const back = served.filter((id) => recent.has(id));
        expect(back.length, key).toBeLessThanOrEqual(recent.size);
        repeats += back.length;
      }
      // the bound is not hypothetical: what Redis lost since the checkpoint is served again
      expect(repeats).toBeGreaterThan(0);
      expect(repeats).toBeLessThanOrEqual(READERS.length * STRATEGIES.length * 2 * PAGE);
    } finally {
      for (const p of procs) await p.close();
    }
  });

  it('a process started on an empty Redis restores the checkpointed days before it serves', async () => {
    const prefix = uniquePrefix();
    const first = await startProcess(prefix);
    const before = new Map<string, string[]>();
    try {
      await serve([first], 2, T0, before);
    } finally {
      await first.close(); // the final checkpoint
    }
    await crashAndRestart();
    const second = await startProcess(prefix);
    try {
      const keys = new Keys(prefix);
      for (let shard = 0; shard < SEEN.shards; shard++) {
        const sk = keys.seenDays(SEEN.shards, shard);
        expect(await second.redis.exists(sk.epoch(), sk.day(dayStamp(T0)))).toBe(2);
      }
      const again = new Map<string, string[]>();
      await serve([second], 2, T0 + HOUR_MS, again);
      for (const [key, served] of again) {
        const old = new Set(before.get(key));
        expect(
          served.filter((id) => old.has(id)),
          key,
        ).toEqual([]);
      }
    } finally {
      await second.close();
    }
  });
});

describe('the app across a graceful close, a Redis crash and a restart', () => {
  for (const strategy of STRATEGIES) {
    it(`the for-you feed (${strategy}) does not repeat a page`, async () => {
      const prefix = uniquePrefix();
      const config = loadConfig({
        LOG_LEVEL: 'silent',
        FRESHET_DATA_DIR: dataDir,
        FRESHET_SERVICE_KEY: 'loss-service-key-0123456789',
        FRESHET_SECRET: 'loss-secret-0123456789abcdef',
        FRESHET_KEY_PREFIX: prefix,
        FRESHET_REDIS_URL: server.url,
        FRESHET_SEEN_CAPACITY_PER_DAY: '10000',
        FRESHET_READER_SEEN_CAPACITY: '1000',
        FRESHET_FOR_YOU_SEEN: strategy,
      });
      const open = async () =>
        openFreshet(config, {
          clock: new ManualClock(T0),
          sql: await openPostgres(TEST_DATABASE_URL, { schema }),
          defaultMetrics: false,
        });
      const first = await open();
      let before: string[];
      try {
        const items = hourlyItems(strategy, 30, T0);
        await first.content.upsertItems(items, T0);
        before = (await first.forYou.page('alice', 'refresh', 10, T0)).items.map((i) => i.id);
        expect(before).toHaveLength(10);
      } finally {
        await first.close();
      }
      await crashAndRestart();
      const second = await open();
      try {
        const after = (await second.forYou.page('alice', 'refresh', 10, T0 + HOUR_MS)).items.map((i) => i.id);
        expect(after).toHaveLength(10);
        expect(after.filter((id) => before.includes(id))).toEqual([]);
      } finally {
        await second.close();
      }
    });
  }
});

/** How long Redis stays down in the HTTP test, ms. */
const DOWN_MS = 1_500;

describe('a server running through the crash (HTTP, default deadlines)', () => {
  it('answers only 503 / 50301 while Redis is down, recovers by itself, repeats nothing served before the checkpoint, loses no item', async () => {
    const db = await ownDatabase();
    const t = await openFaultApp({ FRESHET_REDIS_URL: server.url, FRESHET_DATABASE_URL: db.url });
    try {
      const ids = Array.from({ length: 80 }, (_, i) => `c${i}`);
      const published = await t.request({
        method: 'POST',
        url: '/v1/items',
        payload: ids.map((id, i) => ({
          id,
          author_id: 'a',
          title: id,
          published_at: Math.floor((T0 - i * 60_000) / 1000),
        })),
      });
      expect(published.status).toBe(200);
      const readers = Array.from({ length: 8 }, (_, i) => `r${i}`);
      const page = async (reader: string) => {
        const res = await t.request({
          method: 'POST',
          url: '/v1/feeds/for-you',
          payload: { action: 'load_more', limit: 5 },
          headers: { 'x-freshet-reader': reader },
        });
        return res;
      };
      const served = async (rounds: number, into: Map<string, string[]>) => {
        for (let p = 0; p < rounds; p++) {
          for (const reader of readers) {
            const res = await page(reader);
            expect(res.status, res.msg).toBe(200);
            const got = (res.body.data as { items: { id: string }[] }).items.map((i) => i.id);
            into.set(reader, [...(into.get(reader) ?? []), ...got]);
          }
        }
      };
      const before = new Map<string, string[]>();
      await served(2, before);
      await t.f.seenCheckpointer!.checkpoint();
      const after = new Map<string, string[]>();
      await served(1, after); // first served after the checkpoint: may come back

      const tally = new StatusTally();
      await crash(server);
      const crashedAt = performance.now();
      // Redis stays down for DOWN_MS while requests keep coming (the requests are the wait), then an empty one starts
      while (performance.now() - crashedAt < DOWN_MS) {
        const res = await page('r0');
        tally.add(res.status);
        if (res.status !== 200) expect(res.body).toMatchObject({ code: 50301, data: null });
        expect(res.ms).toBeLessThan(2_000);
      }
      server = await startRedisServer([], { port: server.port });
      const upAt = performance.now();
      const recoveryMs = await until(async () => {
        const res = await page('r1');
        tally.add(res.status);
        if (res.status !== 200) expect(res.body).toMatchObject({ code: 50301, data: null });
        return res.status === 200;
      }, 10_000);
      const windowMs = performance.now() - crashedAt;

      const again = new Map<string, string[]>();
      await served(2, again);
      let repeats = 0;
      let backFromAfter = 0;
      for (const [reader, got] of again) {
        const old = new Set(before.get(reader));
        repeats += got.filter((id) => old.has(id)).length;
        const recent = new Set(after.get(reader));
        backFromAfter += got.filter((id) => recent.has(id)).length;
      }
      let lost = 0;
      for (const id of ids) if ((await t.request({ method: 'GET', url: `/v1/items/${id}` })).status !== 200) lost++;
      expect((await t.request({ method: 'GET', url: '/readyz' })).status).toBe(200);

      printFigures('redis crash', {
        redis_down_ms: upAt - crashedAt,
        error_window_ms: windowMs,
        recovery_ms: recoveryMs,
        errors: tally.toString(),
        repeats_before_checkpoint: repeats,
        repeats_after_checkpoint: backFromAfter,
        items_lost: lost,
      });
      expect(tally.serverErrorsBut(503)).toBe(0);
      expect(tally.counts['503'] ?? 0).toBeGreaterThan(0); // the outage was seen, as 503
      expect(recoveryMs).toBeLessThan(2_000);
      expect(repeats).toBe(0);
      expect(lost).toBe(0);
    } finally {
      await t.close();
      await db.drop();
    }
  });
});
