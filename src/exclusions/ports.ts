/**
 * Exclusions ports (docs/exclusions.md): what a reader must never be served, the same rules for every feed.
 *
 * The rules ({@link ExclusionReason}):
 * - `recently_viewed` — the reader's last N counted views (the exclusions design: a LIST, LPUSH + LTRIM to N = 10,
 *   7-day expiry refreshed by each view, de-duplicated on read). Hot state only (Redis / in process):
 *   a loss forgets at most the last 10 views of each reader (accepted, bounded loss).
 * - `own` — items the reader authored.
 * - `engaged` — items the reader replied to, liked or shared (`POST /v1/engagements`), for good.
 * - `not_interested` — items the reader dismissed (`POST /v1/feedback`), for good until undone; their
 *   authors are also down-weighted for the reader for a while ({@link ReaderExclusions.authorWeight}).
 * - `muted_author`, `muted_word`, `language` — the reader's preferences (docs/preferences.md); `show_less`
 *   weighs an item's author and tags down (a weight, not a removal).
 * - `blocked_author` — authors the reader blocks and authors who block the reader (the following graph).
 * - `deleted` — soft-deleted items. Not carried by the snapshot: feeds recall and hydrate live items only
 *   (`CandidateRecall` returns live ids, `ContentStore.getItems` skips deleted ones).
 *
 * How a feed uses them: once per request, `ExclusionSource.forReader(reader, now)` — one round trip to
 * Redis, and one SQL query only when the reader's cached durable exclusions are missing — started in
 * parallel with the feed's other first reads; then plain guard clauses (`excludes`) over candidates, or
 * `itemIds` / `blockedAuthors` pushed into the feed's SQL. Which feed applies which rule is in the
 * README ("Exclusions").
 */
import type { DurableExclusions, EngagementKind, FeedbackKind } from './domain.js';
import type { Preferences } from './preferences.js';

// The port every feed reads (ExclusionSource) lives in the kernel; re-exported for this capability.
export type { ExclusionSource } from '../kernel/exclusion-source.js';

// The value types live in the domain (pure); they are re-exported here, where feeds look for them.
export {
  ENGAGEMENT_KINDS,
  FEEDBACK_KINDS,
  type DurableExclusions,
  type EngagementKind,
  type ExclusionReason,
  type FeedbackKind,
  type NotInterested,
  type ReaderExclusions,
  type ShowLess,
} from './domain.js';

/** A reader's hot exclusion state as read in one round trip. */
export interface CachedExclusions {
  /** Recent views, newest first, de-duplicated, without those older than the TTL. */
  recentViews: string[];
  /** The cached durable exclusions, or null when not cached (then load from PostgreSQL). */
  durable: DurableExclusions | null;
  /** Opaque generation read with it: pass it to `fill` so a stale load never overwrites a newer write. */
  generation: string;
}

/** Tunables of the hot state (config `FRESHET_RECENT_VIEWS_*`, `FRESHET_EXCLUSION_CACHE_TTL_S`). */
export interface ExclusionCacheSettings {
  /** N: recent views kept per reader (the exclusions design: 10). */
  recentViews: number;
  /** Recent-views lifetime after the last view, ms (the exclusions design: 7 days). */
  recentViewsTtlMs: number;
  /** Lifetime of a cached durable snapshot, ms (real time; rebuilt from PostgreSQL after). */
  durableTtlMs: number;
  /**
   * Redis only: the JSON bytes of parsed snapshots one process keeps, so a page does not fetch and parse an
   * unchanged one again (`FRESHET_EXCLUSION_MEMO_MB`; 0: none; absent: 64 MB).
   */
  memoBytes?: number;
}

/**
 * ExclusionCache port: the hot state — recent-views LISTs (the exclusions design's layout, `rv:{u:<reader>}`) and a
 * cache of each reader's {@link DurableExclusions}. Adapters: memory (embedded default), Redis.
 *
 * Contract (test/contracts/exclusions.contract.ts `exclusionCacheContract`, against every adapter):
 * - `pushViews` is LPUSH + LTRIM to N + expiry `recentViewsTtlMs` after the view (virtual time), per reader;
 *   `read` returns them newest first, de-duplicated, [] once expired.
 * - `read` is one round trip for everything of one reader (its keys share the hash tag `{u:<reader>}`).
 * - `fill(r, gen, d)` stores `d` only if no `invalidate(r)` happened since the `read` that returned
 *   `gen`; returns whether it stored. `invalidate` drops the cached durable part (not the recent views).
 */
export interface ExclusionCache {
  /** Appends counted views (LPUSH + LTRIM + expiry per reader), all readers in one round trip. */
  pushViews(views: readonly { readerId: string; itemId: string }[], nowMs: number): Promise<void>;
  /** Reads a reader's recent views and cached durable exclusions. */
  read(readerId: string, nowMs: number): Promise<CachedExclusions>;
  /** Caches a reader's durable exclusions loaded after the `read` that returned `generation`. */
  fill(readerId: string, generation: string, durable: DurableExclusions): Promise<boolean>;
  /** Drops a reader's cached durable exclusions (after a write to PostgreSQL). */
  invalidate(readerId: string): Promise<void>;
  /** Deletes everything cached for the reader: recent views and the cached durable rules (erase). */
  forget(readerId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * ExclusionStore port: the durable part in PostgreSQL (engagements, feedback; blocks come from the
 * the following graph tables). One SQL code path on PGlite and PostgreSQL.
 *
 * Contract (test/contracts/exclusions.contract.ts `exclusionStoreContract`):
 * - `recordEngagement` / `setFeedback` are idempotent per (reader, item, kind); the first time is kept.
 *   Both refuse unknown and deleted items (FreshetError `NOT_FOUND`) and write nothing then.
 * - `deleteFeedback` removes it; `removed` false when there was none.
 * - `load` is ONE query; lists are most recent first, at most `cap` entries each; it carries the reader's
 *   preferences (null when none were set), so preferences cost no read of their own.
 * - `setPreferences` replaces the reader's document; `updatePreferences` edits it atomically (two concurrent
 *   edits both land); an update that throws stores nothing.
 */
export interface ExclusionStore {
  /** @throws FreshetError NOT_FOUND for an unknown or deleted item. */
  recordEngagement(
    readerId: string,
    itemId: string,
    kind: EngagementKind,
    nowMs: number,
  ): Promise<{ created: boolean }>;
  /**
   * Records a batch in ONE statement, all or nothing: when an item is unknown or deleted nothing is written
   * (NOT_FOUND naming the first such element, `engagements[3]`). Idempotent per (reader, item, kind) like
   * `recordEngagement`, a repeat inside the batch included (the first one is kept).
   * @returns one flag per engagement, in order: whether it was recorded now (false: it existed already).
   */
  recordEngagements(batch: readonly EngagementRecord[]): Promise<boolean[]>;
  /** @throws FreshetError NOT_FOUND for an unknown or deleted item. @returns the item's author. */
  setFeedback(
    readerId: string,
    itemId: string,
    kind: FeedbackKind,
    nowMs: number,
  ): Promise<{ created: boolean; authorId: string; atMs: number }>;
  deleteFeedback(readerId: string, itemId: string, kind: FeedbackKind): Promise<{ removed: boolean }>;
  /** Removes an engagement (an undone like); `removed` false when there was none. */
  deleteEngagement(readerId: string, itemId: string, kind: EngagementKind): Promise<{ removed: boolean }>;
  /** The reader's durable exclusions in one query. `cap` bounds each list (most recent kept). */
  load(readerId: string, cap: number): Promise<DurableExclusions>;
  /** Replaces the reader's preferences document. */
  setPreferences(readerId: string, prefs: Preferences, nowMs: number): Promise<void>;
  /**
   * Erases a user (one transaction): their engagements, feedback and preferences; the feedback of others
   * on their items (it names them as the item's author); and their id from every other reader's muted
   * authors. @returns what was removed, and the readers whose preferences changed (their caches go).
   */
  forgetUser(
    userId: string,
  ): Promise<{ engagements: number; feedback: number; preferences: number; mutedBy: string[] }>;
  /** A reader's engagements and feedback, for an export (newest first, at most `cap` each). */
  history(readerId: string, cap: number): Promise<ReaderHistory>;
  /**
   * Replaces the reader's document (the defaults when it has none) by `update(current)`, atomically: edits
   * of one reader run one after the other, none is lost. @returns the new document.
   * @throws what `update` throws (nothing is stored then).
   */
  updatePreferences(
    readerId: string,
    update: (current: Preferences) => Preferences,
    nowMs: number,
  ): Promise<Preferences>;
  close(): Promise<void>;
}

/** One engagement of a batch: `readerId` replied to, liked or shared `itemId` at `nowMs` (epoch ms). */
export interface EngagementRecord {
  readerId: string;
  itemId: string;
  kind: EngagementKind;
  nowMs: number;
}

/** What a reader did that the exclusions keep, as an export lists it (times epoch ms). */
export interface ReaderHistory {
  engagements: { itemId: string; kind: EngagementKind; atMs: number }[];
  feedback: { itemId: string; kind: FeedbackKind; authorId: string; atMs: number }[];
}
