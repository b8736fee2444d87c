/**
 * FollowingTimeline: the following timeline (docs/following.md) as domain verbs (Mastodon FeedManager's
 * `push_to_home` / `unmerge_from_home` / `populate_home`; here `publish`, `follow` (+ backfill),
 * `unmergeFromInbox`, `populateInbox`, `read`). Depends on ports only.
 *
 * Read (the following design's 读取Feed流流程, merged with pull): one PostgreSQL round trip for the reader's state
 * (last-active time, followed authors with a pull tid) and the visibility watermark; a reader inactive
 * for longer than the active window — or whose inbox is missing — gets it rebuilt from PostgreSQL first;
 * then rounds of: read the inbox and the pulled outboxes below the cursor (over-fetching 2× + 8),
 * merge by tid (domain `mergeSlices`), hydrate and filter in one SQL query (deleted, unfollowed, blocked
 * are dropped and removed from the inbox lazily, the following design's 软删除 + 懒删除), until the page is full; below
 * the highest floor the page is finished from PostgreSQL (Misskey's database fallback).
 *
 * Exclusions (the exclusions design, README "Exclusions"): this timeline applies `blocked_author` and `deleted` (its
 * own SQL reads the same `blocks` and `items` rows as the Exclusions service; `own` cannot occur, one
 * cannot follow oneself) and deliberately NOT `recently_viewed`, `engaged` or `not_interested`: it is
 * the complete, chronological record of what followed authors published, paged by `max_id`, and an
 * item from someone the reader follows must not vanish because the reader opened, liked or dismissed it
 * in a ranked feed (dropping them would also make pages short, which reads as "end of timeline").
 *
 * The reader's preferences (docs/preferences.md) do apply here, as Mastodon and Bluesky filter the home
 * timeline: muted authors, muted words whose feeds include `following`, and the language list when the
 * reader set `languages_in_following`. They come from the exclusions snapshot (`ExclusionSource`, one read
 * per page, beside the reader's view) and are applied to the hydrated items of every round — from Redis
 * and from PostgreSQL alike — so a page is still filled while older items remain, and a short page still
 * means the end of the timeline. Hidden items stay in the inbox (a mute that ends brings them back). A muted
 * phrase whose action is `warn` hides nothing: the item is served with `filtered` (the stream's too).
 */
import type { Logger } from '../kernel/observability.js';
import type { FanoutQueue } from './fanout-queue.js';
import type { PulledAuthor, SocialGraph } from './social-graph.js';
import type { Published, TimelineIndex, TimelineItem } from './timeline-index.js';
import type { SourceSlice } from './domain.js';
import type { TimelineStore } from './timeline-store.js';
import type { TimelineMetrics } from './timeline-metrics.js';
import { fail } from '../kernel/errors.js';
import { HOUR_MS } from '../kernel/clock.js';
import { mergeSlices, nextMaxId, outboxFloor, overFetch } from './domain.js';
import { publishToTimeline } from './publish.js';
import type { ExclusionSource } from '../kernel/exclusion-source.js';

/** Tunables; durations in ms (src/compose/config.ts has their defaults and sources). */
export interface TimelineSettings {
  /**
   * A reader who has not read for longer is cold: its inbox is rebuilt on the next read, and on Redis it
   * expires this long after the last read (so it gets no more pushes) (7 days).
   */
  activeWindowMs: number;
  /** Entries kept per inbox (800). */
  inboxLength: number;
  /** Entries kept per outbox (800). */
  outboxLength: number;
  /** Items of an author pushed into the inbox on follow (200, the following design: 关注时写扩散+刷新). */
  followBackfill: number;
}

/** Ports the timeline depends on. */
export interface TimelineDeps {
  graph: SocialGraph;
  index: TimelineIndex;
  store: TimelineStore;
  queue: FanoutQueue;
  metrics: TimelineMetrics;
  log: Logger;
  /** The readers' preferences (in the exclusions snapshot); absent: none apply. */
  exclusions?: ExclusionSource;
}

/** Entries an unread count counts at most: beyond it, "1000+" (docs/following.md "Catch-up"). */
export const UNREAD_CAP = 1_000;

/** A reader's read marker of the following timeline, with its unread count. */
export interface TimelineMarker {
  /** The timeline id the reader read up to (0: never set). */
  lastReadId: number;
  /** When it last moved, epoch ms (null: never). */
  updatedAt: number | null;
  unread: { count: number; capped: boolean };
}

/** A page request: at most `limit` items with a tid in (sinceId, maxId), newest first. */
export interface PageQuery {
  limit: number;
  maxId?: number;
  sinceId?: number;
}

/** A page: items newest first, and the `max_id` of the next page (null: nothing more, for now). */
export interface TimelinePage {
  items: TimelineItem[];
  nextMaxId: number | null;
  /** The reader's inbox was rebuilt from PostgreSQL for this read. */
  rebuilt: boolean;
}

/** What one read did (for metrics). */
interface ReadTrace {
  rebuilt: boolean;
  fromSql: boolean;
}

export class FollowingTimeline {
  /** Last-active is rewritten at most this often per reader (it only has to be exact to the window). */
  private readonly touchEveryMs: number;

  private readonly markerListeners = new Set<(readerId: string) => void>();

  constructor(
    private readonly deps: TimelineDeps,
    private readonly settings: TimelineSettings,
  ) {
    this.touchEveryMs = Math.min(HOUR_MS, Math.floor(settings.activeWindowMs / 24));
  }

  /**
   * Publishes items already committed to the content store (the `publishItems` use case calls this after
   * its commit): {@link publishToTimeline}. @returns the items published by this call (none for re-sent ones).
   */
  publish(itemIds: readonly string[], nowMs: number): Promise<Published[]> {
    return publishToTimeline({ deps: this.deps, ...this.settings }, itemIds, nowMs);
  }

  /** Registers users in the graph (idempotent). @returns how many were new. @throws FreshetError INVALID_ID. */
  registerUsers(userIds: readonly string[], nowMs: number): Promise<number> {
    return this.deps.graph.ensureUsers(userIds, nowMs);
  }

  /**
   * `readerId` follows `authorId`; a new follow backfills the reader's inbox with the author's newest
   * `followBackfill` items. @throws FreshetError SELF_REFERENCE, UNKNOWN_USER, BLOCKED, INVALID_ID.
   */
  async follow(readerId: string, authorId: string, nowMs: number): Promise<{ created: boolean; backfilled: number }> {
    const { created } = await this.deps.graph.follow(readerId, authorId, nowMs);
    return { created, backfilled: created ? await this.backfill(readerId, authorId) : 0 };
  }

  /**
   * Bulk follows (a graph import): the edges go into the graph in one transaction (new ones only, those a
   * block forbids skipped), then the inboxes of every follower in `edges` are dropped, so each is rebuilt
   * from PostgreSQL — new authors included — on its reader's next read. Every follower's, not only those
   * whose edges were new: a re-run after a failure between the two steps drops what the failed run
   * could not (idempotent; a dropped inbox costs one rebuild).
   * @throws FreshetError INVALID_ID, SELF_REFERENCE — nothing written.
   */
  async importFollows(
    edges: readonly (readonly [string, string])[],
    nowMs: number,
  ): Promise<{ inserted: number; blocked: number }> {
    const r = await this.deps.graph.importFollows(edges, nowMs);
    await this.deps.store.dropInboxes([...new Set(edges.map((e) => e[0]))]);
    return r;
  }

  /** Unfollows and removes the author's items from the reader's inbox at once (read-time guard too). */
  async unfollow(readerId: string, authorId: string): Promise<{ removed: boolean }> {
    const r = await this.deps.graph.unfollow(readerId, authorId);
    if (r.removed) await this.unmergeFromInbox(readerId, authorId);
    return r;
  }

  /** Blocks: removes the follows both ways and the items each side had of the other from its inbox. */
  async block(readerId: string, authorId: string, nowMs: number) {
    const r = await this.deps.graph.block(readerId, authorId, nowMs);
    await this.unmergeFromInbox(readerId, authorId);
    if (r.unfollowedBy) await this.unmergeFromInbox(authorId, readerId);
    return r;
  }

  unblock(readerId: string, authorId: string): Promise<{ removed: boolean }> {
    return this.deps.graph.unblock(readerId, authorId);
  }

  /** Removes an author's newest `inboxLength` items from a reader's inbox (Mastodon `unmerge_from_home`). */
  async unmergeFromInbox(readerId: string, authorId: string): Promise<void> {
    const tids = await this.deps.index.authorTids(authorId, Infinity, this.settings.inboxLength);
    await this.deps.store.removeFromInbox(readerId, tids);
  }

  /**
   * Rebuilds a reader's inbox from PostgreSQL (Mastodon `populate_home`), safe while fan-out runs:
   * the inbox is marked building first (pushes land from then on), the reader's last-active time is set
   * (fan-outs that read the graph afterwards visit it: `readingFollowers`), then the newest `inboxLength`
   * tids of its timeline are merged in — every item is either in that query or pushed.
   */
  async populateInbox(readerId: string, nowMs: number): Promise<void> {
    const { store, graph, index } = this.deps;
    const { inboxLength, activeWindowMs } = this.settings;
    await store.beginRebuild(readerId, activeWindowMs);
    await graph.touch(readerId, nowMs);
    const tids = await index.timelineTids(readerId, Infinity, 0, inboxLength + 1);
    const floor = tids.length > inboxLength ? tids[inboxLength]! : 0;
    await store.completeRebuild(readerId, tids.slice(0, inboxLength), floor, inboxLength, activeWindowMs);
  }

  /**
   * One page of the reader's timeline at `nowMs` (see the module doc).
   * @throws FreshetError INVALID_ID; store errors propagate (STORE_UNAVAILABLE).
   */
  async page(readerId: string, q: PageQuery, nowMs: number): Promise<TimelinePage> {
    const t0 = performance.now();
    const trace: ReadTrace = { rebuilt: false, fromSql: false };
    // The watermark is read before any inbox or outbox, never alongside: a fan-out finishing between a
    // source read and a later watermark read would leave a tid below the watermark missing from the page.
    // It comes with the reader's pulled authors from one snapshot (TimelineIndex.readView).
    const exPending = this.deps.exclusions?.forReader(readerId, nowMs);
    exPending?.catch(() => {}); // awaited below; a failure surfaces there
    const state = await this.deps.index.readView(readerId);
    const watermark = state.watermark;
    const last = state.lastActiveAt;
    let touched: Promise<void> | undefined;
    if (last === null || nowMs - last > this.settings.activeWindowMs) {
      await this.populateInbox(readerId, nowMs);
      trace.rebuilt = true;
    } else if (nowMs - last >= this.touchEveryMs) {
      touched = this.touch(readerId, nowMs);
    }
    const hi = Math.min(q.maxId ?? Infinity, watermark);
    const lo = q.sinceId ?? 0;
    const ex = await exPending;
    const keep = ex?.needsItems('following') ? (t: TimelineItem) => ex.itemReason(t.item, 'following') === null : null;
    const collected =
      hi > lo + 1 ? await this.collect(readerId, state.pulled, { hi, lo, limit: q.limit, keep }, nowMs, trace) : [];
    // an item holding the reader's `warn` phrases is served with `filtered` (docs/preferences.md)
    const items = ex ? collected.map((t) => ({ ...t, item: ex.serve(t.item, 'following') })) : collected;
    await touched;
    this.deps.metrics.read(performance.now() - t0, trace.rebuilt, trace.fromSql);
    return {
      items,
      nextMaxId: nextMaxId(
        items.map((i) => i.tid),
        q.limit,
      ),
      rebuilt: trace.rebuilt,
    };
  }

  /**
   * Entries of the reader's timeline above `markerTid` that a read would show (followed, not blocked or
   * deleted, the reader's mutes applied: {@link page}'s rules and sources — the inbox and the pulled
   * outboxes, PostgreSQL below their floors), counted up to {@link UNREAD_CAP}.
   */
  async unread(readerId: string, markerTid: number, nowMs: number): Promise<{ count: number; capped: boolean }> {
    const page = await this.page(readerId, { limit: UNREAD_CAP + 1, sinceId: markerTid }, nowMs);
    return { count: Math.min(page.items.length, UNREAD_CAP), capped: page.items.length > UNREAD_CAP };
  }

  /** The reader's read marker and its unread count (docs/following.md "Catch-up"). */
  async marker(readerId: string, nowMs: number): Promise<TimelineMarker> {
    const m = await this.deps.index.marker(readerId);
    return { ...m, unread: await this.unread(readerId, m.lastReadId, nowMs) };
  }

  /**
   * Moves the reader's marker to `lastReadId` (a timeline id it read) — forward only unless `force`: of
   * two devices racing, the newer marker stays. Other devices' streams hear of it.
   * @throws FreshetError INVALID_INPUT when `lastReadId` is not a timeline id at or below the newest
   *   visible one (nothing stored).
   */
  async setMarker(
    readerId: string,
    lastReadId: number,
    force: boolean,
    nowMs: number,
  ): Promise<TimelineMarker & { moved: boolean }> {
    const newest = (await this.deps.index.watermark()) - 1;
    if (!Number.isSafeInteger(lastReadId) || lastReadId < 0 || lastReadId > newest) {
      throw fail(
        'INVALID_INPUT',
        `last_read_id ${String(lastReadId).slice(0, 24)} is not a timeline id at or below the newest visible one (${newest}): send the timeline_id of an entry the reader read`,
      );
    }
    const m = await this.deps.index.setMarker(readerId, lastReadId, nowMs, force);
    if (m.moved) for (const l of this.markerListeners) l(readerId);
    return { ...m, unread: await this.unread(readerId, m.lastReadId, nowMs) };
  }

  /** Calls `listener` with the reader's id whenever this process moved a reader's marker. Returns the removal. */
  onMarkerMoved(listener: (readerId: string) => void): () => void {
    this.markerListeners.add(listener);
    return () => void this.markerListeners.delete(listener);
  }

  /**
   * Catch-up: the reader's timeline **oldest first** above `minId` (its marker, or the last entry of the
   * previous catch-up page), at most `limit`, under the same rules as {@link page}. Only entries below the
   * visibility watermark are served, and every entry below it is final, so a later fan-out never lands
   * below the cursor: reading page after page sees every entry exactly once, however many arrive meanwhile.
   * @returns the entries and the `min_id` of the next page (null: caught up, for now).
   */
  async catchUp(
    readerId: string,
    q: { minId: number; limit: number },
    nowMs: number,
  ): Promise<{ items: TimelineItem[]; nextMinId: number | null }> {
    const exPending = this.deps.exclusions?.forReader(readerId, nowMs);
    exPending?.catch(() => {});
    const { watermark } = await this.deps.index.readView(readerId);
    const ex = await exPending;
    const keep = ex?.needsItems('following') ? (t: TimelineItem) => ex.itemReason(t.item, 'following') === null : null;
    const out: TimelineItem[] = [];
    for (let lo = q.minId; out.length < q.limit; ) {
      const asked = keep ? overFetch(q.limit - out.length) : q.limit - out.length;
      const rows = await this.deps.index.timelineAfter(readerId, lo, watermark, asked);
      out.push(...(keep ? rows.filter(keep) : rows).slice(0, q.limit - out.length));
      if (rows.length < asked) return { items: out, nextMinId: null };
      lo = rows[rows.length - 1]!.tid;
    }
    return { items: out, nextMinId: out[out.length - 1]!.tid };
  }

  /**
   * Erases a user's hot timeline state (src/use-cases/personal-data.ts), in an order a run stopped at any
   * point and run again completes: the queued fan-outs of their items (jobs first, then their pending rows —
   * a job queued again meanwhile by the sweep, or left by a run that stopped after the rows, finds no row and
   * writes nothing: FanoutWorker), then their inbox and outbox (after the jobs, which would write the outbox
   * again), then their read marker. A fan-out already running pushes only into prepared inboxes.
   */
  async forgetUser(userId: string): Promise<Record<string, number>> {
    const { index, queue, store } = this.deps;
    await queue.remove(await index.pendingOf(userId));
    const fanouts = await index.forgetPending(userId);
    await store.forget(userId);
    const markers = await index.forgetMarker(userId);
    return { boxes: 1, fanouts, markers };
  }

  /** Marks the reader active in PostgreSQL and refreshes its inbox's time to live. */
  private async touch(readerId: string, nowMs: number): Promise<void> {
    await Promise.all([
      this.deps.graph.touch(readerId, nowMs),
      this.deps.store.touch(readerId, this.settings.activeWindowMs),
    ]);
  }

  /** Pushes the author's newest items into the reader's inbox; raises its floor if some were left out. */
  private async backfill(readerId: string, authorId: string): Promise<number> {
    const n = this.settings.followBackfill;
    const tids = await this.deps.index.authorTids(authorId, Infinity, n + 1);
    const floor = tids.length > n ? tids[n]! : 0;
    const ok = await this.deps.store.mergeIntoInbox(readerId, tids.slice(0, n), floor, this.settings.inboxLength);
    return ok ? Math.min(n, tids.length) : 0;
  }

  /**
   * The rounds of a read: Redis above the floors, PostgreSQL below them; `keep` (the reader's preferences)
   * filters every round's items, so the rounds go on until the page is full or the timeline ends.
   */
  private async collect(
    readerId: string,
    pulled: PulledAuthor[],
    q: { hi: number; lo: number; limit: number; keep: ((t: TimelineItem) => boolean) | null },
    nowMs: number,
    trace: ReadTrace,
  ): Promise<TimelineItem[]> {
    const { lo, limit, keep } = q;
    const out: TimelineItem[] = [];
    let cursor = q.hi;
    while (out.length < limit) {
      const count = overFetch(limit - out.length);
      const slices = await this.readSources(readerId, pulled, { hi: cursor, lo, count }, nowMs, trace);
      if (!slices) {
        trace.fromSql = true;
        out.push(...(await this.fromSql(readerId, cursor, lo, limit - out.length, keep)));
        break;
      }
      const round = mergeSlices(
        slices.map((s) => s.slice),
        lo,
      );
      if (round.tids.length > 0) {
        const kept = await this.hydrate(readerId, round.tids, slices, keep);
        out.push(...kept.slice(0, limit - out.length));
        cursor = round.tids[round.tids.length - 1]!;
      }
      if (out.length >= limit) break;
      if (round.exhausted) {
        const below = Math.min(cursor, round.floor + 1);
        if (round.floor > lo && below > lo + 1) {
          trace.fromSql = true;
          out.push(...(await this.fromSql(readerId, below, lo, limit - out.length, keep)));
        }
        break;
      }
    }
    return out;
  }

  /** The timeline from PostgreSQL below `hi`: pages of `room` until `room` items pass `keep` or it ends. */
  private async fromSql(
    readerId: string,
    hi: number,
    lo: number,
    room: number,
    keep: ((t: TimelineItem) => boolean) | null,
  ): Promise<TimelineItem[]> {
    const out: TimelineItem[] = [];
    for (let below = hi; out.length < room; ) {
      const asked = keep ? overFetch(room - out.length) : room - out.length;
      const page = await this.deps.index.timeline(readerId, below, lo, asked);
      out.push(...(keep ? page.filter(keep) : page).slice(0, room - out.length));
      if (!keep || page.length < asked) break;
      below = page[page.length - 1]!.tid;
    }
    return out;
  }

  /**
   * Reads the inbox and the pulled outboxes for one round; rebuilds the inbox once if it is not ready.
   * @returns null when the inbox is still not ready after a rebuild (read from PostgreSQL instead).
   */
  private async readSources(
    readerId: string,
    pulled: PulledAuthor[],
    range: { hi: number; lo: number; count: number },
    nowMs: number,
    trace: ReadTrace,
  ) {
    const { store } = this.deps;
    for (;;) {
      const [inbox, outboxes] = await Promise.all([
        store.readInbox(readerId, range),
        pulled.length > 0
          ? store.readOutboxes(
              pulled.map((p) => p.authorId),
              range,
            )
          : Promise.resolve([]),
      ]);
      if (inbox.state === 'ready') {
        const slices: { slice: SourceSlice; authorId: string | null }[] = [
          { slice: { tids: inbox.tids, asked: range.count, floor: inbox.floor }, authorId: null },
        ];
        outboxes.forEach((o, i) => {
          const p = pulled[i]!;
          slices.push({
            slice: { tids: o.tids, asked: range.count, floor: outboxFloor(o.floor, p.pullTid) },
            authorId: p.authorId,
          });
        });
        return slices;
      }
      if (trace.rebuilt) return null;
      await this.populateInbox(readerId, nowMs);
      trace.rebuilt = true;
    }
  }

  /**
   * Hydrates merged tids (one SQL query), keeps the visible ones that pass `keep` in order, and lazily
   * removes the hidden ones: deleted from the inbox and the outboxes holding them, unfollowed or
   * blocked from the inbox.
   */
  private async hydrate(
    readerId: string,
    tids: number[],
    sources: { slice: SourceSlice; authorId: string | null }[],
    keep: ((t: TimelineItem) => boolean) | null,
  ): Promise<TimelineItem[]> {
    const { index, store, metrics } = this.deps;
    const vis = await index.visible(readerId, tids);
    const removals: Promise<void>[] = [];
    if (vis.deleted.length + vis.unfollowed.length > 0)
      removals.push(store.removeFromInbox(readerId, [...vis.deleted, ...vis.unfollowed]));
    if (vis.deleted.length > 0) {
      const gone = new Set(vis.deleted);
      for (const s of sources) {
        const hit = s.authorId === null ? [] : s.slice.tids.filter((t) => gone.has(t));
        if (hit.length > 0) removals.push(store.removeFromOutbox(s.authorId!, hit));
      }
    }
    metrics.lazyRemoved('deleted', vis.deleted.length);
    metrics.lazyRemoved('unfollowed', vis.unfollowed.length);
    await Promise.all(removals);
    return keep ? vis.items.filter(keep) : vis.items;
  }
}
