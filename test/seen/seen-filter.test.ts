/**
 * The SeenFilter contract on the memory adapter and on standalone Redis, plus what only one of them
 * has: the memory snapshot file, and byte-for-byte equality of a Redis bitmap with the memory one.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DAY_MS, dayStamp } from '../../src/kernel/clock.js';
import { hashPair, murmur3 } from '../../src/kernel/hash.js';
import { hashPairs, positions, seenMember, sizeWindow } from '../../src/seen/bloom.js';
import { MemorySeenFilter } from '../../src/seen/memory-seen-filter.js';
import { RedisSeenFilter } from '../../src/seen/redis-seen-filter.js';
import { Keys, shardOf } from '../../src/kernel/redis/keys.js';
import { fixedLayout } from '../../src/seen/layout.js';
import { fileRedis } from '../support/redis.js';
import { adopt, memory, redisEngine } from '../support/contract.js';
import { redisSeenFilter } from '../support/adapters.js';
import { seenFilterContract } from '../contracts/seen-filter.contract.js';

const file = fileRedis();
const { redis, nextPrefix } = file;
const engine = redisEngine(file);

adopt(seenFilterContract, memory, (_, g) => {
  const filter = new MemorySeenFilter(fixedLayout(g), { days: g.days });
  return {
    filter,
    dayTtlMs: async (reader, now) => {
      const day = filter.dayFilters().get(filter.dayKey(reader, now));
      return day ? day.expiresAt - now : null;
    },
  };
});
adopt(seenFilterContract, engine, redisSeenFilter());
adopt(
  seenFilterContract,
  engine,
  redisSeenFilter(1, { cacheBytes: 0 }),
  'redis, no past-day cache (every day tested in Lua)',
);

const D = Date.UTC(2026, 2, 5, 9);
const g = sizeWindow(1_000, 0.01, 7);

describe('hashing shared by both adapters', () => {
  it('hashPair is MurmurHash3 x86_32 with seeds 0 and 0x9747b28c (h2 odd): the published test vectors', () => {
    // MurmurHash3_x86_32 test vectors as widely published with the algorithm (the `murmurhash`
    // package, the reference here before, gives the same)
    const seed0: [string, number][] = [
      ['', 0],
      ['\0\0\0\0', 0x2362f9de],
      ['abc', 0xb3dd93fa],
    ];
    const seed9747: [string, number][] = [
      ['a', 0x7fa09ea6],
      ['aa', 0x5d211726],
      ['aaa', 0x283e0130],
      ['aaaa', 0x5a97808a],
      ['abc', 0xc84a62dd],
      ['abcd', 0xf0478627],
      ['Hello, world!', 0x24884cba],
      ['ππππππππ', 0xd58063c1],
      ['The quick brown fox jumps over the lazy dog', 0x2fa826cd],
    ];
    for (const [text, h] of seed0) expect([text, hashPair(text)[0], murmur3(text)]).toEqual([text, h, h]);
    for (const [text, h] of seed9747) expect([text, hashPair(text)[1]]).toEqual([text, (h | 1) >>> 0]);
  });

  it('hashPairs equals hashPair member by member, and known members keep their hashes (stored bitmaps stay valid)', () => {
    const known: [string, number, number][] = [
      ['', 3888168744, 4132414239],
      ['a', 2525357048, 2096655539],
      ['ab', 4113939275, 2654250817],
      ['abc', 63208325, 2619796463],
      ['abcd', 270376000, 1568418217],
      ['doc_9527', 2145220845, 3917616259],
      ['é', 3532340146, 3513589767],
      ['中文id', 424505279, 644719127],
      ['😀x', 3136884816, 1580140959],
      ['x'.repeat(1_000), 3862228997, 793603319],
      ['ß'.repeat(300), 1815618482, 2921956727],
    ];
    const items = known.map(([item]) => item);
    for (let i = 0; i < 2_000; i++) items.push(`doc_${i}_${(i * 7919).toString(36)}`);
    const pairs = hashPairs('u_10086', items);
    items.forEach((item, j) => expect([pairs[2 * j], pairs[2 * j + 1]]).toEqual(hashPair(seenMember('u_10086', item))));
    for (const [item, h1, h2] of known)
      expect([item, ...hashPair(seenMember('u_10086', item))]).toEqual([item, h1, h2]);
  });

  it('shards readers and items as before (MurmurHash3 of the id): keys of stored data do not move', () => {
    const ids = ['u_1', 'u_2', 'alice', 'reader_7', '12345', 'item_42', 'doc_9527', 'u_10086', 'it_1', 'item_0'];
    const shards: Record<number, number[]> = {
      3: [1, 1, 1, 0, 0, 2, 2, 2, 0, 1],
      4: [1, 2, 1, 2, 3, 3, 3, 0, 2, 3],
      6: [1, 4, 1, 0, 3, 5, 5, 2, 0, 1],
      8: [5, 6, 5, 6, 3, 7, 7, 4, 2, 3],
    };
    for (const [n, expected] of Object.entries(shards)) {
      const keys = new Keys('fs:', Number(n), Number(n));
      expect(ids.map((id) => shardOf(id, Number(n)))).toEqual(expected);
      expect(ids.map((id) => keys.hotShard(id))).toEqual(expected);
    }
  });

  it('marks exactly the bits positions(hashPair(member)) names, in Redis bit order', async () => {
    const filter = new MemorySeenFilter(fixedLayout(g), { days: 7 });
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
  it('restores every bitmap, keeps each day under its own layout after a change of settings, starts empty without a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'freshet-seen-'));
    try {
      const path = join(dir, 'seen.bin');
      const a = new MemorySeenFilter(fixedLayout(g, 2), { days: 7 });
      await a.markSeen('u_1', ['a', 'b'], D);
      await a.markSeen('u_2', ['c'], D + DAY_MS);
      await a.snapshot(path);

      const b = await MemorySeenFilter.restore(path, fixedLayout(g, 2), { days: 7 });
      expect(await b.seen('u_1', ['a', 'b', 'c'], D + 2 * DAY_MS)).toEqual([true, true, false]);
      expect(await b.seen('u_2', ['a', 'c'], D + 2 * DAY_MS)).toEqual([false, true]);
      expect([...b.dayFilters().keys()].sort()).toEqual([...a.dayFilters().keys()].sort());
      // the restored days keep their end of window
      expect(await b.seen('u_1', ['a'], D + 7 * DAY_MS)).toEqual([false]);
      expect(b.dayFilters().size).toBe(1);

      // other settings (capacity, shards): the saved days are read under the layout they were written
      // with — never a repeat because the settings changed — and new days take the new layout
      const other = fixedLayout(sizeWindow(2_000, 0.01, 7), 3);
      const c = await MemorySeenFilter.restore(path, other, { days: 7 });
      expect(await c.seen('u_1', ['a', 'b', 'c'], D + 2 * DAY_MS)).toEqual([true, true, false]);
      await c.markSeen('u_1', ['d'], D + 2 * DAY_MS);
      expect(await c.seen('u_1', ['a', 'd'], D + 2 * DAY_MS)).toEqual([true, true]);
      expect(c.dayKey('u_1', D + 2 * DAY_MS)).toBe(
        new Keys('').seenDays(3, shardOf('u_1', 3)).day(dayStamp(D + 2 * DAY_MS)),
      );

      const skipped: string[] = [];
      await writeFile(join(dir, 'junk.bin'), 'not a snapshot');
      const e = await MemorySeenFilter.restore(join(dir, 'junk.bin'), fixedLayout(g), { days: 7 }, (r) =>
        skipped.push(r),
      );
      expect(e.dayFilters().size).toBe(0);
      expect(skipped.at(-1)).toMatch(/not a seen-filter snapshot/);

      const f = await MemorySeenFilter.restore(join(dir, 'missing.bin'), fixedLayout(g), { days: 7 });
      expect(await f.seen('u_1', ['a'], D)).toEqual([false]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('RedisSeenFilter bitmaps', () => {
  it('hold exactly the bytes of the memory filter (Redis bit order, same positions)', async () => {
    const prefix = nextPrefix();
    const keys = new Keys(prefix);
    const onRedis = new RedisSeenFilter(redis, keys, fixedLayout(g, 3), { days: 7 });
    const inMemory = new MemorySeenFilter(fixedLayout(g, 3), { days: 7 });
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
      // created at full size by one SETRANGE (not grown by SETBIT, which over-allocates)
      expect(stored!.length).toBe(day.bitmap.byteLength);
    }
  });

  it('create a day key at its full size, so Redis holds it in about m/8 bytes', async () => {
    const prefix = nextPrefix();
    const keys = new Keys(prefix);
    const big = sizeWindow(200_000, 0.01, 7); // m ≈ 2.7 Mbit, a 341 kB bitmap
    const onRedis = new RedisSeenFilter(redis, keys, fixedLayout(big), { days: 7 });
    await onRedis.markSeen('u_big', ['one-item'], D);
    const key = await onRedis.dayKey('u_big', D);
    const bytes = Math.ceil(big.bits / 8);
    expect(await redis.strlen(key)).toBe(bytes);
    const usage = Number(await redis.call('MEMORY', 'USAGE', key));
    expect(usage).toBeLessThan(bytes * 1.25);
    expect(await onRedis.seen('u_big', ['one-item', 'other-item'], D)).toEqual([true, false]);
  });

  it('refuses a window that differs from the geometry', () => {
    expect(() => new RedisSeenFilter(redis, new Keys('x:'), fixedLayout(g), { days: 6 })).toThrow(RangeError);
    expect(() => new MemorySeenFilter(fixedLayout(g), { days: 8 })).toThrow(RangeError);
  });
});
