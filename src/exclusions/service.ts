/**
 * Exclusions: the exclusions design's rules, one service for every feed (README "Exclusions").
 *
 * Read (`forReader`, once per feed request): ONE script on the reader's slot returns its recent views
 * and its cached durable exclusions; only when those are not cached, ONE SQL query loads them
 * (engagements, "not interested", blocks either way) and they are cached for the next request (a
 * compare-and-set on a generation, so a load that raced a write never caches the old state). The
 * result is an immutable snapshot (domain.ts) the feed applies with guard clauses.
 *
 * Writes: counted views go to the recent-views LIST (the exclusions design's LPUSH + LTRIM + EXPIRE); engagements and
 * feedback go to PostgreSQL first (the truth), then the reader's cached durable part is invalidated.
 * A write is acknowledged only after both, so the next `forReader` sees it; when the invalidation
 * fails the client gets 503 and its retry (the writes are idempotent) completes it. Blocks invalidate
 * both users (a block hides authors in both directions).
 */
import { assertId } from '../kernel/ids.js';
import {
  buildReaderExclusions,
  type AuthorPenalty,
  type DurableExclusions,
  type EngagementKind,
  type FeedbackKind,
  type ReaderExclusions,
  type ShowLessWeight,
} from './domain.js';
import { DEFAULT_PREFERENCES, type Preferences } from './preferences.js';
import type { EngagementRecord, ExclusionCache, ExclusionSource, ExclusionStore, ReaderHistory } from './ports.js';
import type { Logger } from '../kernel/observability.js';

/** Tunables (src/compose/config.ts `exclusions`). */
export interface ExclusionSettings {
  penalty: AuthorPenalty;
  /** How "show less" weighs an item's author and tags (absent: it does not). */
  showLess?: ShowLessWeight;
  /** The author cap of readers who did not set one (`FRESHET_MAX_PER_AUTHOR`; absent: 2). */
  defaultMaxPerAuthor?: number;
  /** Most engaged items, "not interested" items and blocked users loaded per reader (each). */
  cap: number;
}

/** Ports the service depends on. */
export interface ExclusionDeps {
  store: ExclusionStore;
  cache: ExclusionCache;
  log: Logger;
}

/** A "not interested" as recorded. */
export interface FeedbackResult {
  created: boolean;
  authorId: string;
  /** When the author penalty ends, epoch ms (virtual time). */
  authorPenaltyUntilMs: number;
}

/** A reader's exclusions as listed by {@link Exclusions.list}. */
export interface ExclusionList extends DurableExclusions {
  /** The reader's recent counted views, newest first, de-duplicated (at most `FRESHET_RECENT_VIEWS`). */
  recentViews: string[];
}

export class Exclusions implements ExclusionSource {
  constructor(
    private readonly deps: ExclusionDeps,
    private readonly settings: ExclusionSettings,
  ) {}

  /**
   * The reader's exclusions at `nowMs`: one Redis round trip, plus one SQL query on a cold cache.
   * @throws FreshetError `INVALID_ID`; store errors propagate (`STORE_UNAVAILABLE`).
   */
  async forReader(readerId: string, nowMs: number): Promise<ReaderExclusions> {
    assertId(readerId, 'reader id');
    const cached = await this.deps.cache.read(readerId, nowMs);
    let durable = cached.durable;
    if (!durable) {
      durable = await this.deps.store.load(readerId, this.settings.cap);
      // not awaited: the page does not wait for the cache; a refused or failed fill only costs a reload
      this.deps.cache.fill(readerId, cached.generation, durable).catch((err: unknown) => {
        this.deps.log.warn({ err, readerId }, 'exclusion cache fill failed');
      });
    }
    const { penalty, showLess, defaultMaxPerAuthor } = this.settings;
    return buildReaderExclusions(readerId, cached.recentViews, durable, nowMs, penalty, showLess, defaultMaxPerAuthor);
  }

  /**
   * {@link forReader} without the cache fill: one Redis round trip, plus one SQL query on a cold cache,
   * and nothing written (the explain API).
   * @throws FreshetError `INVALID_ID`; store errors propagate (`STORE_UNAVAILABLE`).
   */
  async forReaderReadOnly(readerId: string, nowMs: number): Promise<ReaderExclusions> {
    assertId(readerId, 'reader id');
    const cached = await this.deps.cache.read(readerId, nowMs);
    const durable = cached.durable ?? (await this.deps.store.load(readerId, this.settings.cap));
    const { penalty, showLess, defaultMaxPerAuthor } = this.settings;
    return buildReaderExclusions(readerId, cached.recentViews, durable, nowMs, penalty, showLess, defaultMaxPerAuthor);
  }

  /**
   * Records counted views in the viewers' recent-views LISTs (docs/exclusions.md). Ids must be valid.
   * @throws store errors (the caller decides whether they fail its request).
   */
  recordViews(views: readonly { readerId: string; itemId: string }[], nowMs: number): Promise<void> {
    if (views.length === 0) return Promise.resolve();
    return this.deps.cache.pushViews(views, nowMs);
  }

  /**
   * Records an engagement (idempotent per reader, item and kind); the item leaves the reader's feeds.
   * @throws FreshetError `INVALID_ID`, `NOT_FOUND` (unknown or deleted item), `STORE_UNAVAILABLE`.
   */
  async recordEngagement(
    readerId: string,
    itemId: string,
    kind: EngagementKind,
    nowMs: number,
  ): Promise<{ created: boolean }> {
    assertId(readerId, 'reader id');
    assertId(itemId, 'item id');
    const r = await this.deps.store.recordEngagement(readerId, itemId, kind, nowMs);
    await this.deps.cache.invalidate(readerId);
    return r;
  }

  /**
   * Records a batch of engagements (one statement, all or nothing; see `ExclusionStore.recordEngagements`),
   * then drops each reader's cached durable part once.
   * @returns one flag per engagement, in order: whether it is new.
   * @throws FreshetError `INVALID_ID` naming the element (`engagements[3].readerId`) before anything is
   *   written, `NOT_FOUND` (an unknown or deleted item: nothing written), `STORE_UNAVAILABLE`.
   */
  async recordEngagements(batch: readonly EngagementRecord[]): Promise<boolean[]> {
    batch.forEach((e, i) => {
      assertId(e.readerId, `engagements[${i}].readerId`);
      assertId(e.itemId, `engagements[${i}].itemId`);
    });
    const created = await this.deps.store.recordEngagements(batch);
    await Promise.all([...new Set(batch.map((e) => e.readerId))].map((r) => this.deps.cache.invalidate(r)));
    return created;
  }

  /**
   * Undoes an engagement (an unlike): the item may come back to the reader's feeds.
   * @returns `removed` false when there was none. @throws FreshetError `INVALID_ID`, `STORE_UNAVAILABLE`.
   */
  async undoEngagement(readerId: string, itemId: string, kind: EngagementKind): Promise<{ removed: boolean }> {
    assertId(readerId, 'reader id');
    assertId(itemId, 'item id');
    const r = await this.deps.store.deleteEngagement(readerId, itemId, kind);
    await this.deps.cache.invalidate(readerId);
    return r;
  }

  /**
   * "Not interested": the item leaves the reader's feeds for good, and its author weighs
   * `penalty.weight` for the reader during `penalty.durationMs` from the first such feedback.
   * @throws FreshetError `INVALID_ID`, `NOT_FOUND` (unknown or deleted item), `STORE_UNAVAILABLE`.
   */
  async notInterested(readerId: string, itemId: string, nowMs: number): Promise<FeedbackResult> {
    assertId(readerId, 'reader id');
    assertId(itemId, 'item id');
    const r = await this.deps.store.setFeedback(readerId, itemId, 'not_interested', nowMs);
    await this.deps.cache.invalidate(readerId);
    return {
      created: r.created,
      authorId: r.authorId,
      authorPenaltyUntilMs: r.atMs + this.settings.penalty.durationMs,
    };
  }

  /**
   * "Show less like this": the item's author and each of its tags weigh `showLess.weight` for the reader
   * (compounding with other signals, never below `showLess.floor`) for `showLess.durationMs` from the
   * first such feedback on this item. The item itself stays (it is a weight, not a removal).
   * @throws FreshetError `INVALID_ID`, `NOT_FOUND` (unknown or deleted item), `STORE_UNAVAILABLE`.
   */
  async showLess(readerId: string, itemId: string, nowMs: number): Promise<FeedbackResult> {
    assertId(readerId, 'reader id');
    assertId(itemId, 'item id');
    const r = await this.deps.store.setFeedback(readerId, itemId, 'show_less', nowMs);
    await this.deps.cache.invalidate(readerId);
    const duration = this.settings.showLess?.durationMs ?? 0;
    return { created: r.created, authorId: r.authorId, authorPenaltyUntilMs: r.atMs + duration };
  }

  /**
   * Undoes a feedback of `kind` (the item may come back; its weights end).
   * @returns `removed` false when there was none. @throws FreshetError `INVALID_ID`, `STORE_UNAVAILABLE`.
   */
  async undoFeedback(readerId: string, itemId: string, kind: FeedbackKind): Promise<{ removed: boolean }> {
    assertId(readerId, 'reader id');
    assertId(itemId, 'item id');
    const r = await this.deps.store.deleteFeedback(readerId, itemId, kind);
    await this.deps.cache.invalidate(readerId);
    return r;
  }

  /** Undoes a "not interested" ({@link undoFeedback}). */
  undoNotInterested(readerId: string, itemId: string): Promise<{ removed: boolean }> {
    return this.undoFeedback(readerId, itemId, 'not_interested');
  }

  /**
   * The reader's preferences ({@link DEFAULT_PREFERENCES} when it never set any): the same one Redis round
   * trip as {@link forReader}, plus one SQL query on a cold cache.
   * @throws FreshetError `INVALID_ID`; store errors propagate (`STORE_UNAVAILABLE`).
   */
  async preferences(readerId: string, nowMs: number): Promise<Preferences> {
    assertId(readerId, 'reader id');
    const cached = await this.deps.cache.read(readerId, nowMs);
    const durable = cached.durable ?? (await this.deps.store.load(readerId, this.settings.cap));
    return durable.preferences ?? DEFAULT_PREFERENCES;
  }

  /**
   * Replaces the reader's preferences (already checked: `parsePreferences`): PostgreSQL first, then the
   * reader's cached snapshot is invalidated, so the next page of every feed applies them. A failed
   * invalidation is a 503 whose retry completes it (the write is idempotent).
   * @throws FreshetError `INVALID_ID`, `STORE_UNAVAILABLE`.
   */
  async setPreferences(readerId: string, prefs: Preferences, nowMs: number): Promise<void> {
    assertId(readerId, 'reader id');
    await this.deps.store.setPreferences(readerId, prefs, nowMs);
    await this.deps.cache.invalidate(readerId);
  }

  /**
   * Edits the reader's preferences atomically (`update` runs on the current document with its row locked:
   * concurrent edits serialize), then invalidates its cached snapshot like {@link setPreferences}.
   * @returns the new document. @throws FreshetError `INVALID_ID`, what `update` throws (nothing stored),
   *   `STORE_UNAVAILABLE`.
   */
  async updatePreferences(
    readerId: string,
    update: (current: Preferences) => Preferences,
    nowMs: number,
  ): Promise<Preferences> {
    assertId(readerId, 'reader id');
    const next = await this.deps.store.updatePreferences(readerId, update, nowMs);
    await this.deps.cache.invalidate(readerId);
    return next;
  }

  /**
   * What a reader is shown it is excluded from, for people to inspect and undo (`GET /v1/exclusions`):
   * the recent views (newest first, de-duplicated), engaged items, "not interested" items with their
   * authors and times, and blocked authors (either way). The same one Redis round trip as
   * {@link forReader}, plus one SQL query on a cold cache (this read does not fill the cache).
   * @throws FreshetError `INVALID_ID`; store errors propagate (`STORE_UNAVAILABLE`).
   */
  async list(readerId: string, nowMs: number): Promise<ExclusionList> {
    assertId(readerId, 'reader id');
    const cached = await this.deps.cache.read(readerId, nowMs);
    const durable = cached.durable ?? (await this.deps.store.load(readerId, this.settings.cap));
    return { recentViews: [...new Set(cached.recentViews)], ...durable };
  }

  /**
   * Erases a user from the exclusions (src/use-cases/personal-data.ts): their engagements, feedback and
   * preferences, others' feedback naming them as an author, their id in others' muted authors (those
   * readers' caches dropped), and their recent views and cached rules.
   * @returns rows removed per kind, and how many readers had muted them.
   */
  async forgetUser(userId: string): Promise<Record<string, number>> {
    assertId(userId, 'user id');
    const r = await this.deps.store.forgetUser(userId);
    await this.deps.cache.forget(userId);
    await Promise.all(r.mutedBy.map((reader) => this.deps.cache.invalidate(reader)));
    return { engagements: r.engagements, feedback: r.feedback, preferences: r.preferences, mutedBy: r.mutedBy.length };
  }

  /** The reader's engagements and feedback (newest first, at most the exclusion cap each), for an export. */
  history(readerId: string): Promise<ReaderHistory> {
    return this.deps.store.history(assertId(readerId, 'reader id'), this.settings.cap);
  }

  /** Drops cached durable exclusions of users whose blocks changed (both sides of a block). */
  async blocksChanged(userIds: readonly string[]): Promise<void> {
    await Promise.all(userIds.map((u) => this.deps.cache.invalidate(u)));
  }
}
