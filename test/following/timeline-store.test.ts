/** The TimelineStore contract on the memory adapter and on standalone Redis, plus Redis-only time to live. */
import { describe, expect, it } from 'vitest';
import { MemoryTimelineStore } from '../../src/following/adapters/memory-timeline-store.js';
import { RedisTimelineStore, INBOX_EXTRA_LIFE_MS } from '../../src/following/adapters/redis-timeline-store.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { MISSING_FLOOR } from '../../src/following/timeline-store.js';
import { fileRedis } from '../support/redis.js';
import { adopt, memory, redisEngine } from '../support/contract.js';
import { timelineStoreContract } from '../contracts/timeline-store.contract.js';

const file = fileRedis();
const { redis } = file;

adopt(timelineStoreContract, memory, () => ({ store: new MemoryTimelineStore() }));
adopt(timelineStoreContract, redisEngine(file), ({ redis, keys }) => ({ store: new RedisTimelineStore(redis, keys) }));

describe('RedisTimelineStore specifics', () => {
  it('keys carry the reader hash tag; the state expires before the inbox; touch refreshes both', async () => {
    const keys = new Keys(file.nextPrefix());
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

describe('RedisTimelineStore: no key without a time to live (issue 10.7)', () => {
  const ALL = { hi: Infinity, lo: 0, count: 10 };
  /** Asserts `key` exists and expires `extraMs` (± 5 s) after `state`. */
  async function expiresAfter(key: string, state: string, extraMs: number) {
    const [k, st] = [await redis.pttl(key), await redis.pttl(state)];
    expect(st).toBeGreaterThan(0);
    expect(Math.abs(k - st - extraMs)).toBeLessThan(5_000);
  }

  it('a push or a backfill into an inbox that its rebuild found empty inherits the state time to live', async () => {
    const keys = new Keys(file.nextPrefix());
    const s = new RedisTimelineStore(redis, keys);
    for (const r of ['r1', 'r2', 'r3']) {
      await s.beginRebuild(r, 60_000);
      await s.completeRebuild(r, [], 0, 800, 60_000); // empty: no ZSET yet
      expect(await redis.exists(keys.inbox(r))).toBe(0);
    }
    expect(await s.pushToInboxes(['r1', 'r2'], 10, 800)).toBe(2); // the ZADD creates the ZSETs
    expect(await s.mergeIntoInbox('r3', [7, 8], 0, 800)).toBe(true);
    for (const r of ['r1', 'r2', 'r3']) await expiresAfter(keys.inbox(r), keys.inboxMeta(r), INBOX_EXTRA_LIFE_MS);
    // a push while building (before the state's first merge) too
    await s.beginRebuild('r4', 60_000);
    await s.pushToInboxes(['r4'], 11, 800);
    await expiresAfter(keys.inbox('r4'), keys.inboxMeta('r4'), INBOX_EXTRA_LIFE_MS);
  });

  it('an outbox lives ttlMs after its last append; an expired one reads as missing and restarts with a floor', async () => {
    const keys = new Keys(file.nextPrefix());
    const s = new RedisTimelineStore(redis, keys);
    await s.appendToOutbox('a1', 100, 800, 60_000);
    await expiresAfter(keys.outbox('a1'), keys.outboxMeta('a1'), INBOX_EXTRA_LIFE_MS);
    await redis.pexpire(keys.outboxMeta('a1'), 1_000);
    await s.appendToOutbox('a1', 101, 800, 120_000); // refreshed by a publish
    expect(await redis.pttl(keys.outboxMeta('a1'))).toBeGreaterThan(60_000);
    await redis.del(keys.outboxMeta('a1'), keys.outbox('a1')); // expired (or lost with Redis)
    expect(await s.readOutboxes(['a1'], ALL)).toEqual([{ floor: MISSING_FLOOR, tids: [] }]);
    await s.appendToOutbox('a1', 105, 800, 60_000);
    expect(await s.readOutboxes(['a1'], ALL)).toEqual([{ floor: 104, tids: [105] }]);
  });
});
