/** The GroupedView contract on the in-process adapter and on standalone Redis and the 3-node Cluster. */
import { MemoryGroupedView } from '../../src/notifications/adapters/memory-grouped-view.js';
import { RedisGroupedView } from '../../src/notifications/adapters/redis-grouped-view.js';
import { adopt, memory, redisClusterEngine, redisEngine } from '../support/contract.js';
import { groupedViewContract } from '../contracts/grouped-view.contract.js';

adopt(groupedViewContract, memory, async (_place, maxGroups: number) => new MemoryGroupedView({ maxGroups }));
adopt(
  groupedViewContract,
  redisEngine(),
  async ({ redis, keys }, maxGroups: number) => new RedisGroupedView(redis, keys, { maxGroups, ttlMs: 60_000 }),
);
adopt(
  groupedViewContract,
  redisClusterEngine(),
  async ({ redis, keys }, maxGroups: number) => new RedisGroupedView(redis, keys, { maxGroups, ttlMs: 60_000 }),
);
