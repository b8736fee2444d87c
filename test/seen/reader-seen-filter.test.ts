/**
 * The ReaderSeenFilter contract (note 3's per-reader scalable Bloom filter) on the memory adapter and
 * on standalone Redis, plus what ties them (the same bitmap byte for byte and the same answers for the
 * same marks; one round trip per call on Redis) and the in-process snapshot file.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/kernel/clock.js';
import { MemoryReaderSeenFilter } from '../../src/seen/memory-reader-seen-filter.js';
import { RedisReaderSeenFilter } from '../../src/seen/redis-reader-seen-filter.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { geometrySignature, levelBytes, scalableLevels } from '../../src/seen/scalable-bloom.js';
import { redisReaderBitmap } from '../support/adapters.js';
import { fileRedis } from '../support/redis.js';
import { adopt, memory, redisEngine } from '../support/contract.js';
import { readerSeenFilterContract } from '../contracts/reader-seen-filter.contract.js';

const file = fileRedis();
const { redis, commands, nextPrefix } = file;

adopt(readerSeenFilterContract, memory, (_, s) => ({ filter: new MemoryReaderSeenFilter(s) }));
adopt(readerSeenFilterContract, redisEngine(file), ({ redis, keys }, s) => ({
  filter: new RedisReaderSeenFilter(redis, keys, s),
}));

describe('per-reader seen filter: memory and Redis agree', () => {
  const settings = { initialCapacity: 300, errorRate: 0.01, ttlMs: 30 * DAY_MS };
  const T = Date.UTC(2026, 2, 5);

  it('sets the same bits and answers the same, through growth', async () => {
    const keys = new Keys(nextPrefix());
    const mem = new MemoryReaderSeenFilter(settings);
    const red = new RedisReaderSeenFilter(redis, keys, settings);
    const marked = Array.from({ length: 1_500 }, (_, i) => `item.${i * 7}`);
    for (let i = 0; i < marked.length; i += 250) {
      await mem.markSeen('u_10086', marked.slice(i, i + 250), T + i);
      await red.markSeen('u_10086', marked.slice(i, i + 250), T + i);
    }
    const probes = Array.from({ length: 3_000 }, (_, i) => `item.${i}`);
    expect(await red.seen('u_10086', probes, T + DAY_MS)).toEqual(await mem.seen('u_10086', probes, T + DAY_MS));
    const [dm, dr] = [await mem.describe('u_10086', T + DAY_MS), await red.describe('u_10086', T + DAY_MS)];
    expect(dr).toEqual(dm);
    expect(dm.filters.length).toBe(3); // 300 + 600 + (600 of 1200)
    const bitmap = await redisReaderBitmap(redis, keys, 'u_10086', dm.signature!);
    expect(bitmap.length).toBe(dm.bytes);
    expect(Buffer.compare(bitmap, Buffer.from(mem.bitmapOf('u_10086')!))).toBe(0); // byte for byte
    expect(
      scalableLevels(300, 0.01)
        .slice(0, 3)
        .map((l) => l.offset % 8),
    ).toEqual([0, 0, 0]);
  });

  it('creates each sub-filter as a string of exactly its bytes on Redis: no preallocated slack', async () => {
    const keys = new Keys(nextPrefix());
    const big = { ...settings, initialCapacity: 100_000 }; // note 3's n0: a 138 KB first sub-filter
    const red = new RedisReaderSeenFilter(redis, keys, big);
    await red.markSeen('fresh', ['a', 'b'], T);
    const first = (await red.describe('fresh', T)).bytes;
    expect(await redis.strlen(keys.readerSeen('fresh'))).toBe(first);
    // sds preallocation would double a string grown below 1 MB; SETRANGE of a new key allocates it at
    // its size, so what Redis holds stays within a small overhead of the bitmap itself
    expect(Number(await redis.memory('USAGE', keys.readerSeen('fresh')))).toBeLessThan(first * 1.25);
    const small = new RedisReaderSeenFilter(redis, keys, settings);
    await small.markSeen(
      'grown',
      Array.from({ length: 1_000 }, (_, i) => `g${i}`),
      T,
    ); // opens sub-filters 1 and 2, each its own string
    const grown = await small.describe('grown', T);
    expect(grown.filters.length).toBe(3);
    const levels = scalableLevels(settings.initialCapacity, settings.errorRate);
    for (let i = 0; i < 3; i++) {
      const key = i === 0 ? keys.readerSeen('grown') : keys.readerSeenLevel('grown', i);
      const [from, to] = levelBytes(levels[i]!);
      expect(await redis.strlen(key)).toBe(to - from);
      expect(Number(await redis.memory('USAGE', key))).toBeLessThan((to - from) * 1.25 + 64);
    }
    expect(grown.bytes).toBe(levelBytes(levels[2]!)[1]); // the three strings together
  });

  it('agrees when a sub-filter is tested by BITFIELD rounds (large for the batch) or read whole (small)', async () => {
    const keys = new Keys(nextPrefix());
    const s = { ...settings, initialCapacity: 20_000 }; // sub-filters of 24 KB and 55 KB
    const [mem, red] = [new MemoryReaderSeenFilter(s), new RedisReaderSeenFilter(redis, keys, s)];
    const marked = Array.from({ length: 30_000 }, (_, i) => `m${i}`);
    for (let i = 0; i < marked.length; i += 3_000) {
      await mem.markSeen('r', marked.slice(i, i + 3_000), T);
      await red.markSeen('r', marked.slice(i, i + 3_000), T);
    }
    for (const size of [2, 10, 60, 2_000]) {
      const probe = [
        ...Array.from({ length: size }, (_, i) => `x${i}`),
        ...marked.slice(0, size),
        ...marked.slice(-size),
      ];
      expect(await red.seen('r', probe, T), `${size}`).toEqual(await mem.seen('r', probe, T));
    }
    // marks of a few (rounds) and many (whole) members keep the same bits
    await mem.markSeen('r', ['a', 'b', 'm5'], T);
    await red.markSeen('r', ['a', 'b', 'm5'], T);
    expect(await red.describe('r', T)).toEqual(await mem.describe('r', T));
    expect(await redisReaderBitmap(redis, keys, 'r', geometrySignature(20_000, 0.01))).toEqual(
      Buffer.from(mem.bitmapOf('r')!),
    );
  });

  it('is one round trip per call on Redis, whatever the batch', async () => {
    const red = new RedisReaderSeenFilter(redis, new Keys(nextPrefix()), settings);
    const before = commands();
    await red.markSeen(
      'r',
      Array.from({ length: 500 }, (_, i) => `x${i}`),
      T,
    );
    await red.seen(
      'r',
      Array.from({ length: 500 }, (_, i) => `y${i}`),
      T,
    );
    await red.warm('r', T); // without checkpoints there is nothing to restore: no round trip
    expect(commands() - before).toBe(2);
  });

  it('gives each reader one slot and keys under its hash tag', () => {
    const keys = new Keys('fs:');
    expect(keys.readerSeen('u_1')).toBe('fs:rsf:{u:u_1}');
    expect(keys.readerSeenMeta('u_1')).toBe('fs:rsf:meta:{u:u_1}');
  });
});

describe('per-reader seen filter: in-process snapshot', () => {
  const settings = { initialCapacity: 200, errorRate: 0.01, ttlMs: 30 * DAY_MS };
  const T = Date.UTC(2026, 2, 5);

  it('restores every reader bit for bit (also after growth), each under the geometry it was saved with', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'freshet-rsf-'));
    try {
      const path = join(dir, 'reader-seen-filters.bin');
      const a = new MemoryReaderSeenFilter(settings);
      await a.markSeen(
        'heavy',
        Array.from({ length: 500 }, (_, i) => `h${i}`),
        T,
      ); // 200 + 400 sub-filters
      await a.markSeen('light', ['x', 'y'], T + 1);
      await a.snapshot(path);
      const b = await MemoryReaderSeenFilter.restore(path, settings);
      const probes = Array.from({ length: 1_000 }, (_, i) => `h${i}`);
      expect(await b.seen('heavy', probes, T)).toEqual(await a.seen('heavy', probes, T));
      expect(await b.describe('light', T + 1)).toEqual(await a.describe('light', T + 1));
      expect(await b.describe('heavy', T)).toEqual(await a.describe('heavy', T));
      // other settings since: the saved readers keep their geometry (never a repeat for a change of
      // settings), new readers take the new one
      const other = { ...settings, initialCapacity: 300 };
      const c = await MemoryReaderSeenFilter.restore(path, other);
      expect(await c.seen('light', ['x', 'z'], T + 1)).toEqual([true, false]);
      expect((await c.describe('heavy', T)).signature).toBe(geometrySignature(200, 0.01));
      await c.markSeen('newcomer', ['n'], T);
      expect((await c.describe('newcomer', T)).signature).toBe(geometrySignature(300, 0.01));
      expect((await MemoryReaderSeenFilter.restore(join(dir, 'missing.bin'), settings)).size).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stores light readers compactly: the file is far smaller than their bitmaps, and restores them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'freshet-rsf-'));
    try {
      const path = join(dir, 'reader-seen-filters.bin');
      const big = { initialCapacity: 100_000, errorRate: 0.01, ttlMs: 30 * DAY_MS }; // note 3's default
      const a = new MemoryReaderSeenFilter(big);
      for (let r = 0; r < 20; r++)
        await a.markSeen(
          `r${r}`,
          Array.from({ length: 40 }, (_, i) => `i${r}-${i}`),
          T,
        );
      await a.snapshot(path);
      const bitmaps = 20 * a.bitmapOf('r0')!.byteLength;
      expect((await stat(path)).size).toBeLessThan(bitmaps / 20);
      const b = await MemoryReaderSeenFilter.restore(path, big);
      expect(Buffer.from(b.bitmapOf('r7')!).equals(Buffer.from(a.bitmapOf('r7')!))).toBe(true);
      expect(await b.seen('r7', ['i7-3', 'i8-3'], T)).toEqual([true, false]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
