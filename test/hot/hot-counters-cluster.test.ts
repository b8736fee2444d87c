/**
 * The HotCounters contract on a real 3-master Redis Cluster (ioredis `Cluster`): every script of the
 * hot ranking touches one slot (the shard's hash tag), and with several shards the rankings spread
 * over the nodes while `top` merges them.
 */
import { describe, expect, it } from 'vitest';
import { RedisHotCounters } from '../../src/hot/adapters/redis-hot-counters.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { deleteByPrefix } from '../support/redis.js';
import { fileCluster } from '../support/redis-cluster.js';
import { adopt, redisClusterEngine } from '../support/contract.js';
import { redisHotCounters, shardsLabel } from '../support/adapters.js';
import { RULES, T0, hotCountersContract, makeHealthy } from '../contracts/hot-counters.contract.js';

const file = fileCluster();
const engine = redisClusterEngine(file);

for (const shards of [1, 6])
  adopt(hotCountersContract, engine, redisHotCounters(shards), `redis cluster, ${shardsLabel(shards)}`);

describe('hot shards on a cluster', () => {
  it('spreads 6 shards over the 3 nodes and merges their tops', async () => {
    const prefix = file.nextPrefix();
    const keys = new Keys(prefix, 1, 6);
    const c = new RedisHotCounters(file.redis, keys, RULES);
    await makeHealthy(c);
    const ids = Array.from({ length: 60 }, (_, i) => `item_${i}`);
    await c.register(ids.map((itemId, i) => ({ itemId, publishedAtMs: T0 - i * 60_000 })));
    for (const [i, id] of ids.entries()) await c.view({ itemId: id, visitorId: `v${i}`, nowMs: T0 });
    const nodes = new Set<string>();
    for (let s = 0; s < 6; s++) {
      const slot = Number(await file.redis.call('CLUSTER', 'KEYSLOT', keys.hot(s).score()));
      const owner = (file.redis.slots[slot] ?? [])[0];
      if (owner) nodes.add(owner);
    }
    expect(nodes.size).toBeGreaterThan(1);
    const top = await c.top(10);
    // one view each: the newest items score best, whatever their shard
    expect(top.map((e) => e.itemId)).toEqual(ids.slice(0, 10));
    await deleteByPrefix(file.redis, prefix);
  });
});
