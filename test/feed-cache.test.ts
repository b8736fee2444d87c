/** The FeedCache contract on the memory adapter (injected clock) and on standalone Redis (real time). */
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryFeedCache } from '../src/adapters/memory/feed-cache.js';
import { RedisFeedCache } from '../src/adapters/redis/feed-cache.js';
import { Keys } from '../src/adapters/redis/keys.js';
import { deleteByPrefix, fileRedis } from './support/redis.js';
import { feedCacheContract } from './contracts/feed-cache.contract.js';

const { redis, nextPrefix } = fileRedis();

feedCacheContract('memory', async () => {
  let now = Date.UTC(2026, 2, 5);
  return {
    cache: new MemoryFeedCache(() => now),
    cleanup: async () => {},
    elapse: async (ms) => void (now += ms),
  };
});

feedCacheContract('redis', async () => {
  const prefix = nextPrefix();
  return {
    cache: new RedisFeedCache(redis, new Keys(prefix)),
    cleanup: async () => void (await deleteByPrefix(redis, prefix)),
    elapse: (ms) => sleep(ms),
  };
});
