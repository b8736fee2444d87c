/**
 * The SeenFilter contract on the memory adapter and on standalone Redis, plus what only one of them
 * has: the memory snapshot file, and byte-for-byte equality of a Redis bitmap with the memory one.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import murmurhash from 'murmurhash';
import { describe, expect, it } from 'vitest';
import { DAY_MS, dayStamp } from '../src/domain/clock.js';
import { hashPair, hashPairs, positions, seenMember, sizeWindow } from '../src/domain/bloom.js';
import { MemorySeenFilter } from '../src/adapters/memory/seen-filter.js';
import { RedisSeenFilter } from '../src/adapters/redis/seen-filter.js';
import { Keys } from '../src/adapters/redis/keys.js';
import { deleteByPrefix, fileRedis } from './support/redis.js';
import { seenFilterContract } from './contracts/seen-filter.contract.js';

const { redis, commands, nextPrefix } = fileRedis();

seenFilterContract('memory', async (g) => {
  const filter = new MemorySeenFilter(g, { days: g.days });
  const names = new Keys('');
  return {
    filter,
    cleanup: async () => {},
    dayTtlMs: async (reader, now) => {
      const day = filter.dayFilters().get(names.seenDay(reader, dayStamp(now)));
      return day ? day.expiresAt - now : null;
    },
  };
});

seenFilterContract('redis', async (g) => {
  const prefix = nextPrefix();
  const keys = new Keys(prefix);
  return {
    filter: new RedisSeenFilter(redis, keys, g, { days: g.days }),
    cleanup: async () => void (await deleteByPrefix(redis, prefix)),
    dayTtlMs: async (reader, now) => {
      const ttl = await redis.pttl(keys.seenDay(reader, dayStamp(now)));
      return ttl < 0 ? null : ttl;
    },
    commands,
  };
});

seenFilterContract('redis, no past-day cache (every day tested in Lua)', async (g) => {
  const prefix = nextPrefix();
  const keys = new Keys(prefix);
  return {
    filter: new RedisSeenFilter(redis, keys, g, { days: g.days, cacheBytes: 0 }),
    cleanup: async () => void (await deleteByPrefix(redis, prefix)),
    dayTtlMs: async (reader, now) => {
      const ttl = await redis.pttl(keys.seenDay(reader, dayStamp(now)));
      return ttl < 0 ? null : ttl;
    },
    commands,
  };
});

const D = Date.UTC(2026, 2, 5, 9);
const g = sizeWindow(1_000, 0.01, 7);

describe('hashing shared by both adapters', () => {
  it('hashPairs and hashPair equal the reference MurmurHash3 (murmurhash package), ASCII or not, short or long', () => {
    const items = ['', 'a', 'ab', 'abc', 'abcd', 'doc_9527', 'é', '中文id', '😀x', 'x'.repeat(1_000), 'ß'.repeat(300)];
    for (let i = 0; i < 2_000; i++) items.push(`doc_${i}_${(i * 7919).toString(36)}`);
    const reference = (member: string) => [murmurhash.v3(member, 0) >>> 0, (murmurhash.v3(member, 0x9747b28c) | 1) >>> 0];
    const pairs = hashPairs('u_10086', items);
    items.forEach((item, j) => {
      const member = seenMember('u_10086', item);
      expect([pairs[2 * j], pairs[2 * j + 1]]).toEqual(reference(member));
      expect(hashPair(member)).toEqual(reference(member));
    });
  });

  it('marks exactly the bits positions(hashPair(member)) names, in Redis bit order', async () => {
    const filter = new MemorySeenFilter(g, { days: 7 });
    await filter.markSeen('u_1', ['doc_1', 'doc_2'], D);
    const expected = new Set(['doc_1', 'doc_2'].flatMap((id) => positions(g, ...hashPair(seenMember('u_1', id)))));
    const [bitmap] = [...filter.dayFilters().values()].map((d) => d.bitmap);
    const set: number[] = [];
    bitmap!.forEach((byte, i) => {
      for (let b = 0; b < 8; b++) if (byte & (0x80 >> b)) set.push(8 * i + b);
    });
    expect(set).toEqual([...expected].sort((a, b) => a - b));
  });
});

describe('MemorySeenFilter snapshot', () => {
  it('restores every bitmap, skips a file of another geometry, and starts empty without a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'freshet-seen-'));
    try {
      const path = join(dir, 'seen.bin');
      const a = new MemorySeenFilter(g, { days: 7, shards: 2 });
      await a.markSeen('u_1', ['a', 'b'], D);
      await a.markSeen('u_2', ['c'], D + DAY_MS);
      await a.snapshot(path);

      const b = await MemorySeenFilter.restore(path, g, { days: 7, shards: 2 });
      expect(await b.seen('u_1', ['a', 'b', 'c'], D + 2 * DAY_MS)).toEqual([true, true, false]);
      expect(await b.seen('u_2', ['a', 'c'], D + 2 * DAY_MS)).toEqual([false, true]);
      expect([...b.dayFilters().keys()].sort()).toEqual([...a.dayFilters().keys()].sort());
      // the restored days keep their end of window
      expect(await b.seen('u_1', ['a'], D + 7 * DAY_MS)).toEqual([false]);
      expect(b.dayFilters().size).toBe(1);

      const skipped: string[] = [];
      const other = sizeWindow(2_000, 0.01, 7);
      const c = await MemorySeenFilter.restore(path, other, { days: 7, shards: 2, onSkip: (r) => skipped.push(r) });
      expect(c.dayFilters().size).toBe(0);
      expect(skipped.join()).toMatch(/geometry mismatch/);
      const d = await MemorySeenFilter.restore(path, g, { days: 7, shards: 1, onSkip: (r) => skipped.push(r) });
      expect(d.dayFilters().size).toBe(0);

      await writeFile(join(dir, 'junk.bin'), 'not a snapshot');
      const e = await MemorySeenFilter.restore(join(dir, 'junk.bin'), g, { days: 7, onSkip: (r) => skipped.push(r) });
      expect(e.dayFilters().size).toBe(0);
      expect(skipped.at(-1)).toMatch(/not a seen-filter snapshot/);

      const f = await MemorySeenFilter.restore(join(dir, 'missing.bin'), g, { days: 7 });
      expect(await f.seen('u_1', ['a'], D)).toEqual([false]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('RedisSeenFilter bitmaps', () => {
  it('hold exactly the bytes of the memory filter (Redis bit order, same positions)', async () => {
    const prefix = nextPrefix();
    const keys = new Keys(prefix, 3);
    const onRedis = new RedisSeenFilter(redis, keys, g, { days: 7 });
    const inMemory = new MemorySeenFilter(g, { days: 7, shards: 3 });
    for (const reader of ['u_1', 'u_2', 'u_3', 'u_4']) {
      const items = Array.from({ length: 300 }, (_, i) => `${reader}-doc-${i}`);
      await onRedis.markSeen(reader, items, D);
      await inMemory.markSeen(reader, items, D);
    }
    expect(inMemory.dayFilters().size).toBeGreaterThan(1);
    for (const [name, day] of inMemory.dayFilters()) {
      const stored = await redis.getBuffer(prefix + name);
      expect(stored).not.toBeNull();
      const padded = Buffer.alloc(day.bitmap.byteLength);
      stored!.copy(padded);
      expect(padded.equals(Buffer.from(day.bitmap))).toBe(true);
      // created at full size by one SET (not grown by SETBIT, which over-allocates)
      expect(stored!.length).toBe(day.bitmap.byteLength);
    }
  });

  it('create a day key at its full size, so Redis holds it in about m/8 bytes', async () => {
    const prefix = nextPrefix();
    const keys = new Keys(prefix);
    const big = sizeWindow(200_000, 0.01, 7); // m ≈ 2.7 Mbit, a 341 kB bitmap
    const onRedis = new RedisSeenFilter(redis, keys, big, { days: 7 });
    await onRedis.markSeen('u_big', ['one-item'], D);
    const key = keys.seenDay('u_big', dayStamp(D));
    const bytes = Math.ceil(big.bits / 8);
    expect(await redis.strlen(key)).toBe(bytes);
    const usage = Number(await redis.call('MEMORY', 'USAGE', key));
    expect(usage).toBeLessThan(bytes * 1.25);
    expect(await onRedis.seen('u_big', ['one-item', 'other-item'], D)).toEqual([true, false]);
  });

  it('refuses a window that differs from the geometry', () => {
    expect(() => new RedisSeenFilter(redis, new Keys('x:'), g, { days: 6 })).toThrow(RangeError);
    expect(() => new MemorySeenFilter(g, { days: 8 })).toThrow(RangeError);
  });
});
