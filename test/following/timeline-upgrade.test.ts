/**
 * Upgrade of the following timeline's Redis encoding: inboxes and outboxes left by the previous version
 * (ZSETs whose members and scores are tids, beside the same state HASH) keep serving after the upgrade.
 * A reader who began paging before the upgrade goes on with its `max_id` and sees every item exactly
 * once, from the converted inbox and the converted celebrity outbox, while new items are published
 * between its pages: the first push converts the inbox, the first append the outbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { T0, startTestApp, type TestApp } from '../support/app.js';
import { MIN, follow, page, publish, register, settle, truth, withWorker } from '../support/following.js';
import { closeRedis, createRedis, type RedisClient } from '../../src/kernel/redis/client.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { TEST_REDIS_URL } from '../support/env.js';

// Nothing trims here: a trim raises a floor, and below the highest floor PostgreSQL answers — it would
// hide an entry a faulty conversion lost. (Floors are carried over untouched: test/following/timeline-store.test.ts.)
const ENV = { FRESHET_CELEBRITY_THRESHOLD: '2', FRESHET_INBOX_LENGTH: '200', FRESHET_OUTBOX_LENGTH: '50' };

/** Rewrites a packed box as the ZSET the previous version kept (member = score = tid), with its time to live. */
async function toLegacy(redis: RedisClient, key: string, tids: number[]): Promise<void> {
  const ttl = await redis.pttl(key);
  await redis.del(key);
  await redis.zadd(key, ...tids.flatMap((t) => [t, String(t)]));
  if (ttl > 0) await redis.pexpire(key, ttl);
}

describe('following timeline: inboxes left by the previous version (Redis + PostgreSQL)', () => {
  let t: TestApp;
  let redis: RedisClient;
  let keys: Keys;
  beforeAll(async () => {
    t = withWorker(await startTestApp({ hot: 'redis', db: 'postgres', env: ENV }));
    redis = createRedis({ url: TEST_REDIS_URL });
    keys = new Keys(t.config.keyPrefix);
  });
  afterAll(async () => {
    if (redis) await closeRedis(redis);
    await t?.close();
  });

  it('are served with no entry lost or repeated across max_id paging begun before the upgrade', async () => {
    const authors = Array.from({ length: 6 }, (_, i) => `u_a${i}`);
    await register(t, ...authors, 'u_f1', 'u_f2');
    for (const a of authors) await follow(t, 'u_r', a);
    for (const f of ['u_f1', 'u_f2']) await follow(t, f, 'u_a0'); // u_a0: 3 followers, a celebrity (pulled)
    await page(t, 'u_r', T0); // the reader is active: its inbox exists
    let now = T0;
    for (let round = 0; round < 20; round++) {
      now += MIN;
      for (const a of authors) await publish(t, a, [`${a}_${round}`], now);
    }
    await settle(t);
    const expected = await truth(t, 'u_r');
    expect(expected).toHaveLength(120);
    const first = await page(t, 'u_r', now, { limit: 15 });
    expect(first.ids).toEqual(expected.slice(0, 15));

    // the upgrade: the reader's inbox and the celebrity's outbox are what the previous version left
    const store = t.f.following.store;
    const all = { hi: Infinity, lo: 0, count: 10_000 };
    await toLegacy(redis, keys.inbox('u_r'), (await store.readInbox('u_r', all)).tids);
    await toLegacy(redis, keys.outbox('u_a0'), (await store.readOutboxes(['u_a0'], all))[0]!.tids);
    expect(await redis.type(keys.inbox('u_r'))).toBe('zset');
    expect(await redis.zcard(keys.inbox('u_r'))).toBe(100);
    expect(await redis.zcard(keys.outbox('u_a0'))).toBe(20);
    expect(await redis.type(keys.outbox('u_a0'))).toBe('zset');

    const seen = [...first.ids];
    let next = first.next;
    let rounds = 0;
    for (; next && rounds < 100; rounds++) {
      const guard = rounds;
      // new items between pages: pushed into the converted inbox, appended to the converted outbox
      now += MIN;
      await publish(t, 'u_a1', [`new_${guard}`], now);
      await publish(t, 'u_a0', [`newc_${guard}`], now);
      await settle(t);
      const p = await page(t, 'u_r', now, { limit: 15, max_id: next });
      seen.push(...p.ids);
      next = p.next;
    }
    expect(next).toBeNull();
    expect(new Set(seen).size).toBe(seen.length); // no repeats
    expect(seen).toEqual(expected); // no losses, in order
    expect(await redis.type(keys.inbox('u_r'))).toBe('string');
    expect(await redis.type(keys.outbox('u_a0'))).toBe('string');
    // the new items are there too, on the next first page
    const top = await page(t, 'u_r', now, { limit: 10 });
    const last = rounds - 1;
    expect(top.ids.slice(0, 4)).toEqual([`newc_${last}`, `new_${last}`, `newc_${last - 1}`, `new_${last - 1}`]);
    expect(await truth(t, 'u_r')).toEqual([...(await pageAllIds(t, now))]);
  });
});

/** Every id of the reader's timeline, paging by 25. */
async function pageAllIds(t: TestApp, now: number): Promise<string[]> {
  const out: string[] = [];
  let next: string | null | undefined;
  do {
    const p = await page(t, 'u_r', now, { limit: 25, ...(next ? { max_id: next } : {}) });
    out.push(...p.ids);
    next = p.next;
  } while (next);
  return out;
}
