/**
 * The HotCounters contract on a real 3-master Redis Cluster (ioredis `Cluster`): every script of the
 * hot ranking touches one slot (the shard's hash tag), and with several shards the rankings spread
 * over the nodes while `top` merges them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cluster } from 'ioredis';
import { RedisHotCounters } from '../src/adapters/redis/hot-counters.js';
import { Keys } from '../src/adapters/redis/keys.js';
import { closeRedis, createRedis } from '../src/adapters/redis/client.js';
import { uniquePrefix } from './support/env.js';
import { deleteByPrefix } from './support/redis.js';
import { startRedisCluster, type TestCluster } from './support/redis-cluster.js';
import { RULES, T0, hotCountersContract, makeHealthy } from './contracts/hot-counters.contract.js';

let cluster: TestCluster;
let redis: Cluster;
const filePrefix = uniquePrefix();
let n = 0;

beforeAll(async () => {
  cluster = await startRedisCluster();
  redis = createRedis({ clusterNodes: cluster.nodes }) as Cluster;
  await redis.ping();
});

afterAll(async () => {
  if (redis) {
    await deleteByPrefix(redis, filePrefix);
    await closeRedis(redis);
  }
  await cluster?.stop();
});

for (const shards of [1, 6]) {
  hotCountersContract(`redis cluster, ${shards} shard${shards > 1 ? 's' : ''}`, async (rules) => {
    const prefix = `${filePrefix}${n++}:`;
    const counters = new RedisHotCounters(redis, new Keys(prefix, 1, shards), rules);
    return {
      counters,
      lose: async () => {
        await deleteByPrefix(redis, prefix);
        return counters;
      },
      cleanup: async () => void (await deleteByPrefix(redis, prefix)),
    };
  });
}

describe('hot shards on a cluster', () => {
  it('spreads 6 shards over the 3 nodes and merges their tops', async () => {
    const prefix = `${filePrefix}${n++}:`;
    const keys = new Keys(prefix, 1, 6);
    const c = new RedisHotCounters(redis, keys, RULES);
    await makeHealthy(c);
    const ids = Array.from({ length: 60 }, (_, i) => `item_${i}`);
    await c.register(ids.map((itemId, i) => ({ itemId, publishedAtMs: T0 - i * 60_000 })));
    for (const [i, id] of ids.entries()) await c.view({ itemId: id, visitorId: `v${i}`, nowMs: T0 });
    const nodes = new Set<string>();
    for (let s = 0; s < 6; s++) {
      const slot = Number(await redis.call('CLUSTER', 'KEYSLOT', keys.hot(s).score()));
      const owner = (redis.slots[slot] ?? [])[0];
      if (owner) nodes.add(owner);
    }
    expect(nodes.size).toBeGreaterThan(1);
    const top = await c.top(10);
    // one view each: the newest items score best, whatever their shard
    expect(top.map((e) => e.itemId)).toEqual(ids.slice(0, 10));
    await deleteByPrefix(redis, prefix);
  });
});
