/**
 * The Redis seen filters checkpointed to PostgreSQL and restored after a loss (issue 10 item 2), on
 * the test Redis (a key prefix per test; "Redis lost everything" = every key under it deleted) and the
 * PostgreSQL server (a schema per test). The promise: a reader is never answered from a filter Redis
 * lost — everything marked before the last checkpoint is seen again; only later marks may be forgotten.
 * The real crash (SHUTDOWN NOSAVE of a redis-server of the test's own) is in faults/redis-crash.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/compose/migrations.js';
import { DAY_MS, HOUR_MS, ManualClock, dayStamp } from '../../src/kernel/clock.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { closeRedis, createRedis, type RedisClient } from '../../src/kernel/redis/client.js';
import { Keys, READER_DIRTY_SHARDS, shardOf } from '../../src/kernel/redis/keys.js';
import { DayLayouts } from '../../src/seen/day-layouts.js';
import { daySubject, fixedLayout, type SeenLayout } from '../../src/seen/layout.js';
import { geometrySignature, levelBytes, scalableGeometry } from '../../src/seen/scalable-bloom.js';
import { sizeWindow } from '../../src/seen/bloom.js';
import {
  PostgresSeenCheckpoints,
  type CheckpointAppend,
  type SubjectBytes,
} from '../../src/seen/postgres-seen-checkpoints.js';
import type { ReaderSeenSettings } from '../../src/kernel/reader-seen-filter.js';
import { RedisReaderSeenFilter } from '../../src/seen/redis-reader-seen-filter.js';
import { RedisSeenFilter } from '../../src/seen/redis-seen-filter.js';
import { SeenCheckpointer } from '../../src/seen/seen-checkpointer.js';
import { foldDay, foldReader, readerSubject } from '../../src/seen/seen-fold.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from '../support/env.js';
import { deleteByPrefix, fileRedis } from '../support/redis.js';
import { seenFilterContract } from '../contracts/seen-filter.contract.js';
import { readerSeenFilterContract } from '../contracts/reader-seen-filter.contract.js';

const { redis, commands, nextPrefix } = fileRedis();
const T0 = Date.UTC(2026, 2, 6, 12);
const G = sizeWindow(10_000, 0.01, 7);
const READER: ReaderSeenSettings = { initialCapacity: 1_000, errorRate: 0.01, ttlMs: 30 * DAY_MS };
const SIG = geometrySignature(READER.initialCapacity, READER.errorRate);
const ids = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}_${i}`);

/** A PostgreSQL schema of the test's own, migrated; dropped after the file. */
const schemas: string[] = [];
const pools: Sql[] = [];
async function database(): Promise<Sql> {
  const schema = uniqueSchema();
  schemas.push(schema);
  const sql = await openPostgres(TEST_DATABASE_URL, { schema });
  pools.push(sql);
  await migrate(sql);
  return sql;
}
afterAll(async () => {
  for (const sql of pools) await sql.close();
  const admin = await openPostgres(TEST_DATABASE_URL);
  for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await admin.close();
});

/** A store whose next append fails (a PostgreSQL outage in the middle of a checkpoint). */
class FlakyStore extends PostgresSeenCheckpoints {
  failNext = false;
  override append(rows: readonly CheckpointAppend[]): Promise<Map<string, SubjectBytes>> {
    if (!this.failNext) return super.append(rows);
    this.failNext = false;
    return Promise.reject(new Error('PostgreSQL went away'));
  }
}

interface Process {
  keys: Keys;
  layout: SeenLayout;
  cp: SeenCheckpointer;
  rolling: RedisSeenFilter;
  readerSeen: RedisReaderSeenFilter;
  store: FlakyStore;
}

/** One serving process's seen filters with checkpoints, over `client`, under `prefix`. */
function process(
  sql: Sql,
  prefix: string,
  opts: { client?: RedisClient; shards?: number; leaseMs?: number } = {},
): Process {
  const client = opts.client ?? redis;
  const keys = new Keys(prefix);
  const layout = fixedLayout(G, opts.shards ?? 1);
  const store = new FlakyStore(sql);
  const cp = new SeenCheckpointer({
    redis: client,
    keys,
    store,
    dayLayouts: new DayLayouts(client, keys, layout, 7),
    reader: READER,
    clock: new ManualClock(T0),
    log: silentLogger,
    leaseMs: opts.leaseMs,
  });
  return {
    keys,
    layout,
    cp,
    store,
    rolling: new RedisSeenFilter(client, keys, layout, { days: 7, checkpoints: cp }),
    readerSeen: new RedisReaderSeenFilter(client, keys, READER, { checkpoints: cp }),
  };
}

// With checkpoints on, both adapters still keep their port's whole contract (one round trip per call
// included: a shard with its epoch needs no restore; a reader's state, once restored, needs none).
seenFilterContract('redis with checkpoints', async (g) => {
  const sql = await database();
  const keys = new Keys(nextPrefix());
  const layout = fixedLayout(g);
  const cp = new SeenCheckpointer({
    redis,
    keys,
    store: new PostgresSeenCheckpoints(sql),
    dayLayouts: new DayLayouts(redis, keys, layout, g.days),
    reader: READER,
    clock: new ManualClock(T0),
    log: silentLogger,
  });
  await cp.ensureShards(T0);
  const filter = new RedisSeenFilter(redis, keys, layout, { days: g.days, checkpoints: cp });
  return {
    filter,
    cleanup: async () => void (await deleteByPrefix(redis, keys.prefix)),
    dayTtlMs: async (reader, now) => {
      const ttl = await redis.pttl(await filter.dayKey(reader, now));
      return ttl < 0 ? null : ttl;
    },
    commands,
  };
});

readerSeenFilterContract('redis with checkpoints', async (s) => {
  const sql = await database();
  const keys = new Keys(nextPrefix());
  const cp = new SeenCheckpointer({
    redis,
    keys,
    store: new PostgresSeenCheckpoints(sql),
    dayLayouts: new DayLayouts(redis, keys, fixedLayout(G), 7),
    reader: s,
    clock: new ManualClock(T0),
    log: silentLogger,
  });
  return {
    filter: new RedisReaderSeenFilter(redis, keys, s, { checkpoints: cp }),
    cleanup: async () => void (await deleteByPrefix(redis, keys.prefix)),
  };
});

/** Redis loses every key of the prefix (what a restart without persistence does to them). */
const lose = (p: { keys: Keys }) => deleteByPrefix(redis, p.keys.prefix);
const allTrue = (a: boolean[]) => a.every(Boolean);
/** Shard `shard` of a process's layout: its day keys. */
const shard = (p: Process, s = 0) => p.keys.seenDays(p.layout.shards, s);
/** A reader's sub-filters as Redis holds them (one string each), concatenated as a checkpoint keeps them. */
async function readerBitmap(keys: Keys, reader: string, open: number): Promise<Buffer> {
  const g = scalableGeometry(READER.initialCapacity, READER.errorRate);
  const out = Buffer.alloc(levelBytes(g.levels[open - 1]!)[1]);
  for (let i = 0; i < open; i++) {
    const key = i === 0 ? keys.readerSeen(reader) : keys.readerSeenLevel(reader, i);
    (await redis.getBuffer(key))!.copy(out, levelBytes(g.levels[i]!)[0]);
  }
  return out;
}

describe('seen-filter checkpoints', () => {
  it('write every journal once, and folding them gives back the bitmaps Redis holds, byte for byte', async () => {
    const p = process(await database(), nextPrefix());
    for (let r = 0; r < 20; r++) {
      await p.rolling.markSeen(`u${r}`, ids(`i${r}`, 40), T0);
      await p.readerSeen.markSeen(`u${r}`, ids(`i${r}`, 40), T0);
    }
    await p.readerSeen.markSeen('heavy', ids('h', 2_500), T0); // past n0 = 1,000: a second sub-filter
    const report = await p.cp.checkpoint();
    expect(report).toMatchObject({ days: 1, readers: 21 });
    expect(report.bytes).toBeGreaterThan(8 * (800 + 800 + 2_000)); // (re-marks and collisions aside)
    const day = dayStamp(T0);
    const loaded = await p.store.load([
      daySubject(p.layout, 0, day),
      readerSubject(SIG, 'u3'),
      readerSubject(SIG, 'heavy'),
    ]);
    // the heavy reader's rows outgrew its first sub-filter: folded into a base; a light one's were not
    expect(report.compacted).toBe(1);
    expect(loaded.get(readerSubject(SIG, 'heavy'))).toMatchObject({
      log: [],
      base: { state: expect.stringMatching(/^\d+\|1000,\d+$/) },
    });
    expect(loaded.get(readerSubject(SIG, 'u3'))!.base).toBeNull();
    const bitmap = await redis.getBuffer(shard(p).day(day));
    expect(Buffer.from(foldDay(G, loaded.get(daySubject(p.layout, 0, day))!)).equals(bitmap!)).toBe(true);
    for (const reader of ['u3', 'heavy']) {
      const saved = foldReader(READER, SIG, reader, loaded.get(readerSubject(SIG, reader))!)!;
      const held = await readerBitmap(p.keys, reader, saved.counts.length);
      expect(Buffer.from(saved.bitmap).equals(held), reader).toBe(true);
      expect(saved.counts).toEqual((await p.readerSeen.describe(reader, T0)).filters.map((f) => f.members));
    }
    // nothing journalled since: the next checkpoint writes nothing
    expect(await p.cp.checkpoint()).toMatchObject({ days: 0, readers: 0, bytes: 0 });
  });

  it('after Redis loses everything, a check restores the shard before answering: what was checkpointed is seen', async () => {
    const p = process(await database(), nextPrefix());
    const yesterday = ids('y', 50);
    const before = ids('b', 50);
    const after = ids('a', 50);
    await p.rolling.markSeen('alice', yesterday, T0 - DAY_MS);
    await p.rolling.markSeen('alice', before, T0);
    await p.cp.checkpoint();
    await p.rolling.markSeen('alice', after, T0 + 1);
    expect(allTrue(await p.rolling.seen('alice', [...yesterday, ...before, ...after], T0 + 2))).toBe(true); // caches yesterday
    const version = await redis.get(shard(p).version(dayStamp(T0 - DAY_MS)));
    await lose(p);

    const answers = await p.rolling.seen('alice', [...yesterday, ...before, ...after], T0 + 3);
    expect(allTrue(answers.slice(0, 100))).toBe(true);
    // the bound: only impressions after the last checkpoint may be forgotten (here all of them are)
    expect(answers.slice(100).filter(Boolean).length).toBeLessThan(10);
    expect(await redis.exists(shard(p).epoch())).toBe(1);
    const restored = await redis.get(shard(p).version(dayStamp(T0 - DAY_MS)));
    expect(restored).not.toBeNull();
    expect(restored).not.toBe(version);
    // a second process's checks see the restored days too (its copies are fetched at the new version)
    expect(allTrue(await p.rolling.seen('alice', [...yesterday, ...before], T0 + 4))).toBe(true);
  });

  it('restores a reader lost with Redis on its first check, or before its first mark, and gives a new reader an empty state', async () => {
    const p = process(await database(), nextPrefix());
    const [a1, a2] = [ids('a1', 30), ids('a2', 30)];
    await p.readerSeen.markSeen('r1', a1, T0);
    await p.readerSeen.markSeen('r2', a2, T0);
    await p.cp.checkpoint();
    await lose(p);
    expect(allTrue(await p.readerSeen.seen('r1', a1, T0 + HOUR_MS))).toBe(true);
    // a mark first: it must not start an empty filter over the checkpointed one
    const b2 = ids('b2', 10);
    await p.readerSeen.markSeen('r2', b2, T0 + HOUR_MS);
    expect(allTrue(await p.readerSeen.seen('r2', [...a2, ...b2], T0 + HOUR_MS))).toBe(true);
    expect((await p.readerSeen.describe('r2', T0 + HOUR_MS)).members).toBe(40);
    // nothing checkpointed: one restore puts an empty state (no bitmap yet), later calls need none
    expect(await p.readerSeen.seen('newcomer', ['x'], T0)).toEqual([false]);
    expect(await p.readerSeen.describe('newcomer', T0)).toMatchObject({ members: 0, bytes: 0, lastActiveMs: T0 });
    await p.readerSeen.markSeen('newcomer', ['x'], T0);
    expect(await p.readerSeen.seen('newcomer', ['x', 'y'], T0)).toEqual([true, false]);
  });

  it('warm restores a reader lost with Redis before its first check, which is then one round trip; a newcomer gets an empty state', async () => {
    const p = process(await database(), nextPrefix());
    const a = ids('w1', 25);
    await p.readerSeen.markSeen('w1', a, T0);
    await p.cp.checkpoint();
    await lose(p);
    await p.readerSeen.warm('w1', T0 + HOUR_MS);
    expect((await p.readerSeen.describe('w1', T0 + HOUR_MS)).members).toBe(25);
    const before = commands();
    expect(allTrue(await p.readerSeen.seen('w1', a, T0 + HOUR_MS))).toBe(true);
    expect(commands() - before).toBe(1);
    await p.readerSeen.warm('newcomer', T0);
    expect(await p.readerSeen.describe('newcomer', T0)).toMatchObject({ members: 0, bytes: 0, lastActiveMs: T0 });
    const again = commands();
    await p.readerSeen.warm('newcomer', T0); // already there: one round trip, nothing restored
    expect(commands() - again).toBe(1);
    expect(await p.readerSeen.seen('newcomer', ['x'], T0)).toEqual([false]);
  });

  it('restores a checkpointed day key found missing while the shard stands; a day never checkpointed is just empty', async () => {
    const p = process(await database(), nextPrefix());
    await p.cp.ensureShards(T0);
    const items = ids('d', 40);
    await p.rolling.markSeen('bob', items, T0);
    await p.cp.checkpoint();
    await redis.del(shard(p).day(dayStamp(T0)), shard(p).version(dayStamp(T0)));
    expect(await redis.exists(shard(p).epoch())).toBe(1);
    expect(allTrue(await p.rolling.seen('bob', items, T0 + 1))).toBe(true);
    // a day with nothing checkpointed (tomorrow, a new day) answers at once
    expect(await p.rolling.seen('bob', ['z'], T0 + DAY_MS)).toEqual([false]);
  });

  it('a failed checkpoint loses nothing: its takes stay under its lease and the next one writes them', async () => {
    const p = process(await database(), nextPrefix());
    const items = ids('f', 30);
    await p.rolling.markSeen('carol', items, T0);
    await p.readerSeen.markSeen('carol', items, T0);
    p.store.failNext = true;
    await expect(p.cp.checkpoint()).rejects.toThrow('PostgreSQL went away');
    expect(await redis.exists(shard(p).journalTaken(dayStamp(T0)), p.keys.readerSeenJournalTaken('carol'))).toBe(2);
    expect(await p.cp.checkpoint()).toMatchObject({ days: 1, readers: 1 });
    await lose(p);
    expect(allTrue(await p.rolling.seen('carol', items, T0 + 1))).toBe(true);
    expect(allTrue(await p.readerSeen.seen('carol', items, T0 + 1))).toBe(true);
  });

  it("another process takes over a dead checkpoint's takes once their lease expires", async () => {
    const sql = await database();
    const prefix = nextPrefix();
    const dead = process(sql, prefix, { leaseMs: 1_500 });
    const other = process(sql, prefix);
    const items = ids('t', 30);
    await dead.rolling.markSeen('dan', items, T0);
    await dead.readerSeen.markSeen('dan', items, T0);
    dead.store.failNext = true;
    await expect(dead.cp.checkpoint()).rejects.toThrow();
    expect(await other.cp.checkpoint()).toMatchObject({ days: 0, readers: 0 }); // leased: skipped
    const leases = [
      shard(dead).journalLease(dayStamp(T0)),
      dead.keys.readerSeenDirtyLease(shardOf('dan', READER_DIRTY_SHARDS)),
    ];
    for (const lease of leases) await expect.poll(() => redis.exists(lease), { timeout: 10_000, interval: 20 }).toBe(0);
    expect(await other.cp.checkpoint()).toMatchObject({ days: 1, readers: 1 });
    await lose(other);
    expect(allTrue(await other.rolling.seen('dan', items, T0 + 1))).toBe(true);
    expect(allTrue(await other.readerSeen.seen('dan', items, T0 + 1))).toBe(true);
  });

  it('two processes marking and checkpointing at once lose nothing and write every member once', async () => {
    const sql = await database();
    const prefix = nextPrefix();
    const clients = [createRedis({ url: TEST_REDIS_URL }), createRedis({ url: TEST_REDIS_URL })];
    try {
      const ps = clients.map((client) => process(sql, prefix, { client, shards: 2 }));
      const marked = new Map<string, string[]>();
      for (let round = 0; round < 6; round++) {
        await Promise.all([
          ...ps.map(async (p, n) => {
            for (let r = 0; r < 8; r++) {
              const reader = `u${r}`;
              const items = ids(`p${n}r${round}u${r}`, 6);
              await Promise.all([
                p.rolling.markSeen(reader, items, T0 + round),
                p.readerSeen.markSeen(reader, items, T0 + round),
              ]);
              marked.set(reader, [...(marked.get(reader) ?? []), ...items]);
            }
          }),
          ...ps.map((p) => p.cp.checkpoint()),
        ]);
      }
      await Promise.all(ps.map((p) => p.cp.checkpoint()));
      await ps[0]!.cp.checkpoint();
      await lose(ps[0]!);
      for (const [reader, items] of marked) {
        expect(allTrue(await ps[1]!.rolling.seen(reader, items, T0 + 10)), reader).toBe(true);
        expect(allTrue(await ps[0]!.readerSeen.seen(reader, items, T0 + 10)), reader).toBe(true);
      }
      const rows = await sql.query<{ subject: string; pairs: Uint8Array }>(
        `SELECT subject, pairs FROM seen_checkpoint_log`,
      );
      const bySubject = new Map<string, string[]>();
      for (const r of rows) {
        const list = bySubject.get(r.subject) ?? [];
        for (let i = 0; i < r.pairs.length; i += 8) list.push(Buffer.from(r.pairs.subarray(i, i + 8)).toString('hex'));
        bySubject.set(r.subject, list);
      }
      expect(bySubject.size).toBe(2 + 8); // a day on each shard, 8 readers
      for (const [subject, pairs] of bySubject) expect(new Set(pairs).size, subject).toBe(pairs.length);
    } finally {
      await Promise.all(clients.map(closeRedis));
    }
  });

  it('forgetting a reader deletes its checkpoints: a loss of Redis does not bring it back', async () => {
    const p = process(await database(), nextPrefix());
    const items = ids('g', 20);
    await p.readerSeen.markSeen('erin', items, T0);
    await p.cp.checkpoint();
    await p.readerSeen.forget('erin');
    await lose(p);
    expect((await p.readerSeen.seen('erin', items, T0 + 1)).filter(Boolean).length).toBe(0);
  });

  it("forgetting a reader takes its id out of its shard's dirty-reader set, before any checkpoint", async () => {
    const p = process(await database(), nextPrefix());
    await p.readerSeen.markSeen('ivy', ids('i', 5), T0); // the first mark starts a journal: ivy is dirty
    const dirty = p.keys.readerSeenDirty(shardOf('ivy', READER_DIRTY_SHARDS));
    expect(await redis.sismember(dirty, 'ivy')).toBe(1);
    await p.readerSeen.forget('ivy');
    expect(await redis.sismember(dirty, 'ivy')).toBe(0); // an erase leaves no key naming the reader
  });

  it('folds a past day into its base once, and today once its rows outgrow its bitmap; restores read the bases', async () => {
    const p = process(await database(), nextPrefix());
    const old = ids('o', 100);
    await p.rolling.markSeen('fay', old, T0 - DAY_MS);
    expect(await p.cp.checkpoint()).toMatchObject({ days: 1, compacted: 1 });
    const past = (await p.store.load([daySubject(p.layout, 0, dayStamp(T0 - DAY_MS))])).values().next().value!;
    expect(past.base).not.toBeNull();
    expect(past.log).toHaveLength(0);
    const many = ids('m', Math.ceil(G.bits / 8 / 8) + 200); // more journal bytes than the bitmap holds
    await p.rolling.markSeen('fay', many, T0);
    expect(await p.cp.checkpoint()).toMatchObject({ days: 1, compacted: 1 });
    await lose(p);
    expect(allTrue(await p.rolling.seen('fay', [...old, ...many], T0 + 1))).toBe(true);
  });

  it('never brings back a reader filter that was idle for the TTL, nor its members under a new one', async () => {
    const p = process(await database(), nextPrefix());
    const old = ids('old', 40);
    await p.readerSeen.markSeen('gus', old, T0);
    await p.cp.checkpoint();
    await lose(p);
    const later = T0 + READER.ttlMs + 1;
    expect((await p.readerSeen.seen('gus', old, later)).filter(Boolean).length).toBeLessThan(3);
    const fresh = ids('new', 40);
    await p.readerSeen.markSeen('gus', fresh, later);
    await p.cp.checkpoint();
    await lose(p);
    const answers = await p.readerSeen.seen('gus', [...old, ...fresh], later + 1);
    expect(allTrue(answers.slice(40))).toBe(true);
    expect(answers.slice(0, 40).filter(Boolean).length).toBeLessThan(3);
  });

  it('restores every shard of an empty Redis on start, before any check', async () => {
    const sql = await database();
    const prefix = nextPrefix();
    const first = process(sql, prefix, { shards: 3 });
    for (let r = 0; r < 12; r++) await first.rolling.markSeen(`u${r}`, ids(`s${r}`, 10), T0);
    await first.cp.checkpoint();
    await lose(first);
    const second = process(sql, prefix, { shards: 3 });
    expect(await second.cp.ensureShards(T0)).toBe(3);
    for (let s = 0; s < 3; s++) {
      expect(await redis.exists(shard(second, s).epoch(), shard(second, s).day(dayStamp(T0)))).toBe(2);
    }
    expect(await second.cp.ensureShards(T0)).toBe(0);
    for (let r = 0; r < 12; r++)
      expect(allTrue(await second.rolling.seen(`u${r}`, ids(`s${r}`, 10), T0 + 1))).toBe(true);
  });
});
