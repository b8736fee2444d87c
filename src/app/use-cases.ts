/**
 * The verbs that span capabilities, written once. HTTP handlers, every CLI command (import, simulate,
 * replay) and the library call these for writes and nothing else, so the edges cannot drift
 * (docs/architecture.md "Use cases"; Mastodon's FeedManager verbs are the model).
 *
 * | verb | capabilities it writes, in order |
 * |---|---|
 * | `publishItems` | content + discover embeddings (one PostgreSQL transaction, the commit point) → at once: hot (published_at) and following (tid, outbox, fan-out job) |
 * | `deleteItem` | content (soft delete) → hot (leaves the ranking); feeds drop it on read |
 * | `recordViews` | hot (PV/UV/score) → discover (reader signals) + exclusions (recent views) |
 * | `follow` / `unfollow` | following (graph, inbox backfill / unmerge) |
 * | `importFollows` | following (graph in bulk, then the followers' inboxes dropped: rebuilt on read) |
 * | `block` / `unblock` | following (graph, both inboxes) → exclusions (cached blocked authors, both users) |
 * | `recordEngagement` / `recordFeedback` / `undoFeedback` | exclusions (PostgreSQL + hot state) |
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
import type { Logger } from '../kernel/observability.js';
import type { ContentStore, ItemInput } from '../kernel/items/content-store.js';
import { validateItems, type PublishInput } from '../kernel/items/validate.js';
import type { Clock } from '../kernel/clock.js';
import type { HotRanking } from '../hot/service.js';
import type { ViewInput, ViewResult } from '../hot/hot-counters.js';
import type { DiscoverEmbeddings } from '../discover/embeddings.js';
import { viewSignals } from '../discover/embeddings.js';
import type { FollowingTimeline } from '../following/service.js';
import type { Exclusions } from '../exclusions/service.js';
import type { EngagementKind, FeedbackKind } from '../exclusions/domain.js';

export type { PublishInput } from '../kernel/items/validate.js';

/** What the verbs need: one service per capability. */
export interface UseCaseDeps {
  content: ContentStore;
  hot: HotRanking;
  embeddings: DiscoverEmbeddings;
  timeline: FollowingTimeline;
  exclusions: Exclusions;
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
    const rows: ItemInput[] = items.map(({ embedding: _embedding, ...item }) => item);
    // the commit point: items and their embeddings (note 3) in one transaction — a refused or failed
    // batch writes nothing anywhere (issue 21.3)
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
      ), // note 4
    ]);
    this.deps.itemsChanged?.(
      rows.map((r) => r.id),
      [],
    );
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
   * item feed the reader embedding (note 3), counted ones the reader's recent views (note 5), a batch
   * at its latest view time.
   * @returns one outcome per view, in order.
   */
  async recordViews(views: readonly ViewInput[]): Promise<ViewResult[]> {
    const outcomes =
      views.length === 1 ? [await this.deps.hot.recordView(views[0]!)] : await this.deps.hot.recordViews(views);
    const counted = views.filter((_, i) => outcomes[i]!.verdict === 'counted');
    await Promise.all([
      this.deps.embeddings.addSignals(viewSignals(views, outcomes)),
      counted.length === 0
        ? undefined
        : this.deps.exclusions.recordViews(
            counted.map((v) => ({ readerId: v.visitorId, itemId: v.itemId })),
            Math.max(...counted.map((v) => v.nowMs)),
          ),
    ]);
    return outcomes;
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
  follow(readerId: string, authorId: string, nowMs: number): Promise<{ created: boolean; backfilled: number }> {
    notSelf(readerId, authorId, 'follow');
    return this.deps.timeline.follow(readerId, authorId, nowMs);
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

  /** Unfollows (idempotent); the author's items leave the reader's inbox at once. */
  unfollow(readerId: string, authorId: string): Promise<{ removed: boolean }> {
    return this.deps.timeline.unfollow(readerId, authorId);
  }

  /**
   * Blocks: removes follows both ways and the items each side had of the other; every feed drops the author at once.
   * @throws FreshetError SELF_REFERENCE (see {@link notSelf}); otherwise as FollowingTimeline.block.
   */
  async block(readerId: string, authorId: string, nowMs: number): Promise<{ created: boolean }> {
    notSelf(readerId, authorId, 'block');
    const res = await this.deps.timeline.block(readerId, authorId, nowMs);
    await this.deps.exclusions.blocksChanged([readerId, authorId]); // note 5: blocked authors, both ways
    return { created: res.created };
  }

  /** Unblocks (idempotent). */
  async unblock(readerId: string, authorId: string): Promise<{ removed: boolean }> {
    const res = await this.deps.timeline.unblock(readerId, authorId);
    await this.deps.exclusions.blocksChanged([readerId, authorId]);
    return res;
  }

  /** Records a reply, like or share (idempotent per reader, item and kind): the item leaves the reader's feeds. */
  recordEngagement(
    readerId: string,
    itemId: string,
    kind: EngagementKind,
    nowMs: number,
  ): Promise<{ created: boolean }> {
    return this.deps.exclusions.recordEngagement(readerId, itemId, kind, nowMs);
  }

  /** Records feedback ("not interested": the item leaves the reader's feeds, its author is down-weighted). */
  recordFeedback(readerId: string, itemId: string, kind: FeedbackKind, nowMs: number) {
    if (kind !== 'not_interested') throw fail('INVALID_INPUT', `unknown feedback kind ${preview(kind)}`);
    return this.deps.exclusions.notInterested(readerId, itemId, nowMs);
  }

  /** Undoes a feedback (idempotent). */
  undoFeedback(readerId: string, itemId: string, kind: FeedbackKind): Promise<{ removed: boolean }> {
    if (kind !== 'not_interested') throw fail('INVALID_INPUT', `unknown feedback kind ${preview(kind)}`);
    return this.deps.exclusions.undoNotInterested(readerId, itemId);
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
