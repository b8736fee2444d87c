/**
 * Wiring of the content store every capability hydrates from: PostgreSQL (PGlite or a server) behind the
 * in-process item cache (cached-content-store.ts), whose copies are kept fresh across processes by Redis
 * pub/sub when Redis is configured (`serve --workers N`, several servers), else by this process alone (the
 * embedded default serves from one process).
 */
import type { Stores } from '../kernel/stores.js';
import { PostgresContentStore } from './postgres-content-store.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import { CachedContentStore, type ItemCacheMetrics, type ItemCacheSettings } from './cached-content-store.js';
import { LocalItemChanges, type ItemChanges } from '../kernel/items/item-changes.js';
import { RedisItemChanges } from './redis-item-changes.js';

/** The content store and the change channel it publishes on (others may listen: the for-you fill pool). */
export interface WiredContent {
  content: ContentStore;
  changes: ItemChanges;
  /** Closes the change channel (the content store shares the request SQL handle, closed by its owner). */
  close(): Promise<void>;
}

/** Opens the content store over `stores.sql` (not owned) with the item cache of `settings`. */
export function wireContent(settings: ItemCacheSettings, stores: Stores, metrics?: ItemCacheMetrics): WiredContent {
  const r = stores.redis;
  const changes: ItemChanges = r
    ? new RedisItemChanges(r.redis, r.connectBlocking, r.keys.itemChanges(), stores.log)
    : new LocalItemChanges();
  // also with maxItems 0: its writes still tell the other processes (their caches and fill pools listen)
  const content = new CachedContentStore(
    new PostgresContentStore(stores.sql, { ownsSql: false }),
    changes,
    settings,
    stores.clock,
    metrics,
  );
  return { content, changes, close: () => changes.close() };
}
