/**
 * Readiness on a Redis Cluster (src/observe/store-health.ts): the probe writes one short-lived key on
 * EVERY master (a hash tag per master, from the slot map), so one node out of memory makes the
 * service not ready although every node answers PING. The Overview's Redis readings work there too:
 * the readers-active sketches (one hash tag) and used_memory summed over the masters.
 */
import { describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { Keys } from '../../src/kernel/redis/keys.js';
import { PROBE_TTL_MS, probeRedis } from '../../src/observe/store-health.js';
import { RedisActiveReaders } from '../../src/observe/active-readers.js';
import { redisMemory } from '../../src/observe/overview-metrics.js';
import { fileCluster } from '../support/redis-cluster.js';

const cluster = fileCluster();

describe('readiness on a 3-master Cluster', () => {
  it('writes one probe key per master, each expiring', async () => {
    const keys = new Keys(cluster.nextPrefix());
    expect(await probeRedis(cluster.redis, keys)).toEqual({ ready: true, reason: null });
    const masters: Redis[] = cluster.redis.nodes('master');
    expect(masters.length).toBe(3);
    for (const node of masters) {
      const found = await node.keys(`${keys.prefix}ready:*`);
      expect(found.length, node.options.port?.toString()).toBe(1);
      const ttl = await node.pttl(found[0]!);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(PROBE_TTL_MS);
    }
  });

  it('one master out of memory: not ready, reason OOM; ready again once it has room', async () => {
    const keys = new Keys(cluster.nextPrefix());
    const node = cluster.redis.nodes('master')[1]!;
    const [, before] = (await node.config('GET', 'maxmemory')) as [string, string];
    await node.config('SET', 'maxmemory-policy', 'noeviction');
    await node.config('SET', 'maxmemory', '1');
    try {
      expect(await node.ping()).toBe('PONG');
      expect(await probeRedis(cluster.redis, keys)).toEqual({
        ready: false,
        reason: 'Redis unavailable: out of memory (OOM)',
      });
    } finally {
      await node.config('SET', 'maxmemory', before);
    }
    expect(await probeRedis(cluster.redis, keys)).toEqual({ ready: true, reason: null });
  });
});

describe("the Overview's Redis readings on a 3-master Cluster", () => {
  it('readers active: marks and counts on one slot (no CROSSSLOT), the hour window forgetting after an hour', async () => {
    const keys = new Keys(cluster.nextPrefix());
    const active = new RedisActiveReaders(cluster.redis, keys, (err) => {
      throw err;
    });
    const t0 = Date.UTC(2026, 2, 6, 12);
    for (const r of ['c_a', 'c_b', 'c_c', 'c_a']) active.mark(r, t0);
    active.mark('c_d', t0 + 30 * 60_000);
    await expect.poll(() => active.count(t0 + 30 * 60_000)).toEqual({ hour: 4, day: 4 });
    expect(await active.count(t0 + 2 * 3_600_000)).toEqual({ hour: 0, day: 4 });
    const found = await Promise.all(cluster.redis.nodes('master').map((n) => n.keys(`${keys.prefix}active:*`)));
    expect(found.filter((k) => k.length > 0).length).toBe(1); // every bucket on one master
    expect(found.flat().length).toBe(3); // two 5-minute buckets and one hourly bucket
  });

  it('used_memory is the sum over the masters', async () => {
    const each = await Promise.all(
      cluster.redis.nodes('master').map(async (n) => Number(/^used_memory:(\d+)/m.exec(await n.info('memory'))![1])),
    );
    const sum = await redisMemory(cluster.redis);
    expect(sum).toBeGreaterThan(Math.max(...each)); // more than any one master: all three are counted
    expect(Math.abs(sum - each.reduce((a, b) => a + b, 0))).toBeLessThan(1_000_000); // allocations in between
  });
});
