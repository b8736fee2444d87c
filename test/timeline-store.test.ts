/** The TimelineStore contract on the memory adapter and on standalone Redis, plus Redis-only time to live. */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryTimelineStore } from '../src/adapters/memory/timeline-store.js';
import { RedisTimelineStore, INBOX_EXTRA_LIFE_MS } from '../src/adapters/redis/timeline-store.js';
import { Keys } from '../src/adapters/redis/keys.js';
import { closeRedis, createRedis } from '../src/adapters/redis/client.js';
import { TEST_REDIS_URL, uniquePrefix } from './support/env.js';
import { deleteByPrefix } from './support/redis.js';
import { timelineStoreContract } from './contracts/timeline-store.contract.js';

const redis = createRedis({ url: TEST_REDIS_URL });
const filePrefix = uniquePrefix();
let n = 0;

afterAll(async () => {
  await deleteByPrefix(redis, filePrefix);
  await closeRedis(redis);
});

timelineStoreContract('memory', async () => ({ store: new MemoryTimelineStore(), cleanup: async () => {} }));

timelineStoreContract('redis', async () => {
  const prefix = `${filePrefix}${n++}:`;
  return { store: new RedisTimelineStore(redis, new Keys(prefix)), cleanup: async () => void (await deleteByPrefix(redis, prefix)) };
});

describe('RedisTimelineStore specifics', () => {
  it('keys carry the reader hash tag; the state expires before the inbox; touch refreshes both', async () => {
    const keys = new Keys(`${filePrefix}ttl:`);
    const s = new RedisTimelineStore(redis, keys);
    await s.beginRebuild('r1', 60_000);
    await s.completeRebuild('r1', [5, 6], 0, 800, 60_000);
    expect(keys.inbox('r1')).toContain('{u:r1}');
    expect(keys.inboxMeta('r1')).toContain('{u:r1}');
    const metaTtl = await redis.pttl(keys.inboxMeta('r1'));
    const inboxTtl = await redis.pttl(keys.inbox('r1'));
    expect(metaTtl).toBeGreaterThan(50_000);
    expect(metaTtl).toBeLessThanOrEqual(60_000);
    expect(inboxTtl - metaTtl).toBeGreaterThan(INBOX_EXTRA_LIFE_MS - 5_000);
    await s.touch('r1', 600_000);
    expect(await redis.pttl(keys.inboxMeta('r1'))).toBeGreaterThan(500_000);
    await redis.del(keys.inboxMeta('r1')); // the state expired: the inbox reads as missing
    expect((await s.readInbox('r1', { hi: Infinity, lo: 0, count: 10 })).state).toBe('missing');
  });
});
