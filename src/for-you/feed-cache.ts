/**
 * FeedCache port: the per-reader page cache of the for-you feed (the for-you design, `feed:cache:{reader}`),
 * plus a short refresh lease that keeps two refreshes of one reader from running at once.
 *
 * Contract (test/contracts/feed-cache.contract.ts):
 * - `replace` is atomic: a concurrent `pop` sees the whole old list or the whole new one.
 * - `pop(r, n)` removes and returns up to n ids from the head, in order, with the number left;
 *   concurrent pops never return the same id twice.
 * - a list expires `ttlMs` after its last `replace`; readers never see each other's lists.
 * - `acquireLease` succeeds for one holder at a time per reader until released or `leaseMs` passes;
 *   `releaseLease` only releases the holder's own lease (by token).
 * - expiry is on the store's own (wall) clock: the cache is a session buffer, not history.
 * - the reader's recall cursor (where the last recall stopped, an opaque string of service.ts) is kept
 *   under its own key with its own time to live (the seen window): `getCursor` returns what the last
 *   `setCursor` stored until then, else null.
 */
export interface FeedCache {
  /** Atomically replaces the reader's cached ids (an empty list just drops the cache). */
  replace(readerId: string, itemIds: readonly string[], ttlMs: number): Promise<void>;
  /** Pops up to `count` ids from the head (LPOP key count) and says how many remain. */
  pop(readerId: string, count: number): Promise<{ itemIds: string[]; remaining: number }>;
  /** Drops the reader's cache. */
  drop(readerId: string): Promise<void>;
  /** Deletes everything kept for the reader: its cached page list, cursor and lease (erase). */
  forget(readerId: string): Promise<void>;
  /** Takes the reader's refresh lease for `leaseMs` if nobody holds it; true on success. */
  acquireLease(readerId: string, token: string, leaseMs: number): Promise<boolean>;
  /** Releases the lease if `token` still holds it. */
  releaseLease(readerId: string, token: string): Promise<void>;
  /** The reader's recall cursor, null when none or expired. */
  getCursor(readerId: string): Promise<string | null>;
  /** Stores the reader's recall cursor for `ttlMs`. */
  setCursor(readerId: string, cursor: string, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}
