/**
 * The port every feed reads for the exclusions (docs/exclusions.md): `ExclusionSource.forReader` gives a reader's
 * exclusions as one immutable snapshot per request (`ReaderExclusions`). The exclusions capability
 * (src/exclusions/) implements it; the feeds (for-you, discover, following) depend only on this module,
 * so no feed imports the exclusions capability. The rules themselves are documented in
 * src/exclusions/ports.ts and docs/exclusions.md.
 */
import type { Item, ServedItem } from './items/item.js';

/**
 * Why an item is not served to a reader, or is served lower: one name per rule, so a later explain API can
 * report each (docs/exclusions.md lists them in the order they are checked). The reader's preferences
 * (docs/preferences.md) add `muted_author`, `muted_word`, `language`; `show_less` is a down-weight (never a
 * removal) and `diversity` an item pushed out of a page by the per-author cap (served later, not dropped).
 */
export type ExclusionReason =
  | 'recently_viewed'
  | 'own'
  | 'engaged'
  | 'not_interested'
  | 'blocked_author'
  | 'deleted'
  | 'muted_author'
  | 'muted_word'
  | 'language'
  | 'show_less'
  | 'diversity';

/**
 * One rule that removes an item for a reader (or, in `notes`, one that marks it without removing it): what
 * the explain API reports (docs/explain.md). Rule-specific fields: `phrase` and `action` for
 * `muted_word` (the phrase as the reader wrote it), `lang` for `language` (the item's primary tag).
 */
export interface ExclusionFinding {
  rule: ExclusionReason;
  phrase?: string;
  action?: 'hide' | 'warn';
  lang?: string;
}

/** Every finding of a reader's exclusions on one item ({@link ReaderExclusions.findings}). */
export interface ExclusionFindings {
  /** Every rule that removes the item, in the order the guard clauses check them (empty: it passes). */
  rules: ExclusionFinding[];
  /** What marks the item without removing it: muted words whose action is `warn` (served with `filtered`). */
  notes: ExclusionFinding[];
}

/** The feeds a reader's preferences name (a muted word may apply to a subset of them). */
export const PREFERENCE_FEEDS = ['for-you', 'discover', 'following', 'hot'] as const;
/** One feed, as the preferences name it. */
export type PreferenceFeed = (typeof PREFERENCE_FEEDS)[number];

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
   * Down-weighted authors → multiplier in (0, 1): authors of items the reader marked not interested or
   * "show less", within the configured windows after that feedback (docs/exclusions.md). Others weigh 1.
   */
  readonly authorWeights: ReadonlyMap<string, number>;
  /**
   * Why this item must not be served in a ranked feed, or null: the id and author rules (own, blocked,
   * muted author, not interested, engaged, recently viewed). Without `authorId` only the id rules.
   */
  reason(itemId: string, authorId?: string): ExclusionReason | null;
  /**
   * The rules of the reader's preferences that read the item itself, for `feed`: muted author, a muted
   * word (case- and accent-insensitive, on title, text and tags), a language outside the reader's list
   * (the ranked feeds; the following timeline only with `languages_in_following`). Null: it passes.
   */
  itemReason(item: Item, feed: PreferenceFeed): ExclusionReason | null;
  /**
   * Whether the feed must hydrate candidates before it decides: muted authors (a cached page holds ids
   * only), muted words or a language list apply in `feed`, or "show less" weighs tags down.
   */
  needsItems(feed: PreferenceFeed): boolean;
  /** The languages the reader's ranked feeds keep (primary tags), or null for all. */
  readonly languages: readonly string[] | null;
  /** Authors the reader muted (live mutes only): hidden from every feed, without a block. */
  readonly mutedAuthors: ReadonlySet<string>;
  /** Most items of one author per 20 of a page in the ranked feeds (`max_per_author`; 0 = no cap). */
  readonly maxPerAuthor: number;
  /** Score multiplier of an item for this reader: its author's weight × the "show less" weight of its tags. */
  itemWeight(item: Pick<Item, 'authorId' | 'tags'>): number;
  /** `reason(itemId, authorId) !== null`. */
  excludes(itemId: string, authorId?: string): boolean;
  /** Score multiplier of an author for this reader: 1, or the not-interested and "show less" down-weights. */
  authorWeight(authorId: string): number;
  /**
   * `item` as served to this reader in `feed`: the item itself, or — when it holds muted phrases whose action
   * is `warn` and apply in `feed` — a copy with `filtered` listing them (each once, as the reader wrote them).
   * Call it on items that passed `itemReason` (a `hide` phrase wins over a `warn` one: such an item is not
   * served at all). Free when the reader has no `warn` phrase for `feed`.
   */
  serve<T extends Item>(item: T, feed: PreferenceFeed): T & ServedItem;
  /**
   * Every rule of `reason` and `itemReason` that removes `item` in `feed`, in their order (own, blocked
   * author, muted author, not interested, engaged, recently viewed, muted word, language — each once), and
   * the `warn` muted words as notes: what the explain API reports, where `reason` stops at the first.
   * The language rule applies in `following` only with `languages_in_following`, as in `itemReason`.
   */
  findings(item: Item, feed: PreferenceFeed): ExclusionFindings;
  /** The hydrated items that pass every rule of a ranked `feed` (`reason` and `itemReason`), in order. */
  filterItems(items: readonly Item[], feed?: PreferenceFeed): Item[];
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
  /**
   * The same snapshot as {@link forReader}, writing nothing: a cold cache is loaded from PostgreSQL and
   * not filled (the explain API: docs/explain.md).
   * @throws FreshetError `INVALID_ID` for a bad reader id; `STORE_UNAVAILABLE` when a store is down.
   */
  forReaderReadOnly(readerId: string, nowMs: number): Promise<ReaderExclusions>;
}
