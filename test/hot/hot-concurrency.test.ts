/**
 * Concurrency of the hot counters through the service API: many parallel views of one item by
 * distinct visitors — from four processes' worth of connections to one Redis, and in process — give
 * exactly one PV per view, a UV within the HyperLogLog's error (equal to Redis's own estimate), and
 * no lost or duplicated increment; with repeat visitors, exactly one view per visitor counts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { HLL_STANDARD_ERROR, HyperLogLog } from '../../src/hot/hll.js';
import type { HotCounters, ViewResult } from '../../src/hot/hot-counters.js';
import { MemoryHotCounters } from '../../src/hot/adapters/memory-hot-counters.js';
import { RedisHotCounters } from '../../src/hot/adapters/redis-hot-counters.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { closeRedis, createRedis, type RedisClient } from '../../src/kernel/redis/client.js';
import { HotRanking } from '../../src/hot/service.js';
import { noHotMetrics } from '../../src/hot/hot-metrics.js';
import { silentLogger } from '../../src/kernel/observability.js';
import type { ContentStore } from '../../src/kernel/items/content-store.js';
import { TEST_REDIS_URL, uniquePrefix } from '../support/env.js';
import { deleteByPrefix } from '../support/redis.js';
import { RULES, T0 } from '../contracts/hot-counters.contract.js';

const PUB = T0 - HOUR_MS;
const VIEWS = 8_000;
const clients: RedisClient[] = Array.from({ length: 4 }, () => createRedis({ url: TEST_REDIS_URL }));
const prefix = uniquePrefix();

afterAll(async () => {
  await deleteByPrefix(clients[0]!, prefix);
  await Promise.all(clients.map(closeRedis));
});

/** A content store that knows one item (the service resolves the item through it on first view). */
const oneItem = (id: string) =>
  ({
    getItems: async (ids: readonly string[]) =>
      ids.includes(id)
        ? [
            {
              id,
              authorId: 'a',
              title: id,
              text: '',
              url: null,
              tags: [],
              publishedAt: PUB,
              updateTime: PUB,
              popularity: 0,
            },
          ]
        : [],
  }) as unknown as ContentStore;

function services(stores: HotCounters[], itemId: string): HotRanking[] {
  return stores.map(
    (counters) =>
      new HotRanking(
        { counters, content: oneItem(itemId), metrics: noHotMetrics, log: silentLogger },
        { params: RULES.params, cacheRefreshMs: 60_000, cap: 1000, retentionMs: RULES.retentionMs },
      ),
  );
}

async function hammer(
  hot: HotRanking[],
  itemId: string,
  visitors: (i: number) => string,
  n: number,
): Promise<ViewResult[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) => hot[i % hot.length]!.recordView({ itemId, visitorId: visitors(i), nowMs: T0 })),
  );
}

describe.each([
  [
    'redis, 4 connections',
    (shards: number) => clients.map((c) => new RedisHotCounters(c, new Keys(`${prefix}${shards}:`, 1, shards), RULES)),
  ],
  ['in-process', () => [new MemoryHotCounters(RULES)]],
] as const)('parallel views on %s', (_name, open) => {
  it(`${VIEWS} parallel views by distinct visitors: exact PV, UV within HLL error, no lost increment`, async () => {
    const stores = open(2);
    const hot = services(stores, 'viral');
    const results = await hammer(hot, 'viral', (i) => `visitor_${i}`, VIEWS);
    expect(results.every((r) => r.verdict === 'counted')).toBe(true);
    // every increment was seen exactly once: the PVs returned are 1..VIEWS
    const pvs = results.map((r) => r.pv).sort((a, b) => a - b);
    expect(pvs).toEqual(Array.from({ length: VIEWS }, (_, i) => i + 1));
    const [c] = await stores[0]!.counters(['viral']);
    expect(c!.pv).toBe(VIEWS);
    const exact = new HyperLogLog();
    for (let i = 0; i < VIEWS; i++) exact.add(`visitor_${i}`);
    expect(c!.uv).toBe(exact.count()); // the same registers as Redis's PFADD
    expect(Math.abs(c!.uv - VIEWS) / VIEWS).toBeLessThan(3 * HLL_STANDARD_ERROR);
  });

  it('parallel repeats: exactly one view per visitor counts, the rest are isolated as repeats', async () => {
    const stores = open(1);
    const hot = services(stores, 'loop');
    const results = await hammer(hot, 'loop', (i) => `v${i % 1000}`, 4000);
    expect(results.filter((r) => r.verdict === 'counted')).toHaveLength(1000);
    expect(results.filter((r) => r.verdict === 'repeat')).toHaveLength(3000);
    const [c] = await stores[0]!.counters(['loop']);
    expect(c).toMatchObject({ pv: 1000, suspicious: { repeat: 3000, budget: 0, flagged: 0 } });
  });
});
