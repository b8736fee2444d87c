/** The FeedCache contract on the memory adapter (a manual clock) and on standalone Redis (its keys' time to live). */
import { ManualClock } from '../../src/kernel/clock.js';
import { MemoryFeedCache } from '../../src/for-you/adapters/memory-feed-cache.js';
import { RedisFeedCache } from '../../src/for-you/adapters/redis-feed-cache.js';
import { adopt, memory, redisEngine } from '../support/contract.js';
import { feedCacheContract } from '../contracts/feed-cache.contract.js';

adopt(feedCacheContract, memory, () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 5));
  return { cache: new MemoryFeedCache(clock), elapse: async (ms) => clock.advance(ms) };
});

adopt(feedCacheContract, redisEngine(), ({ redis, keys, elapse }) => ({
  cache: new RedisFeedCache(redis, keys),
  elapse,
}));
