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

describe('RedisTimelineStore: packed inboxes (includes/ring.lua)', () => {
  const ALL = { hi: Infinity, lo: 0, count: 10_000 };
  const T = 3_600_000_000_000_000; // a tid of 2026: 1.76e12 ms × 2^11

  it('an inbox at its configured length (800) takes at most 6,300 bytes of Redis, pushes included', async () => {
    const keys = new Keys(file.nextPrefix());
    const s = new RedisTimelineStore(redis, keys);
    const tids = Array.from({ length: 800 }, (_, i) => T + (800 - i) * 2_048_000); // newest first
    await s.beginRebuild('r1', 60_000);
    await s.completeRebuild('r1', tids, 0, 800, 60_000);
    for (let i = 1; i <= 100; i++) await s.pushToInboxes(['r1'], T + (800 + i) * 2_048_000, 800);
    // late pushes land in the middle of the ring
    for (let i = 1; i <= 20; i++) await s.pushToInboxes(['r1'], T + (850 + i) * 2_048_000 + 1, 800);
    const bytes = Number(await redis.call('MEMORY', 'USAGE', keys.inbox('r1'), 'SAMPLES', '0'));
    expect(bytes).toBeLessThanOrEqual(6_300); // 6,216 on Redis 7.0 (a ZSET of 800 tids: ~97,000)
    const slice = await s.readInbox('r1', ALL);
    expect(slice.tids).toHaveLength(800);
    expect(slice.tids[0]).toBe(T + 900 * 2_048_000);
  });

  it('a ZSET inbox or outbox left by an earlier version is converted on first touch: every entry, floor and time to live kept', async () => {
    const keys = new Keys(file.nextPrefix());
    const s = new RedisTimelineStore(redis, keys);
    const legacy = async (zkey: string, hkey: string, tids: number[], state: string | null) => {
      await redis.zadd(zkey, ...tids.flatMap((t) => [t, String(t)]));
      await redis.hset(hkey, ...(state ? ['state', state] : []), 'floor', String(T));
      await redis.pexpire(hkey, 60_000);
      await redis.pexpire(zkey, 60_000 + INBOX_EXTRA_LIFE_MS);
    };
    const tids = Array.from({ length: 300 }, (_, i) => T + 1 + i * 7); // ascending
    const newestFirst = [...tids].reverse();
    // one reader per script that can meet a legacy inbox first
    const touches: [string, () => Promise<unknown>, number[]][] = [
      ['read', () => s.readInbox('read', ALL), newestFirst],
      ['push', () => s.pushToInboxes(['push'], T + 5_000, 800), [T + 5_000, ...newestFirst]],
      ['merge', () => s.mergeIntoInbox('merge', [T + 2], 0, 800), [...newestFirst.slice(0, -1), T + 2, T + 1]],
      ['remove', () => s.removeFromInbox('remove', [T + 1]), newestFirst.slice(0, -1)],
      ['rebuild', () => s.completeRebuild('rebuild', [], 0, 800, 60_000), newestFirst],
    ];
    for (const [r, touch, expected] of touches) {
      await legacy(keys.inbox(r), keys.inboxMeta(r), tids, 'ready');
      await touch();
      expect(await redis.type(keys.inbox(r))).toBe('string');
      expect(await s.readInbox(r, ALL)).toEqual({ state: 'ready', floor: T, tids: expected });
      const ttl = await redis.pttl(keys.inbox(r));
      expect(ttl).toBeGreaterThan(INBOX_EXTRA_LIFE_MS);
      expect(ttl).toBeLessThanOrEqual(INBOX_EXTRA_LIFE_MS + 60_000);
    }
    await legacy(keys.outbox('a1'), keys.outboxMeta('a1'), tids, null);
    expect(await s.readOutboxes(['a1'], { hi: Infinity, lo: 0, count: 5 })).toEqual([
      { floor: T, tids: newestFirst.slice(0, 5) },
    ]);
    await s.appendToOutbox('a1', T + 9_999, 800, 60_000);
    expect((await s.readOutboxes(['a1'], ALL))[0]!.tids).toEqual([T + 9_999, ...newestFirst]);
    // a ZSET an earlier version left without a time to live (issue 10.7) gets its state's at its first push
    await legacy(keys.inbox('nottl'), keys.inboxMeta('nottl'), tids, 'ready');
    await redis.persist(keys.inbox('nottl'));
    await s.pushToInboxes(['nottl'], T + 6_000, 800);
    expect(await redis.pttl(keys.inbox('nottl'))).toBeGreaterThan(INBOX_EXTRA_LIFE_MS);
    // a key of another type under an inbox name is not ours: it fails loudly, nothing is overwritten
    await redis.set(keys.inbox('odd'), 'x');
    await redis.hset(keys.inboxMeta('odd'), 'state', 'ready', 'floor', '0');
    await expect(s.readInbox('odd', ALL)).rejects.toThrow(/tlRead/);
    expect(await redis.get(keys.inbox('odd'))).toBe('x');
  });

  it('reads find any range of a wrapped ring: newest first, strictly inside the bounds', async () => {
    const keys = new Keys(file.nextPrefix());
    const s = new RedisTimelineStore(redis, keys);
    await s.beginRebuild('r1', 60_000);
    await s.completeRebuild('r1', [], 0, 50, 60_000);
    const pushed: number[] = [];
    for (let i = 1; i <= 137; i++) {
      const t = T + i * 10;
      pushed.push(t);
      await s.pushToInboxes(['r1'], t, 50);
    }
    const kept = pushed.slice(-50).reverse(); // newest first; the ring has wrapped twice
    expect(await s.readInbox('r1', ALL)).toEqual({ state: 'ready', floor: pushed[pushed.length - 51], tids: kept });
    for (const [hi, lo, count] of [
      [kept[3]!, kept[20]!, 5],
      [kept[0]! + 1, 0, 50],
      [kept[49]! + 5, 0, 3],
      [Infinity, kept[1]! - 1, 100],
      [kept[10]!, kept[11]!, 9],
    ] as const) {
      const want = kept.filter((t) => t < hi && t > lo).slice(0, count);
      expect((await s.readInbox('r1', { hi, lo, count })).tids).toEqual(want);
    }
  });
});
