/**
 * The for-you page cache (docs/for-you.md) on Redis: `feed:cache:{u:<reader>}` is a LIST of item ids with a
 * time to live (30 min by default), `feed:cursor:{u:<reader>}` the reader's recall cursor (a string with the seen window's
 * time to live), and `feed:lease:{u:<reader>}` a short `SET NX PX` lease that keeps
 * two refreshes of one reader from running at once. Both keys carry the reader's hash tag.
 *
 * Each operation is one round trip: `replace` and `pop` are Lua scripts (feedReplace-1, feedPop-1),
 * hence atomic; the lease is released by compare-and-delete (leaseRelease-1). Expiry is Redis's own
 * wall clock (the cache is a session buffer, not history).
 */
import { assertId } from '../../kernel/ids.js';
import type { FeedCache } from '../feed-cache.js';
import type { Keys } from '../../kernel/redis/keys.js';
import type { RedisClient } from '../../kernel/redis/client.js';
import { redisCall } from '../../kernel/redis/errors.js';
import { LuaScripts } from '../../kernel/redis/lua.js';

/** The feed cache's scripts (src/for-you/lua/): each touches one key of one reader. */
export const FEED_CACHE_SCRIPTS = new LuaScripts(new URL('../lua/', import.meta.url), [
  'feedReplace-1',
  'feedPop-1',
  'leaseRelease-1',
]);

/** {@link FeedCache} over Redis. Does not own the client: `close()` leaves it open. */
export class RedisFeedCache implements FeedCache {
  private readonly lua;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {
    this.lua = FEED_CACHE_SCRIPTS.on(redis);
  }

  /**
   * Atomically replaces the list (DEL, RPUSH in chunks, PEXPIRE `ttlMs` ms); an empty list only drops it.
   * @throws RangeError when `ttlMs` is not a positive integer; FreshetError `INVALID_ID` for a bad reader.
   */
  async replace(readerId: string, itemIds: readonly string[], ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new RangeError('ttlMs must be a positive integer');
    await this.lua.feedReplace([this.keys.feedCache(readerId)], [ttlMs, ...itemIds]);
  }

  /**
   * `LPOP key count` and `LLEN` in one script.
   * @throws RangeError when `count` is not a positive integer.
   */
  async pop(readerId: string, count: number): Promise<{ itemIds: string[]; remaining: number }> {
    assertId(readerId, 'readerId');
    if (!Number.isInteger(count) || count < 1) throw new RangeError('count must be a positive integer');
    const reply = (await this.lua.feedPop([this.keys.feedCache(readerId)], [count])) as [number, ...string[]];
    const [remaining, ...itemIds] = reply;
    return { itemIds, remaining };
  }

  async drop(readerId: string): Promise<void> {
    assertId(readerId, 'readerId');
    await redisCall(this.redis.del(this.keys.feedCache(readerId)));
  }

  /** One DEL of the reader's three keys (one hash tag: one slot on a Cluster). */
  async forget(readerId: string): Promise<void> {
    assertId(readerId, 'readerId');
    const k = this.keys;
    await redisCall(this.redis.del(k.feedCache(readerId), k.feedCursor(readerId), k.feedLease(readerId)));
  }

  /**
   * `SET lease token NX PX leaseMs`.
   * @throws RangeError when `leaseMs` is not a positive integer.
   */
  async acquireLease(readerId: string, token: string, leaseMs: number): Promise<boolean> {
    assertId(readerId, 'readerId');
    if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new RangeError('leaseMs must be a positive integer');
    const ok = await redisCall(this.redis.set(this.keys.feedLease(readerId), token, 'PX', leaseMs, 'NX'));
    return ok === 'OK';
  }

  /** Compare-and-delete: frees the lease only while `token` holds it. */
  async releaseLease(readerId: string, token: string): Promise<void> {
    assertId(readerId, 'readerId');
    await this.lua.leaseRelease([this.keys.feedLease(readerId)], [token]);
  }

  async getCursor(readerId: string): Promise<string | null> {
    assertId(readerId, 'readerId');
    return redisCall(this.redis.get(this.keys.feedCursor(readerId)));
  }

  /** `SET cursor value PX ttlMs`. @throws RangeError when `ttlMs` is not a positive integer. */
  async setCursor(readerId: string, cursor: string, ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new RangeError('ttlMs must be a positive integer');
    await redisCall(this.redis.set(this.keys.feedCursor(readerId), cursor, 'PX', ttlMs));
  }

  /** Nothing to release: the client belongs to whoever created it. */
  async close(): Promise<void> {}
}
