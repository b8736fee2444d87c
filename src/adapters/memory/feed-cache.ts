/**
 * The for-you page cache of note 1 in process (the embedded default): one list of item ids per
 * reader with a time to live, and a refresh lease per reader. JavaScript runs each call to the end
 * before the next starts, so `replace` and `pop` are atomic as the port requires.
 *
 * Expiry reads an injected wall clock (`() => epoch ms`, default `Date.now`), like Redis's own clock:
 * the cache is a session buffer, not history, so it does not follow the engine's virtual time.
 */
import { assertId } from '../../domain/ids.js';
import type { FeedCache } from '../../ports/feed-cache.js';

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

  /** @param now the wall clock in epoch ms (tests inject a fake one). */
  constructor(private readonly now: () => number = Date.now) {}

  /** @throws RangeError when `ttlMs` is not a positive integer; FreshetError `INVALID_ID` for a bad reader. */
  async replace(readerId: string, itemIds: readonly string[], ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new RangeError('ttlMs must be a positive integer');
    if (itemIds.length === 0) this.lists.delete(readerId);
    else this.lists.set(readerId, { ids: [...itemIds], head: 0, expiresAt: this.now() + ttlMs });
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

  /** @throws RangeError when `leaseMs` is not a positive integer. */
  async acquireLease(readerId: string, token: string, leaseMs: number): Promise<boolean> {
    assertId(readerId, 'readerId');
    if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new RangeError('leaseMs must be a positive integer');
    const now = this.now();
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

  async close(): Promise<void> {
    this.lists.clear();
    this.leases.clear();
  }

  private live(readerId: string): CachedList | undefined {
    const list = this.lists.get(readerId);
    if (list && this.now() >= list.expiresAt) {
      this.lists.delete(readerId);
      return undefined;
    }
    return list;
  }
}
