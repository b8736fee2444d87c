/**
 * The Redis seen filter's cache of past days (src/seen/redis-seen-filter.ts): a check tests
 * today in Lua and the past days against local copies Redis confirms by version in the same script.
 * What must hold: one round trip per check, warm or cold; a late write to a past day (from this or
 * another instance) is seen by the next check; an expired day is dropped; a day recreated after
 * expiry never matches a copy of its former self; the cache stays within its window and byte cap;
 * concurrent checks fetch each day once.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, dayStamp } from '../../src/kernel/clock.js';
import { seenWindow, sizeWindow } from '../../src/seen/bloom.js';
import { fixedLayout } from '../../src/seen/layout.js';
import { MemorySeenFilter } from '../../src/seen/memory-seen-filter.js';
import { RedisSeenFilter, type RedisSeenFilterOptions } from '../../src/seen/redis-seen-filter.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { fileRedis } from '../support/redis.js';

const { redis, commands, nextPrefix } = fileRedis();

const g = sizeWindow(1_000, 0.01, 7);
const layout = fixedLayout(g);
const BYTES = Math.ceil(g.bits / 8);
/** Friday 2026-03-06 12:00 UTC. */
const NOW = Date.UTC(2026, 2, 6, 12);
const ids = (tag: string, count: number) => Array.from({ length: count }, (_, i) => `${tag}-${i}`);
const all = (v: boolean, count: number) => Array<boolean>(count).fill(v);

/** Keys under a fresh prefix, and `count` filters over them (instances of separate processes). */
function setup(count = 1, opts: Partial<RedisSeenFilterOptions> = {}) {
  const keys = new Keys(nextPrefix());
  const filters = Array.from({ length: count }, () => new RedisSeenFilter(redis, keys, layout, { days: 7, ...opts }));
  // one shard: every reader's days are the same keys
  const day = (ms: number) => ({
    bitmap: keys.seenDays(1, 0).day(dayStamp(ms)),
    version: keys.seenDays(1, 0).version(dayStamp(ms)),
  });
  return { keys, filters, day };
}

describe('RedisSeenFilter past-day cache', () => {
  it('fetches each past day once, then answers from the copies: one round trip either way', async () => {
    const {
      filters: [f],
    } = setup();
    for (let d = 1; d <= 3; d++) await f!.markSeen('u_1', ids(`d${d}`, 20), NOW - d * DAY_MS);
    await f!.markSeen('u_1', ids('today', 20), NOW);
    const probe = [...ids('d1', 20), ...ids('d2', 20), ...ids('d3', 20), ...ids('today', 20), ...ids('never', 20)];
    const expected = [...all(true, 80), ...all(false, 20)];
    // loads the script (NOSCRIPT → EVAL) outside the count, on other keys (one shard: days are global),
    // and learns the window's day layouts (once a day per process)
    await setup().filters[0]!.seen('u_1', ['warm-up'], NOW);
    await f!.dayLayouts.forDays(seenWindow(NOW, 7).map(dayStamp), NOW);

    let before = commands();
    expect(await f!.seen('u_1', probe, NOW)).toEqual(expected);
    expect(commands() - before).toBe(1);
    expect(f!.cacheStats()).toMatchObject({ days: 3, bytes: 3 * BYTES, fetches: 3, hits: 0 });

    before = commands();
    expect(await f!.seen('u_1', probe, NOW)).toEqual(expected);
    expect(commands() - before).toBe(1);
    expect(f!.cacheStats()).toMatchObject({ days: 3, fetches: 3, hits: 3 });
  });

  it('sees a late write to a past day at the next check, from this instance or another one', async () => {
    const {
      filters: [a, b],
    } = setup(2);
    await a!.markSeen('u_1', ['old'], NOW - 2 * DAY_MS);
    expect(await a!.seen('u_1', ['old', 'late-a', 'late-b'], NOW)).toEqual([true, false, false]);
    expect(await b!.seen('u_1', ['old', 'late-a', 'late-b'], NOW)).toEqual([true, false, false]);
    const fetched = a!.cacheStats().fetches;

    // another process replays (or lags) and writes two days ago
    await b!.markSeen('u_1', ['late-b'], NOW - 2 * DAY_MS + HOUR_MS);
    expect(await a!.seen('u_1', ['old', 'late-a', 'late-b'], NOW)).toEqual([true, false, true]);
    expect(a!.cacheStats().fetches).toBe(fetched + 1); // the day's version moved: refetched once
    // the same process writes late
    await a!.markSeen('u_1', ['late-a'], NOW - 2 * DAY_MS);
    expect(await a!.seen('u_1', ['old', 'late-a', 'late-b'], NOW)).toEqual([true, true, true]);
    expect(await b!.seen('u_1', ['old', 'late-a', 'late-b'], NOW)).toEqual([true, true, true]);
    // and a day no one had a copy of
    await b!.markSeen('u_1', ['late-c'], NOW - 5 * DAY_MS);
    expect(await a!.seen('u_1', ['late-c'], NOW)).toEqual([true]);
  });

  it('sees a write to the day a lagging instance still calls today, once the checker has moved on', async () => {
    const {
      filters: [ahead, lagging],
    } = setup(2);
    const midnight = Date.UTC(2026, 2, 7);
    await ahead!.markSeen('u_1', ['yesterday'], midnight - HOUR_MS);
    expect(await ahead!.seen('u_1', ['yesterday', 'lagging'], midnight + 1_000)).toEqual([true, false]);
    await lagging!.markSeen('u_1', ['lagging'], midnight - 1); // its clock: 23:59:59.999 yesterday
    expect(await ahead!.seen('u_1', ['yesterday', 'lagging'], midnight + 2_000)).toEqual([true, true]);
  });

  it('keeps copies current when a mark sets no new bit (the version moves only on change)', async () => {
    const {
      filters: [f],
      day,
    } = setup();
    await f!.markSeen('u_1', ['a', 'b'], NOW - DAY_MS);
    const version = await redis.get(day(NOW - DAY_MS).version);
    expect(version).toMatch(/^\d+$/);
    await f!.seen('u_1', ['a'], NOW);
    await f!.markSeen('u_1', ['b', 'a'], NOW - DAY_MS); // re-impressions: no bit changes
    expect(await redis.get(day(NOW - DAY_MS).version)).toBe(version);
    const { fetches } = f!.cacheStats();
    expect(await f!.seen('u_1', ['a', 'b', 'c'], NOW)).toEqual([true, true, false]);
    expect(f!.cacheStats().fetches).toBe(fetches);
    await f!.markSeen('u_1', ['c'], NOW - DAY_MS);
    expect(BigInt((await redis.get(day(NOW - DAY_MS).version))!)).toBe(BigInt(version!) + 1n);
  });

  it('gives the version key the lifetime of its bitmap', async () => {
    const {
      filters: [f],
      day,
    } = setup();
    await f!.markSeen('u_1', ['a'], NOW);
    const [bitmapTtl, versionTtl] = await Promise.all([redis.pttl(day(NOW).bitmap), redis.pttl(day(NOW).version)]);
    expect(bitmapTtl).toBeGreaterThan(6 * DAY_MS);
    expect(Math.abs(bitmapTtl - versionTtl)).toBeLessThan(1_000);
  });

  it('drops the copy of a day whose key expired, and answers as if it never was', async () => {
    const {
      filters: [f],
      day,
    } = setup();
    await f!.markSeen('u_1', ['gone'], NOW - 3 * DAY_MS);
    await f!.markSeen('u_1', ['kept'], NOW - DAY_MS);
    expect(await f!.seen('u_1', ['gone', 'kept'], NOW)).toEqual([true, true]);
    expect(f!.cacheStats().days).toBe(2);
    const { bitmap, version } = day(NOW - 3 * DAY_MS);
    await redis.pexpire(bitmap, 1);
    await redis.pexpire(version, 1);
    await expect.poll(() => redis.exists(bitmap, version), { interval: 2 }).toBe(0); // expired by the server
    expect(await f!.seen('u_1', ['gone', 'kept'], NOW)).toEqual([false, true]);
    expect(f!.cacheStats()).toMatchObject({ days: 1, bytes: BYTES });
  });

  it('never takes a day recreated after expiry for the copy of its former self', async () => {
    const {
      filters: [a, b],
      day,
    } = setup(2);
    const { bitmap, version } = day(NOW - DAY_MS);
    await a!.markSeen('u_1', ['before'], NOW - DAY_MS);
    expect(await a!.seen('u_1', ['before', 'after'], NOW)).toEqual([true, false]);
    const old = await redis.get(version);
    await redis.del(bitmap, version); // expired, then rewritten by a late mark of another process
    await b!.markSeen('u_1', ['after'], NOW - DAY_MS);
    expect(await redis.get(version)).not.toBe(old);
    expect(await a!.seen('u_1', ['before', 'after'], NOW)).toEqual([false, true]);
  });

  it('caches a bitmap written without a version (read as version 0) until a mark changes it', async () => {
    const {
      filters: [f],
      day,
    } = setup();
    const memory = new MemorySeenFilter(layout, { days: 7 });
    await memory.markSeen('u_1', ['restored'], NOW - DAY_MS);
    const [bytes] = [...memory.dayFilters().values()].map((d) => d.bitmap);
    await redis.set(day(NOW - DAY_MS).bitmap, Buffer.from(bytes!));
    expect(await f!.seen('u_1', ['restored', 'marked'], NOW)).toEqual([true, false]);
    expect(await f!.seen('u_1', ['restored', 'marked'], NOW)).toEqual([true, false]);
    expect(f!.cacheStats()).toMatchObject({ days: 1, fetches: 1, hits: 1 });
    await f!.markSeen('u_1', ['marked'], NOW - DAY_MS);
    expect(await f!.seen('u_1', ['restored', 'marked'], NOW)).toEqual([true, true]);
    expect(f!.cacheStats()).toMatchObject({ fetches: 2 });
  });

  it('caches only what fits in cacheBytes and tests the other days in Lua, with the same answers', async () => {
    // three instances over three prefixes: the same days marked on each
    const [none, two, roomy] = [{ cacheBytes: BYTES - 1 }, { cacheBytes: 2 * BYTES }, {}].map(
      (o) => setup(1, o).filters[0]!,
    );
    const probe = [...ids('d', 6).map((id, i) => `${id}@${i + 1}`), ...ids('never', 30)];
    for (const f of [none!, two!, roomy!]) {
      for (let d = 1; d <= 6; d++) await f.markSeen('u_1', [`d-${d - 1}@${d}`], NOW - d * DAY_MS);
    }
    const expected = [...all(true, 6), ...all(false, 30)];
    for (let round = 0; round < 2; round++) {
      expect(await none!.seen('u_1', probe, NOW)).toEqual(expected);
      expect(await two!.seen('u_1', probe, NOW)).toEqual(expected);
      expect(await roomy!.seen('u_1', probe, NOW)).toEqual(expected);
    }
    expect(none!.cacheStats()).toMatchObject({ days: 0, bytes: 0, fetches: 0, testedInLua: 12 });
    expect(two!.cacheStats()).toMatchObject({ days: 2, bytes: 2 * BYTES, fetches: 2, hits: 2, testedInLua: 8 });
    expect(roomy!.cacheStats()).toMatchObject({ days: 6, bytes: 6 * BYTES, fetches: 6, hits: 6, testedInLua: 0 });
  });

  it('drops copies of days that left the window of the latest check', async () => {
    const {
      filters: [f],
    } = setup();
    for (let d = 1; d <= 6; d++) await f!.markSeen('u_1', [`x${d}`], NOW - d * DAY_MS);
    await f!.seen('u_1', ['x1'], NOW);
    expect(f!.cacheStats().days).toBe(6);
    await f!.seen('u_1', ['x1'], NOW + 2 * DAY_MS); // the two oldest days left the window
    expect(f!.cacheStats()).toMatchObject({ days: 4, bytes: 4 * BYTES });
    await f!.seen('u_1', ['x1'], NOW + 30 * DAY_MS);
    expect(f!.cacheStats()).toMatchObject({ days: 0, bytes: 0 });
  });

  it('answers large batches exactly as the memory filter, cached or in Lua, on well-filled days', async () => {
    const big = sizeWindow(2_000, 0.01, 7);
    const keys = new Keys(nextPrefix());
    const cached = new RedisSeenFilter(redis, keys, fixedLayout(big), { days: 7 });
    const inLua = new RedisSeenFilter(redis, keys, fixedLayout(big), { days: 7, cacheBytes: 0 });
    const memory = new MemorySeenFilter(fixedLayout(big), { days: 7 });
    for (let d = 0; d < 7; d++) {
      const batch = ids(`fill${d}`, 1_800);
      await Promise.all([
        cached.markSeen('u_1', batch, NOW - d * DAY_MS),
        memory.markSeen('u_1', batch, NOW - d * DAY_MS),
      ]);
    }
    const probe = [...ids('never', 2_000), ...Array.from({ length: 7 }, (_, d) => ids(`fill${d}`, 150)).flat()];
    const expected = await memory.seen('u_1', probe, NOW);
    expect(expected.filter(Boolean).length).toBeGreaterThanOrEqual(7 * 150);
    for (let round = 0; round < 2; round++) {
      expect(await cached.seen('u_1', probe, NOW)).toEqual(expected);
      expect(await inLua.seen('u_1', probe, NOW)).toEqual(expected);
    }
    expect(cached.cacheStats()).toMatchObject({ days: 6, hits: 6 });
  });

  it('tests a day by BITFIELD rounds when it is large for the batch, and by reading it whole when small: same answers', async () => {
    const big = sizeWindow(200_000, 0.01, 7); // a 341 KB day: read by rounds for batches under ~340 members
    const keys = new Keys(nextPrefix());
    const onRedis = new RedisSeenFilter(redis, keys, fixedLayout(big), { days: 7, cacheBytes: 0 });
    const memory = new MemorySeenFilter(fixedLayout(big), { days: 7 });
    for (let d = 0; d < 3; d++) {
      const batch = ids(`r${d}`, 5_000);
      await Promise.all([
        onRedis.markSeen('u_1', batch, NOW - d * DAY_MS),
        memory.markSeen('u_1', batch, NOW - d * DAY_MS),
      ]);
    }
    for (const size of [3, 40, 400, 3_000]) {
      const probe = [...ids('never', size), ...ids('r0', size / 2), ...ids('r2', size / 2)];
      expect(await onRedis.seen('u_1', probe, NOW), `${size}`).toEqual(await memory.seen('u_1', probe, NOW));
    }
  });

  it('lets concurrent checks fetch each day once (the others test it in Lua meanwhile)', async () => {
    const {
      filters: [f],
    } = setup();
    for (let d = 1; d <= 6; d++) await f!.markSeen('u_1', [`y${d}`], NOW - d * DAY_MS);
    const probe = ['y1', 'y2', 'y3', 'y4', 'y5', 'y6', 'z'];
    const answers = await Promise.all(Array.from({ length: 8 }, () => f!.seen('u_1', probe, NOW)));
    for (const a of answers) expect(a).toEqual([true, true, true, true, true, true, false]);
    expect(f!.cacheStats()).toMatchObject({ days: 6, fetches: 6 });
  });
});
