/**
 * HotRanking: the hot list (docs/hot.md) — views in, a cached, explainable ranking out.
 *
 * Views: one atomic store step per view (`HotCounters.view`). The store only knows items whose
 * publication time is registered; on the first view of an item the service looks it up in the
 * content store (PostgreSQL), registers it, and retries — so the hot path stays one round trip and an
 * unknown or deleted item is a NOT_FOUND error. Items older than the retention are never registered:
 * their views answer `expired` (not counted, not suspicious).
 *
 * Ranking: `GET /v1/hot` is served from a snapshot refreshed at most every `cacheRefreshMs` (the hot-ranking design:
 * 60–120 s) so the order does not jitter. A snapshot takes the ranking's top `cap` items (merged over
 * shards), reads their counters, hydrates them from the content store (deleted items drop out), and
 * evaluates the hot-ranking design's score for each at the snapshot's time, so every score in a response can be
 * checked by hand from the pv, uv and published_at next to it. Requests filter the snapshot to the
 * items published in `[now − range, now]` of the request's time (a replay at a 2016
 * `X-Freshet-Now` sees its 2016 items, not items "published" after its now) and cut it to `limit`.
 */
import type { Item } from '../kernel/items/item.js';
import { fail } from '../kernel/errors.js';
import { assertId, compareIds } from '../kernel/ids.js';
import { hotScore, hoursSincePublish, retentionCutoff, type HotParams, type SuspiciousCounts } from './domain.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import type { HotCounters, ViewInput, ViewResult } from './hot-counters.js';
import type { HotMetrics } from './hot-metrics.js';
import type { Logger } from '../kernel/observability.js';

/** Tunables of the ranking; durations in ms. */
export interface HotRankingSettings {
  params: HotParams;
  /** Snapshot lifetime (the hot-ranking design: 60–120 s). */
  cacheRefreshMs: number;
  /** Items ranked in a snapshot (the ranking's cap, the hot-ranking design: 1000). */
  cap: number;
  /** Items published longer ago than this are not counted (`expired`); 0 = never (`KEEP_FOREVER`). */
  retentionMs: number;
}

/** Ports the ranking depends on. */
export interface HotDeps {
  counters: HotCounters;
  content: ContentStore;
  metrics: HotMetrics;
  log: Logger;
}

/** One ranked item in a snapshot. */
export interface HotEntry {
  item: Item;
  pv: number;
  uv: number;
  /** The hot-ranking design's score at the snapshot's time. */
  score: number;
  suspicious: SuspiciousCounts;
}

/** A computed ranking. */
export interface HotSnapshot {
  /** When it was computed (the request's or the worker's time), epoch ms. */
  computedAtMs: number;
  /** Best first. */
  entries: HotEntry[];
  /** Suspicious views kept out, store-wide totals. */
  suspicious: SuspiciousCounts;
}

/** One `GET /v1/hot` answer. */
export interface HotPage {
  computedAtMs: number;
  rangeMs: number;
  entries: HotEntry[];
  suspicious: SuspiciousCounts;
}

/** The hot ranking's service: records views, serves the cached ranking (see the module doc). */
export class HotRanking {
  private cache: HotSnapshot | null = null;
  private computing: { atMs: number; run: Promise<HotSnapshot> } | null = null;

  constructor(
    private readonly deps: HotDeps,
    readonly settings: HotRankingSettings,
  ) {}

  /**
   * Records one view.
   * @throws FreshetError `INVALID_ID` (item or visitor), `NOT_FOUND` (unknown or deleted item);
   *   store errors propagate.
   */
  async recordView(v: ViewInput): Promise<ViewResult> {
    assertId(v.itemId, 'item_id');
    assertId(v.visitorId, 'visitor_id');
    let result = await this.deps.counters.view(v);
    if (result.verdict === 'unknown') {
      const expired = await this.resolve([v.itemId], v.nowMs);
      result = expired.has(v.itemId)
        ? { verdict: 'expired', pv: 0, uv: 0, score: 0 }
        : await this.deps.counters.view(v);
      if (result.verdict === 'unknown') throw fail('NOT_FOUND', `no item ${v.itemId}`);
    }
    this.deps.metrics.views(result.verdict);
    return result;
  }

  /**
   * Records a batch of views (backfills), in order. Every id is checked and every item resolved
   * before the first view is written: an invalid id or an unknown item rejects the whole batch.
   * An item deleted while the batch runs answers `unknown` for its remaining views.
   * @throws FreshetError `INVALID_ID`, `NOT_FOUND` (naming the unknown items); store errors propagate.
   */
  async recordViews(views: readonly ViewInput[]): Promise<ViewResult[]> {
    for (const v of views) {
      assertId(v.itemId, 'item_id');
      assertId(v.visitorId, 'visitor_id');
    }
    const ids = [...new Set(views.map((v) => v.itemId))];
    const known = await this.deps.counters.counters(ids);
    const missing = known.filter((c) => c.publishedAtMs === null).map((c) => c.itemId);
    // expired even at the batch's earliest view → expired for all of them; the store decides the rest per view
    const earliest = views.reduce((m, v) => Math.min(m, v.nowMs), Infinity);
    const expired = missing.length > 0 ? await this.resolve(missing, earliest) : new Set<string>();
    const results = await Promise.all(
      views.map((v) =>
        expired.has(v.itemId)
          ? Promise.resolve<ViewResult>({ verdict: 'expired', pv: 0, uv: 0, score: 0 })
          : this.deps.counters.view(v),
      ),
    );
    for (const r of results) this.deps.metrics.views(r.verdict);
    return results;
  }

  /**
   * The ranking for `GET /v1/hot`: items published in `[nowMs − rangeMs, nowMs]`, best first, at most
   * `limit`. Uses the cached snapshot unless it is older than `cacheRefreshMs` at `nowMs` (or later
   * than `nowMs`: a request back in time gets a snapshot of its own).
   */
  async top(rangeMs: number, limit: number, nowMs: number): Promise<HotPage> {
    const snap = await this.snapshotAt(nowMs);
    const from = nowMs - rangeMs;
    const entries: HotEntry[] = [];
    for (const e of snap.entries) {
      if (e.item.publishedAt < from || e.item.publishedAt > nowMs) continue;
      entries.push(e);
      if (entries.length >= limit) break;
    }
    return { computedAtMs: snap.computedAtMs, rangeMs, entries, suspicious: snap.suspicious };
  }

  /** The cached snapshot when fresh at `nowMs` (not older than the refresh interval, not in the future), else a new one. */
  async snapshotAt(nowMs: number): Promise<HotSnapshot> {
    const c = this.cache;
    if (c && nowMs >= c.computedAtMs && nowMs - c.computedAtMs < this.settings.cacheRefreshMs) return c;
    return this.refresh(nowMs);
  }

  /**
   * Computes a snapshot at `nowMs` and caches it (the latest computed wins). Concurrent callers for
   * the same `nowMs` share one computation.
   */
  refresh(nowMs: number): Promise<HotSnapshot> {
    if (this.computing?.atMs === nowMs) return this.computing.run;
    const run = this.compute(nowMs)
      .then((snap) => {
        this.cache = snap;
        return snap;
      })
      .finally(() => {
        if (this.computing?.run === run) this.computing = null;
      });
    this.computing = { atMs: nowMs, run };
    return run;
  }

  /** Drops the cached snapshot (the next request computes one). */
  invalidate(): void {
    this.cache = null;
  }

  /** Updates the registered publication time of edited items that the store already knows. */
  async itemsChanged(items: readonly Pick<Item, 'id' | 'publishedAt'>[]): Promise<void> {
    await this.deps.counters.register(
      items.map((i) => ({ itemId: i.id, publishedAtMs: i.publishedAt })),
      { onlyExisting: true },
    );
  }

  /** A deleted item leaves the ranking and its counters are dropped (its checkpoint row stays, unused). */
  async itemDeleted(itemId: string): Promise<void> {
    await this.deps.counters.forget([itemId]);
    if (this.cache?.entries.some((e) => e.item.id === itemId)) this.invalidate();
  }

  /** Suspicious views kept out of the ranking, store-wide. */
  suspicious(): Promise<SuspiciousCounts> {
    return this.deps.counters.suspiciousTotals();
  }

  private async compute(nowMs: number): Promise<HotSnapshot> {
    const ranked = await this.deps.counters.top(this.settings.cap);
    const ids = ranked.map((r) => r.itemId);
    const [counters, items, suspicious] = await Promise.all([
      this.deps.counters.counters(ids),
      this.deps.content.getItems(ids),
      this.deps.counters.suspiciousTotals(),
    ]);
    const byId = new Map(items.map((i) => [i.id, i]));
    const entries: HotEntry[] = [];
    for (const c of counters) {
      const item = byId.get(c.itemId);
      // an item published after the snapshot time does not exist yet at that time (a replay on virtual time)
      if (!item || c.publishedAtMs === null || c.pv === 0 || item.publishedAt > nowMs) continue;
      const score = hotScore(c.pv, c.uv, hoursSincePublish(nowMs, c.publishedAtMs), this.settings.params);
      entries.push({ item, pv: c.pv, uv: c.uv, score, suspicious: c.suspicious });
    }
    // best first; ties by id ascending (the order of the response), unlike the counters' ZREVRANGE
    // order (`byRank`, id descending), which only decides which items make the snapshot
    entries.sort((a, b) => b.score - a.score || compareIds(a.item.id, b.item.id));
    return { computedAtMs: nowMs, entries, suspicious };
  }

  /**
   * Registers the live items among `ids` in the counters store (what the first view of each would
   * do), except those older than the retention at `nowMs`. Replays call it up front so the first
   * views of an item keep their order.
   * @returns the ids that are expired.
   * @throws FreshetError `NOT_FOUND` naming the ids that are unknown or deleted.
   */
  async resolve(ids: readonly string[], nowMs: number): Promise<Set<string>> {
    const items = await this.deps.content.getItems(ids);
    const found = new Set(items.map((i) => i.id));
    const unknown = ids.filter((id) => !found.has(id));
    if (unknown.length > 0)
      throw fail(
        'NOT_FOUND',
        `no item ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ` (+${unknown.length - 5} more)` : ''}`,
      );
    const cutoff = retentionCutoff(nowMs, this.settings.retentionMs);
    const expired = new Set(cutoff === null ? [] : items.filter((i) => i.publishedAt < cutoff).map((i) => i.id));
    const fresh = items.filter((i) => !expired.has(i.id));
    if (fresh.length > 0)
      await this.deps.counters.register(fresh.map((i) => ({ itemId: i.id, publishedAtMs: i.publishedAt })));
    return expired;
  }
}
