/**
 * The verbs that span capabilities, written once. HTTP handlers, every CLI command (import, simulate,
 * replay) and the library call these for writes and nothing else, so the edges cannot drift
 * (docs/architecture.md "Use cases"; Mastodon's FeedManager verbs are the model).
 *
 * | verb | capabilities it writes, in order |
 * |---|---|
 * | `publishItems` | content + discover embeddings (one PostgreSQL transaction, the commit point) → at once: hot (published_at) and following (tid, outbox, fan-out job) |
 * | `deleteItem` | content (soft delete) → hot (leaves the ranking); feeds drop it on read |
 * | `recordViews` | hot (PV/UV/score) → discover (reader signals) + exclusions (recent views): every view that looked at the item |
 * | `follow` / `unfollow` | following (graph, inbox backfill / unmerge) → notifications (the author: a follow; taken back within the window) |
 * | `importFollows` | following (graph in bulk, then the followers' inboxes dropped: rebuilt on read) |
 * | `block` / `unblock` | following (graph, both inboxes) → exclusions (cached blocked authors, both users) |
 * | `recordEngagement(s)` / `undoEngagement` | exclusions (PostgreSQL + hot state; a batch in one statement) → notifications (the item's author: a grouped like, reply or share, a batch in bulk; taken back within the window) |
 * | `recordFeedback` / `undoFeedback` | exclusions (PostgreSQL + hot state) |
 * | `setPreferences` / `patchPreferences` | exclusions (the reader's preferences in PostgreSQL — a patch in one transaction with the row locked — then its cached snapshot invalidated) |
 * | `eraseUser` / `exportUser` | every room, in a fixed order (src/use-cases/personal-data.ts) |
 * | `registerUsers` | following (graph users) |
 * | `setInterests` | content (a reader's interest terms) |
 *
 * After the commit point the steps run at once; a step that fails is retried ({@link AFTER_COMMIT_ATTEMPTS};
 * not when a store is unavailable — it missed its deadline, a retry would only double the wait); one that still
 * fails is completed later, never lost: an item left without a timeline id is published by the fan-out
 * sweep (at start and every `FRESHET_FANOUT_SWEEP_S`). A failed hot-counter update (an edited
 * `published_at` of an item already viewed) is logged; the ranking keeps the old time for that item.
 */
import { FreshetError, fail } from '../kernel/errors.js';
import { preview } from '../kernel/preview.js';
import { assertId } from '../kernel/ids.js';
import type { Logger } from '../kernel/observability.js';
import type { ContentStore, ItemInput } from '../kernel/items/content-store.js';
import { validateItems, type PublishInput } from '../kernel/items/validate.js';
import type { Clock } from '../kernel/clock.js';
import type { HotRanking } from '../hot/service.js';
import type { ViewInput, ViewResult } from '../hot/hot-counters.js';
import type { DiscoverEmbeddings } from '../discover/embeddings.js';
import { isLook, viewSignals } from '../discover/embeddings.js';
import type { FollowingTimeline } from '../following/service.js';
import type { Exclusions } from '../exclusions/service.js';
import { ENGAGEMENT_KINDS, FEEDBACK_KINDS, type EngagementKind, type FeedbackKind } from '../exclusions/domain.js';
import type { EngagementRecord } from '../exclusions/ports.js';
import {
  DEFAULT_PREFERENCES,
  parsePreferences,
  preferencesToJson,
  type PreferencesJson,
} from '../exclusions/preferences.js';
import { applyPreferencesPatch } from '../exclusions/preferences-patch.js';
import { languagesOf } from '../kernel/items/lang.js';
import type { Notifications, NotifyInput } from '../notifications/service.js';
import { kindBit, SIGNAL_KINDS, type InteractionStore } from '../learn/interactions.js';

/** Every kind of positive signal, as `kinds` bits. */
const ALL_KINDS = SIGNAL_KINDS.reduce((bits, k) => bits | kindBit(k), 0);
import { eraseUser, exportUser, type Erasure, type ItemsChoice, type PersonalDataDeps } from './personal-data.js';
import type { VerbObserver } from '../observe/overview-metrics.js';

export type { PublishInput } from '../kernel/items/validate.js';

/** What the verbs need: one service per capability. */
export interface UseCaseDeps {
  content: ContentStore;
  hot: HotRanking;
  embeddings: DiscoverEmbeddings;
  timeline: FollowingTimeline;
  exclusions: Exclusions;
  /** The grouped notifications: follows and engagements notify their author. */
  notifications: Notifications;
  /** Every room's part of an erase or an export (src/use-cases/personal-data.ts). */
  personal: PersonalDataDeps;
  /**
   * The learning room's interactions (src/learn/interactions.ts): every positive signal is recorded after
   * the capability that owns it, and taken back with it. Absent: nothing learned.
   */
  learn?: Pick<InteractionStore, 'add' | 'remove'>;
  log: Logger;
  /** The clock: a published item's time may be at most `futureSkewMs` past the later of it and the publish time. */
  clock: Clock;
  /** How far past the clock a published item's time may be, ms (`FRESHET_FUTURE_SKEW_S`). */
  futureSkewMs: number;
  /**
   * Told after items were published or deleted (their ids): the for-you feed's shared fill pool takes
   * them in or drops them (src/for-you/fill-pool.ts). Absent: nothing to tell.
   */
  itemsChanged?: (publishedIds: readonly string[], deletedIds: readonly string[]) => void;
  /**
   * Told of what the Overview's metrics count (src/observe/metrics.ts, src/observe/active-readers.ts): new items
   * published, and readers active (a view's visitor, at the clock's time). Absent: nothing counted.
   */
  observe?: VerbObserver;
}

/** Runs of a step after the commit point before it is left to the sweeps (1 = no retry). */
export const AFTER_COMMIT_ATTEMPTS = 3;

/** The cross-capability verbs of one Freshet instance. */
export class UseCases {
  constructor(private readonly deps: UseCaseDeps) {}

  /**
   * Publishes a batch: upsert by id (idempotent, all-or-nothing in PostgreSQL), then the hot counters
   * and the following timeline (new items get a timeline id, their author's outbox and a fan-out job).
   * Every item is checked by the one check of published input ({@link validateItems}, the same for every
   * edge) before anything is written.
   * @param nowMs the publish time (epoch ms; virtual in replays): the items' `update_time`, the tid's time.
   * @returns counts of the content store: `inserted` new ids, `updated` existing live ones.
   * @throws FreshetError `INVALID_INPUT` / `INVALID_ID` naming the field (`items[3].embedding`; an id
   *   twice in the batch — nothing written), `ITEM_DELETED`, `STORE_UNAVAILABLE` (PostgreSQL down before
   *   the commit — nothing written).
   */
  async publishItems(items: readonly PublishInput[], nowMs: number): Promise<{ inserted: number; updated: number }> {
    if (items.length === 0) return { inserted: 0, updated: 0 };
    const { embeddings, content, hot, timeline, clock, futureSkewMs } = this.deps;
    // the upper bound of an item's time: the later of the clock and the publish time (a replay's virtual now)
    validateItems(items, {
      embeddingDim: embeddings.settings.dim,
      clockMs: Math.max(clock.now(), nowMs),
      futureSkewMs,
    });
    const records = embeddings.records(
      items,
      items.map((i) => i.embedding),
    );
    // an item sent without a language gets the detector's (src/kernel/items/lang.ts), `und` when unsure
    const langs = await languagesOf(items);
    const rows: ItemInput[] = items.map(({ embedding: _embedding, ...item }, i) => ({ ...item, lang: langs[i] }));
    // the commit point: items and their embeddings (docs/discover.md) in one transaction — a refused or failed
    // batch writes nothing anywhere
    const result = await content.upsertItems(rows, nowMs, {
      alongside: (tx) => embeddings.storeWithin(tx, records, nowMs),
    });
    // independent steps, at once: on a store that does not answer, the publish waits one deadline, not two
    await Promise.all([
      this.afterCommit('discover index', () => embeddings.committed(records)), // searchable here at once
      this.afterCommit('hot counters', () => hot.itemsChanged(rows)), // an edited published_at reaches the ranking
      this.afterCommit('following publish', () =>
        timeline.publish(
          rows.map((i) => i.id),
          nowMs,
        ),
      ), // the following timeline (docs/following.md)
    ]);
    this.deps.itemsChanged?.(
      rows.map((r) => r.id),
      [],
    );
    this.deps.observe?.published(result.inserted);
    return result;
  }

  /**
   * Soft-deletes an item: it leaves every feed (cached pages included, dropped on read) and the hot
   * ranking. @returns false when the item is unknown or already deleted.
   */
  async deleteItem(itemId: string, nowMs: number): Promise<boolean> {
    const deleted = await this.deps.content.deleteItem(itemId, nowMs);
    if (deleted) {
      this.deps.itemsChanged?.([], [itemId]);
      await this.afterCommit('hot delete', () => this.deps.hot.itemDeleted(itemId));
    }
    return deleted;
  }

  /**
   * Records views (one or a batch): the hot counters decide each verdict; views that looked at the
   * item — `counted`, `repeat`, and `expired` (an item older than the hot retention: not counted in the
   * ranking, but read all the same) — feed the reader embedding (docs/discover.md) and the reader's recent views
   * (docs/exclusions.md), a batch at its latest view time, so no feed serves the reader an item it just read.
   * @returns one outcome per view, in order.
   */
  async recordViews(views: readonly ViewInput[]): Promise<ViewResult[]> {
    const outcomes =
      views.length === 1 ? [await this.deps.hot.recordView(views[0]!)] : await this.deps.hot.recordViews(views);
    const looked = views.filter((_, i) => isLook(outcomes[i]!.verdict));
    for (const [k, v] of views.entries())
      if (v.feed && outcomes[k]!.verdict === 'counted') this.deps.observe?.clicked?.(v.feed, 1);
    // active now, in the server's time (the frame /metrics reads in), whatever time a replayed view carries
    for (const v of views) this.deps.observe?.active(v.visitorId, this.deps.clock.now());
    const signals = viewSignals(views, outcomes);
    await Promise.all([
      this.deps.embeddings.addSignals(signals),
      this.deps.learn?.add(
        signals.map((v) => ({ readerId: v.readerId, itemId: v.itemId, kind: 'view', atMs: v.atMs })),
      ),
      looked.length === 0
        ? undefined
        : this.deps.exclusions.recordViews(
            looked.map((v) => ({ readerId: v.visitorId, itemId: v.itemId })),
            Math.max(...looked.map((v) => v.nowMs)),
          ),
    ]);
    return outcomes;
  }

  /**
   * Gives a reader an embedding of the application's own (`FRESHET_EMBEDDING_DIM` numbers, the space of the
   * items' app embeddings): the discover feed's similar phase searches with it from the reader's next
   * session; null removes it. @returns whether one was removed.
   * @throws FreshetError INVALID_ID, INVALID_INPUT (length, non-finite, all zeros) — nothing written.
   */
  setReaderEmbedding(readerId: string, vector: readonly number[] | null, nowMs: number): Promise<boolean> {
    assertId(readerId, 'reader id');
    return this.deps.embeddings.setReaderEmbedding(readerId, vector, nowMs);
  }

  /**
   * Registers users in the follow graph (idempotent), so they can be followed and blocked before they
   * publish or read. @returns how many were new. @throws FreshetError INVALID_ID — nothing written.
   */
  registerUsers(userIds: readonly string[], nowMs: number): Promise<number> {
    return this.deps.timeline.registerUsers(userIds, nowMs);
  }

  /**
   * Replaces a reader's explicit interest terms (lower-cased words; the for-you recall's relevance).
   * @returns the terms as stored. @throws FreshetError INVALID_ID.
   */
  async setInterests(readerId: string, terms: readonly string[], nowMs: number): Promise<string[]> {
    await this.deps.content.setInterests(readerId, terms, nowMs);
    return this.deps.content.getInterests(readerId);
  }

  /**
   * `readerId` follows `authorId` (idempotent; a new follow backfills the inbox).
   * @throws FreshetError SELF_REFERENCE (see {@link notSelf}); otherwise as FollowingTimeline.follow.
   */
  async follow(readerId: string, authorId: string, nowMs: number): Promise<{ created: boolean; backfilled: number }> {
    notSelf(readerId, authorId, 'follow');
    const r = await this.deps.timeline.follow(readerId, authorId, nowMs);
    if (r.created) await this.notify({ recipientId: authorId, type: 'follow', actorId: readerId, itemId: null }, nowMs);
    return r;
  }

  /**
   * Bulk follows `[follower, followee]` (`freshet import graph`): written in one transaction (new edges
   * only; edges across a block skipped and counted), then the followers' inboxes are dropped so their
   * next read rebuilds them with the new authors' items. Idempotent.
   * @throws FreshetError INVALID_ID, SELF_REFERENCE — nothing written.
   */
  importFollows(
    edges: readonly (readonly [string, string])[],
    nowMs: number,
  ): Promise<{ inserted: number; blocked: number }> {
    return this.deps.timeline.importFollows(edges, nowMs);
  }

  /**
   * Unfollows (idempotent); the author's items leave the reader's inbox at once, and a follow notification
   * of the grouping window ending at `nowMs` is taken back.
   */
  async unfollow(readerId: string, authorId: string, nowMs: number): Promise<{ removed: boolean }> {
    const r = await this.deps.timeline.unfollow(readerId, authorId);
    if (r.removed) await this.retract(authorId, 'follow', readerId, null, nowMs);
    return r;
  }

  /**
   * Blocks: removes follows both ways and the items each side had of the other; every feed drops the author at once.
   * @throws FreshetError SELF_REFERENCE (see {@link notSelf}); otherwise as FollowingTimeline.block.
   */
  async block(readerId: string, authorId: string, nowMs: number): Promise<{ created: boolean }> {
    notSelf(readerId, authorId, 'block');
    const res = await this.deps.timeline.block(readerId, authorId, nowMs);
    await this.deps.exclusions.blocksChanged([readerId, authorId]); // the exclusions design: blocked authors, both ways
    return { created: res.created };
  }

  /** Unblocks (idempotent). */
  async unblock(readerId: string, authorId: string): Promise<{ removed: boolean }> {
    const res = await this.deps.timeline.unblock(readerId, authorId);
    await this.deps.exclusions.blocksChanged([readerId, authorId]);
    return res;
  }

  /**
   * Records a reply, like or share (idempotent per reader, item and kind): the item leaves the reader's
   * feeds, and its author is notified (grouped with the other readers' of the window).
   */
  async recordEngagement(
    readerId: string,
    itemId: string,
    kind: EngagementKind,
    nowMs: number,
  ): Promise<{ created: boolean }> {
    const r = await this.deps.exclusions.recordEngagement(readerId, itemId, kind, nowMs);
    await this.deps.learn?.add([{ readerId, itemId, kind, atMs: nowMs }]);
    if (r.created) {
      const [item] = await this.deps.content.getItems([itemId]);
      if (item) await this.notify({ recipientId: item.authorId, type: kind, actorId: readerId, itemId }, nowMs);
    }
    return r;
  }

  /**
   * {@link recordEngagement} for a batch (`POST /v1/engagements` with an array, replays): every element is
   * checked before anything is written, the engagements are written in one statement (all or nothing), then
   * the items' authors are notified in bulk.
   * @returns per engagement, in order: whether it is new (false: recorded before, or earlier in the batch).
   * @throws FreshetError INVALID_INPUT / INVALID_ID naming the element (`engagements[3].kind`), NOT_FOUND
   *   (an unknown or deleted item; nothing written), STORE_UNAVAILABLE.
   */
  async recordEngagements(batch: readonly EngagementRecord[]): Promise<boolean[]> {
    batch.forEach((e, i) => {
      if (!ENGAGEMENT_KINDS.includes(e.kind))
        throw fail('INVALID_INPUT', `engagements[${i}].kind ${preview(e.kind)} is not one of reply, like, share`);
      if (!Number.isSafeInteger(e.nowMs)) throw fail('INVALID_INPUT', `engagements[${i}].nowMs must be epoch ms`);
    });
    const created = await this.deps.exclusions.recordEngagements(batch);
    await this.deps.learn?.add(
      batch.map((e) => ({ readerId: e.readerId, itemId: e.itemId, kind: e.kind, atMs: e.nowMs })),
    );
    const fresh = batch.filter((_, i) => created[i]);
    const items = fresh.length ? await this.deps.content.getItems([...new Set(fresh.map((e) => e.itemId))]) : [];
    const authorOf = new Map(items.map((i) => [i.id, i.authorId]));
    const notices = fresh.flatMap(({ readerId, itemId, kind, nowMs }) => {
      const recipientId = authorOf.get(itemId);
      return recipientId ? [{ input: { recipientId, type: kind, actorId: readerId, itemId }, nowMs }] : [];
    });
    // retried whole: events already recorded are not recorded (nor counted) twice
    if (notices.length) await this.afterCommit('notifications', () => this.deps.notifications.notifyMany(notices));
    return created;
  }

  /**
   * Undoes a reply, like or share (idempotent): the item may come back to the reader's feeds, and the
   * author's notification of it is taken back when it is within the grouping window ending at `nowMs`.
   */
  async undoEngagement(
    readerId: string,
    itemId: string,
    kind: EngagementKind,
    nowMs: number,
  ): Promise<{ removed: boolean }> {
    const r = await this.deps.exclusions.undoEngagement(readerId, itemId, kind);
    await this.deps.learn?.remove(readerId, itemId, kindBit(kind));
    if (r.removed) {
      const [item] = await this.deps.content.getItems([itemId], { fresh: true });
      if (item) await this.retract(item.authorId, kind, readerId, itemId, nowMs);
    }
    return r;
  }

  /**
   * Records feedback: "not interested" (the item leaves the reader's feeds, its author is down-weighted) or
   * "show less" (its author and tags are down-weighted, compounding; docs/preferences.md).
   */
  async recordFeedback(readerId: string, itemId: string, kind: FeedbackKind, nowMs: number) {
    if (kind === 'not_interested') {
      const r = await this.deps.exclusions.notInterested(readerId, itemId, nowMs);
      // "not interested" takes back every positive signal the reader gave the item
      await this.deps.learn?.remove(readerId, itemId, ALL_KINDS);
      return r;
    }
    if (kind === 'show_less') return this.deps.exclusions.showLess(readerId, itemId, nowMs);
    throw fail('INVALID_INPUT', `unknown feedback kind ${preview(kind)}`);
  }

  /** Undoes a feedback (idempotent). */
  undoFeedback(readerId: string, itemId: string, kind: FeedbackKind): Promise<{ removed: boolean }> {
    if (!FEEDBACK_KINDS.includes(kind)) throw fail('INVALID_INPUT', `unknown feedback kind ${preview(kind)}`);
    return this.deps.exclusions.undoFeedback(readerId, itemId, kind);
  }

  /**
   * Replaces a reader's preferences (muted words and authors, languages, max per author): checked by the
   * one check of the document (`parsePreferences`, at `nowMs`: an expiry must be later), stored, and
   * applied from the next page of every feed. @returns the document as stored (JSON form).
   * @throws FreshetError INVALID_INPUT naming the field (nothing stored), INVALID_ID, STORE_UNAVAILABLE.
   */
  async setPreferences(readerId: string, body: unknown, nowMs: number): Promise<PreferencesJson> {
    const prefs = parsePreferences(body, nowMs);
    await this.deps.exclusions.setPreferences(readerId, prefs, nowMs);
    return preferencesToJson(prefs, nowMs);
  }

  /**
   * Edits a reader's preferences entry by entry (`PATCH`: add or remove muted words and authors, replace the
   * languages or the author cap; src/exclusions/preferences-patch.ts), atomically: two edits at once both
   * land. The patch is checked before the store is touched, then applied to the current document with its
   * row locked. @returns the document as stored (JSON form).
   * @throws FreshetError INVALID_INPUT naming the field (nothing stored), INVALID_ID, STORE_UNAVAILABLE.
   */
  async patchPreferences(readerId: string, body: unknown, nowMs: number): Promise<PreferencesJson> {
    applyPreferencesPatch(DEFAULT_PREFERENCES, body, nowMs); // a malformed patch never opens a transaction
    const next = await this.deps.exclusions.updatePreferences(
      readerId,
      (current) => applyPreferencesPatch(current, body, nowMs),
      nowMs,
    );
    return preferencesToJson(next, nowMs);
  }

  /** A reader's preferences (JSON form; the defaults when it never set any). */
  async preferences(readerId: string, nowMs: number): Promise<PreferencesJson> {
    return preferencesToJson(await this.deps.exclusions.preferences(readerId, nowMs), nowMs);
  }

  /**
   * Erases a user from every store (GDPR Art. 17; src/use-cases/personal-data.ts): idempotent, safe to run again
   * after a failure at any step. @param items `delete` (default at the edges): their items become
   * tombstones; `keep`: their items stay. @returns what was removed, with counts, and what keeps a trace.
   */
  eraseUser(userId: string, items: ItemsChoice, nowMs: number): Promise<Erasure> {
    return eraseUser(this.deps.personal, userId, items, nowMs);
  }

  /**
   * Everything Freshet holds about a user as JSON text chunks (GDPR Art. 15/20; the `UserExport` schema).
   * @throws FreshetError NOT_FOUND when it holds nothing about them (before the first chunk).
   */
  exportUser(userId: string, nowMs: number): AsyncGenerator<string> {
    return exportUser(this.deps.personal, userId, nowMs);
  }

  /** Notifies after the action committed: retried, then logged (the action stands; its notification is lost). */
  private notify(input: NotifyInput, nowMs: number): Promise<void> {
    return this.afterCommit('notification', () => this.deps.notifications.notify(input, nowMs));
  }

  /** Takes a notification back after the undo committed: retried, then logged. */
  private retract(
    recipientId: string,
    type: NotifyInput['type'],
    actorId: string,
    itemId: string | null,
    nowMs: number,
  ): Promise<void> {
    return this.afterCommit('notification retract', () =>
      this.deps.notifications.retract(recipientId, type, actorId, itemId, nowMs),
    );
  }

  /**
   * Runs a step after the commit point, retrying it; a step that still fails is logged and left to its
   * sweep (see the module doc), never thrown: the items are committed and will be completed.
   */
  private async afterCommit(step: string, run: () => Promise<unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await run();
        return;
      } catch (err) {
        // a store that missed its deadline (or is down) is not retried at once: the sweep completes the step
        if (attempt >= AFTER_COMMIT_ATTEMPTS || (err instanceof FreshetError && err.name_ === 'STORE_UNAVAILABLE')) {
          this.deps.log.error({ err, step }, 'a step after the commit failed; its sweep completes it');
          return;
        }
      }
    }
  }
}

/**
 * Refuses a user following or blocking itself before anything is read or written, naming the field as
 * the routes take it (`PUT /v1/users/:id/following/:author_id`, `…/blocks/:author_id`).
 * @throws FreshetError SELF_REFERENCE (40004).
 */
function notSelf(userId: string, authorId: string, verb: 'follow' | 'block'): void {
  if (userId === authorId) {
    throw fail(
      'SELF_REFERENCE',
      `path parameter author_id must name another user than the path's :id (got "${authorId}" for both): a user cannot ${verb} itself`,
    );
  }
}
