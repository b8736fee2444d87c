/**
 * The hot ranking's pure parts: note 2's score and parameter ranges, `range` parsing, and the
 * HyperLogLog that must equal Redis's PFADD/PFCOUNT bit for bit (checked against a real Redis).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { DAY_MS, HOUR_MS } from '../../src/kernel/clock.js';
import { HLL_STANDARD_ERROR, HyperLogLog, hllPosition, murmurHash64A } from '../../src/hot/hll.js';
import {
  DEFAULT_HOT_PARAMS,
  MAX_RANGE_MS,
  RANGE_PATTERN,
  assertHotParams,
  hotScore,
  hoursSincePublish,
  parseRange,
} from '../../src/hot/domain.js';
import { closeRedis, createRedis } from '../../src/kernel/redis/client.js';
import { TEST_REDIS_URL, uniquePrefix } from '../support/env.js';
import { deleteByPrefix } from '../support/redis.js';

const redis = createRedis({ url: TEST_REDIS_URL });
const prefix = uniquePrefix();
afterAll(async () => {
  await deleteByPrefix(redis, prefix);
  await closeRedis(redis);
});

describe("note 2's score", () => {
  it('is (α·pv + β·uv) / (hours + base)^γ with α 1.0, β 1.2, base 2, γ 1.5', () => {
    expect(DEFAULT_HOT_PARAMS).toEqual({ alpha: 1, beta: 1.2, base: 2, gamma: 1.5 });
    expect(hotScore(100, 80, 0, DEFAULT_HOT_PARAMS)).toBeCloseTo(196 / 2 ** 1.5, 12);
    expect(hotScore(100, 80, 22, DEFAULT_HOT_PARAMS)).toBeCloseTo(196 / 24 ** 1.5, 12);
    // HN gravity is the same shape: (P - 1) / (T + 2)^1.8
    expect(hotScore(9, 0, 3, { alpha: 1, beta: 0, base: 2, gamma: 1.8 })).toBeCloseTo(9 / 5 ** 1.8, 12);
  });

  it("counts hours from publication in seconds, 0 before publication (as the note's Lua)", () => {
    const pubSec = 1_474_329_600;
    expect(hoursSincePublish(pubSec * 1000 + 90 * 60_000, pubSec * 1000)).toBe(1.5);
    expect(hoursSincePublish(pubSec * 1000 + 90 * 60_000, pubSec * 1000 + 999)).toBe(1.5); // whole seconds, as Redis keeps it
    expect(hoursSincePublish(pubSec * 1000 - 1, pubSec * 1000)).toBe(0);
  });

  it('rejects parameters out of their ranges', () => {
    expect(() => assertHotParams({ ...DEFAULT_HOT_PARAMS, gamma: 1.2 })).toThrow(/gamma/);
    expect(() => assertHotParams({ ...DEFAULT_HOT_PARAMS, gamma: 1.9 })).toThrow(/gamma/);
    expect(() => assertHotParams({ ...DEFAULT_HOT_PARAMS, base: 0 })).toThrow(/base/);
    expect(() => assertHotParams({ ...DEFAULT_HOT_PARAMS, alpha: 0, beta: 0 })).toThrow(/both/);
    expect(assertHotParams({ alpha: 0, beta: 1, base: 0.1, gamma: 1.8 })).toBeTruthy();
  });

  it('is configured from the environment within the same ranges', () => {
    const base = { FRESHET_SERVICE_KEY: 'k'.repeat(20), FRESHET_SECRET: 's'.repeat(20) };
    expect(loadConfig(base).hot).toMatchObject({
      params: DEFAULT_HOT_PARAMS,
      rateWindowMs: 600_000,
      cacheRefreshMs: 60_000,
      cap: 1000,
      shards: 1,
      retentionMs: 90 * DAY_MS,
    });
    expect(loadConfig({ ...base, FRESHET_HOT_GAMMA: '1.3', FRESHET_HOT_RATE_WINDOW_MIN: '15' }).hot).toMatchObject({
      params: { gamma: 1.3 },
      rateWindowMs: 900_000,
    });
    for (const [k, v] of [
      ['FRESHET_HOT_GAMMA', '2'],
      ['FRESHET_HOT_RATE_WINDOW_MIN', '9'],
      ['FRESHET_HOT_CACHE_REFRESH_S', '30'],
      ['FRESHET_HOT_CACHE_REFRESH_S', '121'],
      ['FRESHET_HOT_CAP', '0'],
      ['FRESHET_HOT_SHARDS', '0'],
      ['FRESHET_HOT_SHARDS', 'many'],
    ]) {
      expect(() => loadConfig({ ...base, [k!]: v })).toThrow(new RegExp(k!));
    }
    expect(() => loadConfig({ ...base, FRESHET_HOT_ALPHA: '0', FRESHET_HOT_BETA: '0' })).toThrow(/ALPHA/);
  });

  it('spreads the hot ranking over 12 shards by default on a Redis Cluster, 1 elsewhere; an explicit count wins', () => {
    const base = { FRESHET_SERVICE_KEY: 'k'.repeat(20), FRESHET_SECRET: 's'.repeat(20) };
    const nodes = { FRESHET_REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001' };
    expect(loadConfig({ ...base, FRESHET_REDIS_URL: 'redis://127.0.0.1:6379' }).hot.shards).toBe(1);
    expect(loadConfig({ ...base, ...nodes }).hot.shards).toBe(12);
    expect(loadConfig({ ...base, ...nodes, FRESHET_HOT_SHARDS: 'auto' }).hot.shards).toBe(12);
    expect(loadConfig({ ...base, ...nodes, FRESHET_HOT_SHARDS: '1' }).hot.shards).toBe(1);
    expect(loadConfig({ ...base, FRESHET_HOT_SHARDS: '16' }).hot.shards).toBe(16);
  });
});

describe('range', () => {
  it('accepts <n>h and <n>d from 1h to 30d', () => {
    expect(parseRange('72h')).toBe(72 * HOUR_MS);
    expect(parseRange('1h')).toBe(HOUR_MS);
    expect(parseRange('3d')).toBe(3 * DAY_MS);
    expect(parseRange('30d')).toBe(30 * DAY_MS);
    expect(parseRange('720h')).toBe(30 * DAY_MS);
    for (const bad of ['0h', '721h', '31d', '72', 'h', '-3h', '3w', '1.5h', ' 72h', '72H', '', '072h', '00030d'])
      expect(parseRange(bad), bad).toBeNull();
  });

  it("the query schema's pattern admits exactly the counts from 1h to 30d (MAX_RANGE_MS)", () => {
    const re = new RegExp(RANGE_PATTERN, 'u'); // as Ajv compiles it
    for (let n = 0; n <= 1000; n++) {
      for (const [unit, ms] of [
        ['h', HOUR_MS],
        ['d', DAY_MS],
      ] as const) {
        const inBounds = n >= 1 && n * ms <= MAX_RANGE_MS;
        expect(re.test(`${n}${unit}`), `${n}${unit}`).toBe(inBounds);
        expect(parseRange(`${n}${unit}`)).toBe(inBounds ? n * ms : null);
      }
    }
  });
});

describe('HyperLogLog = Redis', () => {
  it('puts each element in the register Redis puts it in, with the same value (MurmurHash64A, seed 0xadc83b19)', async () => {
    for (const el of ['a', 'visitor_1', 'U12345', 'é中😀', 'x'.repeat(100)]) {
      const key = `${prefix}one:${Buffer.from(el).toString('hex').slice(0, 40)}`;
      await redis.pfadd(key, el);
      const set: [number, number][] = [];
      const parsed = HyperLogLog.fromRedis((await redis.getBuffer(key))!);
      parsed['forEachRegister']((i: number, v: number) => set.push([i, v]));
      const { index, value } = hllPosition(el);
      expect(set, el).toEqual([[index, value]]);
      const h = murmurHash64A(new TextEncoder().encode(el));
      expect(Number(h & 16383n)).toBe(index);
    }
  });

  it('estimates exactly what PFCOUNT estimates, from 1 to 100,000 elements, ASCII or not', async () => {
    const key = `${prefix}hll`;
    const hll = new HyperLogLog();
    const checkpoints = new Set([1, 2, 10, 100, 500, 513, 1_000, 5_000, 20_000, 50_000, 100_000]);
    const batch: string[] = [];
    for (let i = 1; i <= 100_000; i++) {
      const el = i % 7 === 0 ? `visiteur-${i}-é中` : `visitor_${i}`;
      hll.add(el);
      batch.push(el);
      if (checkpoints.has(i)) {
        await redis.pfadd(key, ...batch.splice(0));
        const count = await redis.pfcount(key);
        expect(hll.count(), `at ${i}`).toBe(count);
        expect(Math.abs(count - i) / i).toBeLessThan(i < 1000 ? 0.02 : 3 * HLL_STANDARD_ERROR);
      }
    }
  });

  it('reads Redis sparse and dense strings, and writes strings Redis accepts and merges', async () => {
    for (const n of [3, 300, 3_000, 30_000]) {
      const key = `${prefix}h${n}`;
      const ours = new HyperLogLog();
      const members = Array.from({ length: n }, (_, i) => `m${n}_${i}`);
      members.forEach((m) => ours.add(m));
      await redis.pfadd(key, ...members);
      const raw = (await redis.getBuffer(key))!;
      expect(HyperLogLog.fromRedis(raw).count()).toBe(ours.count());
      await redis.set(`${key}:ours`, ours.toRedis());
      expect(await redis.pfcount(`${key}:ours`)).toBe(await redis.pfcount(key));
      await redis.pfadd(`${key}:ours`, 'one-more');
      await redis.pfmerge(`${key}:merged`, key, `${key}:ours`);
      const merged = HyperLogLog.fromRedis(ours.toRedis());
      merged.add('one-more');
      expect(await redis.pfcount(`${key}:merged`)).toBe(merged.count());
    }
  });

  it('rejects strings that are not a HyperLogLog', () => {
    expect(() => HyperLogLog.fromRedis(Buffer.from('hello world, not an HLL'))).toThrow(/not a Redis/);
    const bad = new HyperLogLog().toRedis();
    bad[4] = 7;
    expect(() => HyperLogLog.fromRedis(bad)).toThrow(/encoding/);
  });
});
