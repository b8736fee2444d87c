/**
 * ContentStore and CandidateRecall ports: items and reader interests (PostgreSQL is the truth,
 * DESIGN.md "Where state lives"), and top-N candidate recall for the for-you feed (note 1).
 */
import type { Item } from '../domain/item.js';
import type { GaussDecay } from '../domain/decay.js';

/** An item as written by the application; Freshet sets `updateTime` itself. */
export type ItemInput = Omit<Item, 'updateTime'>;

/**
 * Contract (test/contracts/content-store.contract.ts, against PGlite and a PostgreSQL server):
 * - `upsertItems` is idempotent by id and all-or-nothing (one transaction); a soft-deleted item
 *   that is upserted again stays deleted.
 * - `getItems` returns live (not deleted) items in the order of the ids asked, skipping unknown ones.
 * - `deleteItem` soft-deletes; true when the item existed and was live.
 */
export interface ContentStore {
  /** Inserts or updates items (by id) in one transaction; `nowMs` becomes their `updateTime`. */
  upsertItems(items: readonly ItemInput[], nowMs: number): Promise<{ inserted: number; updated: number }>;
  /** Soft-deletes an item; false when it is unknown or already deleted. */
  deleteItem(id: string, nowMs: number): Promise<boolean>;
  /** Hydrates ids into live items, in the order given; deleted and unknown ids are skipped. */
  getItems(ids: readonly string[]): Promise<Item[]>;
  /** Replaces a reader's explicit interest terms (lower-cased words). */
  setInterests(readerId: string, terms: readonly string[], nowMs: number): Promise<void>;
  /** A reader's interest terms, [] when none. */
  getInterests(readerId: string): Promise<string[]>;
  /** Number of live items (for readiness and reports). */
  countItems(): Promise<number>;
  close(): Promise<void>;
}

/** One recall request. */
export interface RecallQuery {
  readerId: string;
  /** Interest terms; empty (and no `interestItemIds`) → freshness × popularity. */
  interests: readonly string[];
  /**
   * Items whose words count as interests too: the reader's recent views and engagements (issue 2:
   * "terms from items the reader viewed or engaged with"). The stemmed words of their titles and tags,
   * the 64 most frequent, are OR-ed with `interests`. Absent or empty: `interests` alone.
   */
  interestItemIds?: readonly string[];
  /** Origin of the decay and upper bound of `published_at`, epoch ms. */
  nowMs: number;
  /** Maximum candidates (N, default 500). */
  limit: number;
  decay: GaussDecay;
  /** Items older than this (ms) are not candidates (see `gaussHorizonMs`). */
  horizonMs: number;
  /**
   * The reader's exclusions (note 5) pushed into the recall: items of `authorIds` and the ids in
   * `itemIds` are never candidates; an author in `authorWeights` has its items' scores multiplied by
   * its weight (the "not interested" penalty). Absent: none.
   */
  exclusions?: {
    authorIds: Iterable<string>;
    itemIds: Iterable<string>;
    authorWeights: ReadonlyMap<string, number>;
  };
}

/**
 * Contract: returns up to `limit` ids of live items published in [now - horizon, now], not authored
 * by the reader nor excluded by `exclusions`, best first: text relevance to the interests × Gaussian decay; when interests match
 * fewer than `limit`, the rest is filled by decay × log(2 + popularity) without repeating an id.
 */
export interface CandidateRecall {
  recall(q: RecallQuery): Promise<string[]>;
}
