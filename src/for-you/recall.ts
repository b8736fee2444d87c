/**
 * CandidateRecall port: candidate recall for the for-you feed (docs/for-you.md) — text relevance to the
 * reader's interests × Gaussian time decay, over the live items of the content store.
 *
 * The feed (service.ts) recalls in three parts (docs/for-you.md "Recall"):
 * - interest matches inside the decay window: the reader's words as `tsv` lexemes (`interestLexemes`),
 *   matched in process against the shared pool (the default), or in SQL over a banded lexeme index
 *   (`matches`, bounded: the newest matches band by band);
 * - `fill`: the reader-independent pool, decay × log popularity inside the window, then the newest
 *   older items (built once per interval and shared, fill-pool.ts);
 * - `older`: a keyset walk (`published_at` desc, id desc) over every live item, for readers who scroll
 *   past the pool (with the reader's lexemes, each row says how many it holds: walk.ts ranks the
 *   matches of each round first).
 * `recall` is the single-statement window recall the parts replace on the serving path (kept for the
 * contract tests and the bench's part timings).
 */
import type { GaussDecay } from './decay.js';

/**
 * Words the reader's recent views and engagements lend to its interests: the most frequent stemmed words
 * of their titles and tags, at most this many (an arbitrary bound on one reader's query, the
 * size of a long list of interest terms).
 */
export const INTEREST_ITEM_WORDS = 64;

/**
 * `matches` ranks the first `MATCH_SCAN_FACTOR × limit` matches it meets, newest band first: the bound on
 * the rows one interest query reads (2 × 500 by default), and the room ranking has to prefer a better
 * match over a newer one.
 */
export const MATCH_SCAN_FACTOR = 2;

/** One recall request. */
export interface RecallQuery {
  readerId: string;
  /** Interest terms; empty (and no `interestItemIds`) → freshness × popularity. */
  interests: readonly string[];
  /**
   * Items whose words count as interests too: the reader's recent views and engagements (terms
   * from items the reader viewed or engaged with). The stemmed words of their titles and tags,
   * the `INTEREST_ITEM_WORDS` most frequent, are OR-ed with `interests`. Absent or empty: `interests` alone.
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
   * The reader's exclusions (docs/exclusions.md) pushed into the recall: items of `authorIds` and the ids in
   * `itemIds` are never candidates; an author in `authorWeights` has its items' scores multiplied by
   * its weight (the "not interested" penalty). Absent: none.
   */
  exclusions?: RecallExclusions;
}

/** The exclusions (docs/exclusions.md) of one reader, as the recall statements take them. */
export interface RecallExclusions {
  authorIds: Iterable<string>;
  itemIds: Iterable<string>;
  authorWeights: ReadonlyMap<string, number>;
}

/** One interest-match request (`matches`): the reader's words already as `tsv` lexemes. */
export interface MatchQuery extends Omit<RecallQuery, 'interests' | 'interestItemIds'> {
  /** Lexemes as `interestLexemes` returns them (`[a-z0-9]+`); empty → no match. */
  lexemes: readonly string[];
}

/**
 * Contract: returns up to `limit` ids of live items published in [now - horizon, now], not authored
 * by the reader nor excluded by `exclusions`, best first: text relevance to the interests × Gaussian decay; when interests match
 * fewer than `limit`, the rest is filled by decay × log(2 + popularity) without repeating an id.
 */
export interface CandidateRecall {
  recall(q: RecallQuery): Promise<string[]>;
  /**
   * Interest matches with a bounded cost: up to `limit` live items inside [now − horizon, now] holding
   * at least one of `lexemes`, not the reader's own nor excluded, best first by
   * author weight × `ts_rank` × decay — ranked among the first `MATCH_SCAN_FACTOR × limit` matches met
   * walking the window newest first in 6-hour bands (inside a band, in table order). So the rows read
   * are bounded whatever the catalog, and a rare word is found anywhere in the window; a frequent word's
   * older matches lose to its newest ones. [] without lexemes.
   */
  matches(q: MatchQuery): Promise<Candidate[]>;
  /**
   * The reader-independent fill: up to `size` live items, first those inside [now − horizon, now] by
   * decay × ln(2 + popularity) (ties: newest, then a hash of the id — never the id itself, so equal items
   * do not always favour the same end of the alphabet), each with its `popularity`, then — when the
   * window holds fewer than `size` — the newest older items by (`published_at`, id) desc.
   */
  fill(q: FillQuery): Promise<FillResult>;
  /**
   * Keyset walk: up to `limit` live items with (`published_at`, id) < `before` (or ≤ now when `before` is
   * null; a `before` after now starts at now), by (`published_at`, id) desc — index-backed, cost
   * proportional to `limit`. With `lexemes` (non-empty), each candidate's `matched` says how many of
   * them its `tsv` holds.
   */
  older(nowMs: number, before: KeysetCursor | null, limit: number, lexemes?: readonly string[]): Promise<Candidate[]>;
  /**
   * The reader's interest words as `tsv` lexemes (letters and digits of any script): those of `interests`
   * read in English, unstemmed (`simple`) and in the configuration of each of `languages` (the reader's
   * list), and the `INTEREST_ITEM_WORDS` most frequent of the titles and tags of `interestItemIds`, each
   * item read in its own language's configuration. [] when none.
   */
  interestLexemes(
    interests: readonly string[],
    interestItemIds: readonly string[],
    languages?: readonly string[],
  ): Promise<string[]>;
  /** The live items of `ids` with their popularity and lexemes (what the pool needs to take them in). */
  pooled(ids: readonly string[]): Promise<(Candidate & { popularity: number })[]>;
}

/** A recalled item with what the feed filters on without another query. */
export interface Candidate {
  id: string;
  authorId: string;
  /** Epoch ms. */
  publishedAt: number;
  /** The item's `tsv` lexemes (fill pool entries only: what interest matching in process reads). */
  lexemes?: readonly string[];
  /** Fill pool entries inside the window: gauss × ln(2 + popularity) at the build's now. */
  score?: number;
  /** Fill pool entries inside the window: the publisher's popularity prior (`items.popularity`). */
  popularity?: number;
  /** Keyset rows read with the reader's lexemes (`older`): how many of them the item holds. */
  matched?: number;
}

/** A position of the keyset walk: (`published_at` epoch ms, id) of the last item returned. */
export type KeysetCursor = readonly [publishedAt: number, id: string];

/** What one fill build returns. */
export interface FillResult {
  entries: Candidate[];
  /** Whether every live item of the window is in `entries`. */
  windowComplete: boolean;
  /**
   * Where the keyset walk continues below the pool when `windowComplete`: the last older entry, or the
   * window's lower edge `[now − horizon, '']` when the pool holds no older item; null otherwise (the walk
   * then starts at now and skips the pool's ids).
   */
  next: KeysetCursor | null;
}

/** One build of the reader-independent fill. */
export interface FillQuery {
  /** Origin of the decay and upper bound of `published_at`, epoch ms. */
  nowMs: number;
  decay: GaussDecay;
  /** Width of the scored window (ms); older items follow by age. */
  horizonMs: number;
  /** Entries wanted. */
  size: number;
}
