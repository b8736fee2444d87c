/**
 * ContentStore port: items and reader interests (PostgreSQL is the truth, docs/architecture.md
 * "Where state lives"). The for-you feed's candidate recall over the same items is src/for-you/recall.ts.
 */
import type { Item } from './item.js';
import type { SqlTx } from '../sql/sql.js';

/**
 * The author of an erased user's items once erased: `..`, which no user can have (ids exclude `.` and
 * `..`, src/kernel/ids.ts) while the items table's own check admits it.
 */
export const ERASED_AUTHOR = '..';

/**
 * An item as written by the application; Freshet sets `updateTime` itself. `lang` absent is stored as
 * `und` by the store (the `publishItems` use case detects it first, src/kernel/items/lang.ts).
 */
export type ItemInput = Omit<Item, 'updateTime'>;

/** How `upsertItems` writes. */
export interface UpsertOptions {
  /**
   * Another write that commits with the items, in the same PostgreSQL transaction (the batch's discover
   * embeddings): it runs after the items are written and the batch was not refused; when it
   * throws, nothing of the batch is written anywhere. Runs once per call.
   */
  alongside?: (tx: SqlTx) => Promise<void>;
}

/** How `getItems` reads. */
export interface GetItemsOptions {
  /**
   * Read the store of record even when an item cache is in front of it (src/content/cached-content-store.ts): for
   * an application's read of one item, which must see every write acknowledged before it in any
   * process. Feeds hydrate without it.
   */
  fresh?: boolean;
}

/**
 * Contract (test/contracts/content-store.contract.ts, against PGlite and a PostgreSQL server):
 * - `upsertItems` is idempotent by id and all-or-nothing (one transaction, which also holds the
 *   `alongside` write); a batch naming a soft-deleted id is refused whole with `ITEM_DELETED` (deleted ids
 *   are never reused), and so is one whose `alongside` write throws.
 * - `getItems` returns live (not deleted) items in the order of the ids asked, skipping unknown ones.
 * - `deleteItem` soft-deletes; true when the item existed and was live.
 */
export interface ContentStore {
  /** Inserts or updates items (by id) in one transaction (with `opts.alongside`); `nowMs` becomes their `updateTime`. */
  upsertItems(
    items: readonly ItemInput[],
    nowMs: number,
    opts?: UpsertOptions,
  ): Promise<{ inserted: number; updated: number }>;
  /** Soft-deletes an item; false when it is unknown or already deleted. */
  deleteItem(id: string, nowMs: number): Promise<boolean>;
  /** Hydrates ids into live items, in the order given; deleted and unknown ids are skipped. */
  getItems(ids: readonly string[], opts?: GetItemsOptions): Promise<Item[]>;
  /**
   * One item as the store of record holds it, live or soft-deleted (`deleted`), or null when the id is
   * unknown: how the explain API tells a deleted item from one that never was. Never served from a cache.
   */
  getItemRecord(id: string): Promise<(Item & { deleted: boolean }) | null>;
  /** Replaces a reader's explicit interest terms (lower-cased words). */
  setInterests(readerId: string, terms: readonly string[], nowMs: number): Promise<void>;
  /** A reader's interest terms, [] when none. */
  getInterests(readerId: string): Promise<string[]>;
  /** Number of live items (for readiness and reports). */
  countItems(): Promise<number>;
  /** Deletes a reader's interest terms (erase). @returns rows removed (0 or 1). */
  forgetReader(readerId: string): Promise<number>;
  /**
   * Erases items of an author (erase with `items=delete`): each of `ids` still by `authorId` becomes a
   * tombstone — deleted (it leaves every feed; its id is never reused; its embedding row is emptied in the
   * same statement, migration 15) with its author set to {@link ERASED_AUTHOR} and its title, text, URL and
   * tags emptied, so no row names the author any more. Idempotent. The caller lists the ids first
   * ({@link itemsOf}) and clears what is keyed by them elsewhere before: once tombstoned, an item is no
   * longer found by its author.
   * @returns the ids tombstoned by this call.
   */
  eraseAuthor(authorId: string, ids: readonly string[], nowMs: number): Promise<string[]>;
  /** The author's items, live and deleted (export): newest first, at most `limit`, below `beforeId` in (publishedAt, id) order. */
  itemsOf(
    authorId: string,
    limit: number,
    after?: { publishedAt: number; id: string },
  ): Promise<(Item & { deleted: boolean })[]>;
  close(): Promise<void>;
}
