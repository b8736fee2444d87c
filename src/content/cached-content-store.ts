/**
 * CachedContentStore: the ContentStore with an in-process cache of live items in front of hydration
 * (`getItems`), so that a page served from a reader's cache (a for-you `load_more`, a discover or hot
 * page) costs no database round trip once its items have been hydrated by any reader in this process.
 * Everything but `getItems` passes through.
 *
 * Freshness: the cache holds only live items, as the store returned them. This process's writes and
 * deletes drop their ids before they resolve (after the commit), and are published through
 * {@link ItemChanges} to the other processes, which drop them when the message arrives (Redis pub/sub:
 * 1–3 ms between two processes on loopback, test/kernel/item-cache.test.ts). While the subscription is down or unconfirmed (`live` false) the
 * cache is bypassed, and it is emptied when it comes back (messages may have been lost meanwhile). Every
 * entry also lapses `ttlMs` after it was read from the store: the bound on a stale copy when a writer
 * dies between its commit and its publish, or when a Redis Cluster moves the subscription to another
 * node. A read that was in flight when an id changed is returned but not cached (it may predate the
 * change), so a copy is never older than the last change this process heard of.
 *
 * Size: at most `maxItems` items (LRU; `lru-cache`). An item is the size of its title, text and tags,
 * about 1 KB for a Hacker News story with text; 20,000 items ≈ 20–40 MB per process.
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../kernel/clock.js';
import type { Item } from '../kernel/items/item.js';
import type { ContentStore, GetItemsOptions, ItemInput, UpsertOptions } from '../kernel/items/content-store.js';
import type { ItemChanges } from '../kernel/items/item-changes.js';

/** Settings of the item cache (`FRESHET_ITEM_CACHE_SIZE`, `FRESHET_ITEM_CACHE_TTL_S`). */
export interface ItemCacheSettings {
  /**
   * Items kept at most (LRU). 0 keeps none: every hydration reads the store, while writes still drop and
   * publish their ids (other processes' caches and fill pools hear them all the same).
   */
  maxItems: number;
  /** How long an entry may be served after it was read from the store, ms. */
  ttlMs: number;
}

/** What a hydration found: ids served from memory, read from the store, or read while the cache was bypassed. */
export type ItemCacheResult = 'hit' | 'miss' | 'bypass';

/** Counts of lookups (ids, not calls) by result, for `/metrics`. */
export interface ItemCacheMetrics {
  lookups(result: ItemCacheResult, ids: number): void;
}

export class CachedContentStore implements ContentStore {
  private readonly items: LRUCache<string, Item>;
  /** False when `maxItems` is 0: nothing is kept, every hydration reads the store. */
  private readonly keeps: boolean;
  /** Bumped on every change heard or made; a read caches only ids not changed since it started. */
  private seq = 0;
  /** The `seq` of the last reset: reads started before it cache nothing. */
  private resetSeq = 0;
  /** id → `seq` of its last change, kept while reads are in flight (cleared when none is). */
  private readonly changedAt = new Map<string, number>();
  private inFlight = 0;

  /**
   * @param store the store of record (its `close` is this one's);
   * @param changes how processes tell each other about writes (LocalItemChanges for one process);
   * @param clock the entries' age is measured on it (wall time in production).
   */
  constructor(
    private readonly store: ContentStore,
    private readonly changes: ItemChanges,
    settings: ItemCacheSettings,
    clock: Clock,
    private readonly metrics?: ItemCacheMetrics,
  ) {
    this.keeps = settings.maxItems > 0;
    this.items = new LRUCache<string, Item>({
      max: Math.max(1, settings.maxItems),
      ttl: settings.ttlMs,
      ttlResolution: 0,
      perf: { now: () => clock.now() },
    });
    changes.subscribe({ changed: (w, d) => this.forget([...w, ...d]), reset: () => this.reset() });
  }

  /**
   * Live items for `ids` in their order (the store's contract: unknown and deleted ids skipped, a
   * repeated id once): cached ones from memory, the rest in one store read, which are then cached.
   * `fresh` (or `maxItems` 0): all from the store, the cache neither read nor filled.
   * @throws store errors, as the store throws them (nothing is cached then).
   */
  async getItems(ids: readonly string[], opts: GetItemsOptions = {}): Promise<Item[]> {
    const unique = [...new Set(ids)];
    if (opts.fresh || !this.keeps) return this.store.getItems(unique);
    if (!this.changes.live) {
      this.metrics?.lookups('bypass', unique.length);
      return this.store.getItems(unique);
    }
    const found = new Map<string, Item>();
    const missing: string[] = [];
    for (const id of unique) {
      const item = this.items.get(id);
      if (item) found.set(id, item);
      else missing.push(id);
    }
    this.metrics?.lookups('hit', found.size);
    if (missing.length > 0) {
      this.metrics?.lookups('miss', missing.length);
      for (const item of await this.read(missing)) found.set(item.id, item);
    }
    const out: Item[] = [];
    for (const id of unique) {
      const item = found.get(id);
      if (item) out.push(item);
    }
    return out;
  }

  /** Reads from the store and caches what did not change meanwhile. */
  private async read(ids: string[]): Promise<Item[]> {
    const started = this.seq;
    this.inFlight++;
    try {
      const items = await this.store.getItems(ids);
      if (this.resetSeq <= started && this.changes.live) {
        for (const item of items) {
          // shared by every later reader of the id: frozen, so no caller can change another's copy
          if ((this.changedAt.get(item.id) ?? -1) <= started)
            this.items.set(item.id, Object.freeze({ ...item, tags: Object.freeze([...item.tags]) as string[] }));
        }
      }
      return items;
    } finally {
      if (--this.inFlight === 0) this.changedAt.clear();
    }
  }

  /**
   * Writes through, then drops the ids here and sends the change to the other processes. The message is
   * sent, not awaited: a stalled Redis must not add its deadline to the write's (it fails alone, logged),
   * and commands the caller sends next on the same connection reach Redis after it.
   */
  async upsertItems(
    items: readonly ItemInput[],
    nowMs: number,
    opts?: UpsertOptions,
  ): Promise<{ inserted: number; updated: number }> {
    try {
      return await this.store.upsertItems(items, nowMs, opts);
    } finally {
      // also after a failure: a commit whose answer was lost may have happened
      this.changed(
        items.map((i) => i.id),
        [],
      );
    }
  }

  /** Soft-deletes through the store, then drops the id here and sends the change (as `upsertItems`). */
  async deleteItem(id: string, nowMs: number): Promise<boolean> {
    try {
      return await this.store.deleteItem(id, nowMs);
    } finally {
      this.changed([], [id]);
    }
  }

  /** Tombstones through the store, then drops the ids here and sends the change (as `deleteItem`). */
  async eraseAuthor(authorId: string, ids: readonly string[], nowMs: number): Promise<string[]> {
    const erased = await this.store.eraseAuthor(authorId, ids, nowMs);
    this.changed([], erased);
    return erased;
  }

  /** The store of record's (never the cache's). */
  getItemRecord(id: string) {
    return this.store.getItemRecord(id);
  }

  itemsOf(authorId: string, limit: number, after?: { publishedAt: number; id: string }) {
    return this.store.itemsOf(authorId, limit, after);
  }

  forgetReader(readerId: string): Promise<number> {
    return this.store.forgetReader(readerId);
  }

  setInterests(readerId: string, terms: readonly string[], nowMs: number): Promise<void> {
    return this.store.setInterests(readerId, terms, nowMs);
  }

  getInterests(readerId: string): Promise<string[]> {
    return this.store.getInterests(readerId);
  }

  countItems(): Promise<number> {
    return this.store.countItems();
  }

  /** Items cached now (for tests and reports). */
  get size(): number {
    return this.items.size;
  }

  /** Closes the store; the ItemChanges belongs to whoever created it. */
  close(): Promise<void> {
    this.items.clear();
    return this.store.close();
  }

  private changed(written: readonly string[], deleted: readonly string[]): void {
    this.forget([...written, ...deleted]);
    void this.changes.publish(written, deleted);
  }

  private forget(ids: readonly string[]): void {
    this.seq++;
    for (const id of ids) {
      this.items.delete(id);
      if (this.inFlight > 0) this.changedAt.set(id, this.seq);
    }
  }

  private reset(): void {
    this.seq++;
    this.resetSeq = this.seq;
    this.items.clear();
  }
}
