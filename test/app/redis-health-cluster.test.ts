/**
 * Readiness on a Redis Cluster (src/app/store-health.ts): the probe writes one short-lived key on
 * EVERY master (a hash tag per master, from the slot map), so one node out of memory makes the
 * service not ready although every node answers PING.
 */
import { describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { Keys } from '../../src/kernel/redis/keys.js';
import { PROBE_TTL_MS, probeRedis } from '../../src/app/store-health.js';
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
