/**
 * The port every feed reads for note 5's exclusions: `ExclusionSource.forReader` gives a reader's
 * exclusions as one immutable snapshot per request (`ReaderExclusions`). The exclusions capability
 * (src/exclusions/) implements it; the feeds (for-you, discover, following) depend only on this module,
 * so no feed imports the exclusions capability. The rules themselves are documented in
 * src/exclusions/ports.ts and docs/exclusions.md.
 */
import type { Item } from './items/item.js';

/** Why an item is not served to a reader. */
export type ExclusionReason = 'recently_viewed' | 'own' | 'engaged' | 'not_interested' | 'blocked_author' | 'deleted';

/**
 * A reader's exclusions at one moment: a snapshot a feed fetches once per request and applies to every
 * candidate of that request. Immutable; cheap guard clauses, no I/O.
 */
export interface ReaderExclusions {
  readonly readerId: string;
  /** Item ids never to serve: recently viewed ∪ engaged ∪ not interested (for SQL `<> ALL($ids)`). */
  readonly itemIds: ReadonlySet<string>;
  /** Authors whose items are never served: the reader itself and blocked authors (SQL pushdown). */
  readonly blockedAuthors: ReadonlySet<string>;
  /** The reader's recent views, newest first, de-duplicated (at most N). */
  readonly recentViews: readonly string[];
  /** Items the reader engaged with, most recent first (at most the configured cap). */
  readonly engaged: readonly string[];
  /**
   * Down-weighted authors → multiplier in (0, 1): authors of items the reader marked not interested,
   * within the configured window after that feedback (README "Exclusions"). Others weigh 1.
   */
  readonly authorWeights: ReadonlyMap<string, number>;
  /** Why this item must not be served, or null. Without `authorId` only the id rules are checked. */
  reason(itemId: string, authorId?: string): ExclusionReason | null;
  /** `reason(itemId, authorId) !== null`. */
  excludes(itemId: string, authorId?: string): boolean;
  /** Score multiplier of an author for this reader: 1, or the not-interested down-weight. */
  authorWeight(authorId: string): number;
  /** The hydrated items that pass every rule, in order (drops `own` and `blocked_author` too). */
  filterItems(items: readonly Item[]): Item[];
}

/**
 * What feeds depend on (implemented by the Exclusions service, src/exclusions/service.ts).
 * Contract: one call per feed request; one round trip to Redis plus at most one PostgreSQL query
 * (only on a cold cache); a write acknowledged by the service (view, engagement, feedback, block) is
 * visible to every `forReader` that starts after it.
 */
export interface ExclusionSource {
  /**
   * @throws FreshetError `INVALID_ID` for a bad reader id; `STORE_UNAVAILABLE` when a store is down.
   */
  forReader(readerId: string, nowMs: number): Promise<ReaderExclusions>;
}
