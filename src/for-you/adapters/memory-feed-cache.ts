/**
 * The for-you page cache (docs/for-you.md) in process (the embedded default): one list of item ids per
 * reader with a time to live, a recall cursor and a refresh lease per reader. JavaScript runs each call to the end
 * before the next starts, so `replace` and `pop` are atomic as the port requires.
 *
 * Expiry reads an injected clock (src/kernel/clock.ts; default the wall clock, like Redis's own): the
 * cache is a session buffer, not history, so it is not meant to follow the engine's virtual time;
 * tests inject a `ManualClock` to let a time to live run out without waiting.
 */
import { systemClock, type Clock } from '../../kernel/clock.js';
import { assertId } from '../../kernel/ids.js';
import type { FeedCache } from '../feed-cache.js';

interface CachedList {
  ids: string[];
  /** Index of the head (popped ids are skipped, not shifted). */
  head: number;
  expiresAt: number;
}

/** {@link FeedCache} over Maps; expired entries are dropped when touched. */
export class MemoryFeedCache implements FeedCache {
  private readonly lists = new Map<string, CachedList>();
  private readonly leases = new Map<string, { token: string; expiresAt: number }>();
  private readonly cursors = new Map<string, { cursor: string; expiresAt: number }>();

  /** @param clock where expiry reads the time (default the wall clock; tests inject a manual one). */
  constructor(private readonly clock: Clock = systemClock) {}

  /** @throws RangeError when `ttlMs` is not a positive integer; FreshetError `INVALID_ID` for a bad reader. */
  async replace(readerId: string, itemIds: readonly string[], ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new RangeError('ttlMs must be a positive integer');
    if (itemIds.length === 0) this.lists.delete(readerId);
    else this.lists.set(readerId, { ids: [...itemIds], head: 0, expiresAt: this.clock.now() + ttlMs });
  }

  /** @throws RangeError when `count` is not a positive integer. */
  async pop(readerId: string, count: number): Promise<{ itemIds: string[]; remaining: number }> {
    assertId(readerId, 'readerId');
    if (!Number.isInteger(count) || count < 1) throw new RangeError('count must be a positive integer');
    const list = this.live(readerId);
    if (!list) return { itemIds: [], remaining: 0 };
    const itemIds = list.ids.slice(list.head, list.head + count);
    list.head += itemIds.length;
    const remaining = list.ids.length - list.head;
    if (remaining === 0) this.lists.delete(readerId); // like Redis: an emptied LIST no longer exists
    return { itemIds, remaining };
  }

  async drop(readerId: string): Promise<void> {
    assertId(readerId, 'readerId');
    this.lists.delete(readerId);
  }

  async forget(readerId: string): Promise<void> {
    assertId(readerId, 'readerId');
    this.lists.delete(readerId);
    this.cursors.delete(readerId);
    this.leases.delete(readerId);
  }

  /** @throws RangeError when `leaseMs` is not a positive integer. */
  async acquireLease(readerId: string, token: string, leaseMs: number): Promise<boolean> {
    assertId(readerId, 'readerId');
    if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new RangeError('leaseMs must be a positive integer');
    const now = this.clock.now();
    const held = this.leases.get(readerId);
    if (held && now < held.expiresAt) return false;
    this.leases.set(readerId, { token, expiresAt: now + leaseMs });
    return true;
  }

  async releaseLease(readerId: string, token: string): Promise<void> {
    assertId(readerId, 'readerId');
    const held = this.leases.get(readerId);
    if (held && held.token === token) this.leases.delete(readerId);
  }

  async getCursor(readerId: string): Promise<string | null> {
    assertId(readerId, 'readerId');
    const c = this.cursors.get(readerId);
    if (!c) return null;
    if (this.clock.now() >= c.expiresAt) {
      this.cursors.delete(readerId);
      return null;
    }
    return c.cursor;
  }

  /** @throws RangeError when `ttlMs` is not a positive integer. */
  async setCursor(readerId: string, cursor: string, ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new RangeError('ttlMs must be a positive integer');
    this.cursors.set(readerId, { cursor, expiresAt: this.clock.now() + ttlMs });
  }

  async close(): Promise<void> {
    this.cursors.clear();
    this.lists.clear();
    this.leases.clear();
  }

  private live(readerId: string): CachedList | undefined {
    const list = this.lists.get(readerId);
    if (list && this.clock.now() >= list.expiresAt) {
      this.lists.delete(readerId);
      return undefined;
    }
    return list;
  }
}
