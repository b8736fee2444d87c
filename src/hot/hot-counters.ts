/**
 * HotCounters port: the counters and the ranking of the hot list (docs/hot.md) — per item a PV
 * counter, a HyperLogLog of visitors, the publication time, suspicious-view counters, and one ranking
 * (a ZSET per shard) of scores.
 *
 * Contract (test/contracts/hot-counters.contract.ts runs it against the memory and Redis adapters):
 * - `view` is ONE atomic step: the rate-limit check (same visitor + item within `rateWindowMs` →
 *   `repeat`), the per-visitor budget (more than `visitorBudgetPerMinute` views in one minute of
 *   epoch time → `budget`), the caller's flag (`flagged`), then PV + 1, the visitor into the HLL,
 *   UV = its estimate, score = the hot-ranking design's formula at `nowMs`, and the score into the ranking. Checks
 *   come in that order: a flagged view consumes no budget, a view over budget sets no rate-limit mark.
 *   Only `counted` views change PV, UV or the score; the suspicious kinds increment their own
 *   counters (per item and in total). Concurrent views never lose an increment.
 * - Time is the caller's `nowMs` (virtual time works). The window is [t, t + rateWindowMs): a repeat
 *   at t + rateWindowMs − 1 is `repeat`, at t + rateWindowMs it counts. A view whose `nowMs` is before
 *   the visitor's last counted view of the item is a `repeat`.
 * - A view of an item with no registered publication time is `unknown` and changes nothing; a view of
 *   an item published more than `retentionMs` before `nowMs` is `expired` and changes nothing
 *   (`retentionMs` 0 = `KEEP_FOREVER`: no view is `expired`).
 * - `rescore(now)` recomputes every ranked item's score from its counters at `now`, drops ranked items
 *   without counters, then trims each shard's ranking to the `cap` best (ZREMRANGEBYRANK: lowest
 *   score first, ties by member, as Redis orders a ZSET).
 * - `top(n)` merges the shards' rankings: the n best in Redis's `ZREVRANGE` order (score desc, then
 *   id desc — the exact reverse of the order trimming removes in).
 * - Checkpoints: every view (counted or suspicious) marks its item dirty; `beginCheckpoint` moves the
 *   dirty marks into an in-flight set (merging what a failed checkpoint left there) and returns its
 *   ids; `snapshot` reads their counters (HLL as a Redis HLL string); `endCheckpoint(ids)` clears only
 *   those ids, so a failed or concurrent checkpoint never loses a mark.
 * - Loss: a store that lost its state (fresh, flushed, restarted in-process) reports its shards in
 *   `lostShards()` until `seal(shards)`. Meanwhile `restore(snapshots, now, shards)` (called once per
 *   page of checkpoint rows) ADDS the checkpointed counters to whatever was counted since the loss
 *   (PV and suspicious counts summed, HLLs merged) and ranks the items at `now`. While a shard is lost
 *   an item already restored is skipped, so a restore interrupted halfway can simply run again; once
 *   it is sealed, `restore` adds nothing to it.
 * - Shards: the per-visitor budget and the cap hold per shard (a visitor spreading views over all N
 *   shards reaches up to N × budget per minute before being isolated; the global top `cap` is always
 *   kept, since it is a subset of the shards' tops).
 * - Layouts (Redis): a store written with another shard count — the hot-ranking design's one `{hot}` shard of earlier
 *   versions, or a changed `FRESHET_HOT_SHARDS` — still holds counters under that layout's keys until
 *   they are moved: `priorLayout()` answers those counters (null when there are none), which
 *   HotMaintenance checkpoints, `retire`s, restores into this layout and `purge`s; `adoptLayout()`
 *   records this layout as the store's own. The in-process store has one layout: no prior one.
 * - Ids must be valid ids (`assertId`); invalid ones throw FreshetError `INVALID_ID` before anything
 *   is written.
 */
import { compareIds } from '../kernel/ids.js';
import type { HotParams, SuspiciousCounts, ViewVerdict } from './domain.js';

/** The rules a store applies to views (from the configuration); durations in ms. */
export interface HotRules {
  params: HotParams;
  /** Rate-limit window for one visitor and one item (the hot-ranking design: 10–15 min). */
  rateWindowMs: number;
  /** Views one visitor may make per minute across items before the rest are `budget`. */
  visitorBudgetPerMinute: number;
  /** Items published longer ago than this are `expired` (their counters are archived); 0 = never (`KEEP_FOREVER`). */
  retentionMs: number;
  /** Ranked items kept per shard by `rescore` (the hot-ranking design: 1000). */
  cap: number;
}

/** One view to record. */
export interface ViewInput {
  itemId: string;
  visitorId: string;
  /** When the view happened, epoch ms. */
  nowMs: number;
  /** The caller judged this view suspicious (bot, abuse): counted apart, never in PV/UV/score. */
  flagged?: boolean;
  /** The feed the reader opened the item from (a click of that feed: `freshet_feed_clicks_total`). */
  feed?: FeedName;
}

/** The feeds a view or an engagement may be attributed to (the API's names). */
export type FeedName = 'for-you' | 'discover' | 'following' | 'hot';

/** What a view did, and the item's counters after it (all 0 for `unknown`). */
export interface ViewResult {
  verdict: ViewVerdict;
  pv: number;
  uv: number;
  /** The item's score in the ranking (for `counted`: just computed at `nowMs`); 0 when not ranked. */
  score: number;
}

/** An item's counters as stored. */
export interface ItemCounters {
  itemId: string;
  /** Publication time, epoch ms (whole seconds, as the hot-ranking design stores it); null when not registered. */
  publishedAtMs: number | null;
  pv: number;
  uv: number;
  /** Score in the ranking, null when the item is not ranked. */
  score: number | null;
  suspicious: SuspiciousCounts;
}

/** An item's counters as checkpointed: everything needed to rebuild it exactly. */
export interface CounterSnapshot {
  itemId: string;
  publishedAtMs: number;
  pv: number;
  uv: number;
  /** The visitors' HyperLogLog as a Redis HLL string (src/hot/hll.ts); empty when no visitor. */
  hll: Buffer;
  suspicious: SuspiciousCounts;
}

/** One ranked item. */
export interface RankedEntry {
  itemId: string;
  score: number;
}

/** The order of `top`, Redis's `ZREVRANGE`: score desc, then item id desc (for `Array.sort`). */
export function byRank(a: RankedEntry, b: RankedEntry): number {
  return b.score - a.score || compareIds(b.itemId, a.itemId);
}

/** What a rescoring pass did. */
export interface RescoreResult {
  /** Ranked items whose score was recomputed. */
  rescored: number;
  /** Ranked items dropped because their counters are gone (forgotten or archived). */
  dropped: number;
  /** Items trimmed off the rankings (beyond `cap` per shard). */
  trimmed: number;
}

export interface HotCounters {
  /** Number of shards (1 = the hot-ranking design's single ranking). */
  readonly shards: number;
  /** The shard holding an item's counters (0..shards-1). */
  shardOf(itemId: string): number;
  /**
   * Registers publication times (the hot-ranking design's `HSET meta:article:{id} publishedAt <seconds>`).
   * With `onlyExisting`, only items already registered are updated (an item edit).
   */
  register(
    items: readonly { itemId: string; publishedAtMs: number }[],
    opts?: { onlyExisting?: boolean },
  ): Promise<void>;
  /** Records one view (see the contract). */
  view(v: ViewInput): Promise<ViewResult>;
  /** The n best ranked items over every shard, best first. */
  top(n: number): Promise<RankedEntry[]>;
  /** Counters of the given items, in order; unknown items have publishedAtMs null and zeros. */
  counters(itemIds: readonly string[]): Promise<ItemCounters[]>;
  /** Rescoring pass at `nowMs`, then trimming (see the contract). */
  rescore(nowMs: number): Promise<RescoreResult>;
  /** Suspicious views by kind, over every item and shard, since the store began (or was restored). */
  suspiciousTotals(): Promise<SuspiciousCounts>;
  /** Removes items from the ranking and drops all their counters (deleted or archived items). */
  forget(itemIds: readonly string[]): Promise<void>;
  /**
   * Deletes a visitor's rate-limit marks and per-minute budgets (erase; both name the visitor). On Redis a
   * SCAN of every master: rare, deliberate work. @returns marks and budgets deleted.
   */
  forgetVisitor(visitorId: string): Promise<number>;
  /** Moves the dirty marks in flight and returns every in-flight id. */
  beginCheckpoint(): Promise<string[]>;
  /**
   * Counters of the given items for a checkpoint; items without a publication time are left out, as
   * are the items of shards that have lost their state (listed in `lost`: their counters would be
   * partial — rebuild those shards first).
   */
  snapshot(itemIds: readonly string[]): Promise<{ snapshots: CounterSnapshot[]; lost: number[] }>;
  /** Clears the in-flight marks of these ids (they are safely checkpointed). */
  endCheckpoint(itemIds: readonly string[]): Promise<void>;
  /** Shards that have lost their state since their last `restore` (all of them in a fresh store). */
  lostShards(): Promise<number[]>;
  /**
   * Adds checkpointed counters into those of `shards` that are still lost (snapshots of other shards
   * are ignored) and ranks the restored items at `nowMs`.
   * @returns how many items were added.
   */
  restore(snapshots: readonly CounterSnapshot[], nowMs: number, shards: readonly number[]): Promise<number>;
  /** Marks `shards` healthy: the restore is complete. */
  seal(shards: readonly number[]): Promise<void>;
  /**
   * The counters this store holds under another shard layout (see the contract), or null. A layout is
   * recorded by {@link adoptLayout}; a store that never recorded one holds the hot-ranking design's one `{hot}` shard
   * when its keys exist.
   */
  priorLayout(): Promise<HotCounters | null>;
  /** Records this layout as the one holding the store's counters (idempotent). */
  adoptLayout(): Promise<void>;
  /** Marks every shard of this layout lost (its epochs go): checkpoints refuse it from now on. */
  retire(): Promise<void>;
  /**
   * Deletes this layout's shard-wide keys (rankings, totals, checkpoint sets, epochs) and the counters
   * of the items they name; the counters of other items are dropped with `forget`.
   */
  purge(): Promise<void>;
  close(): Promise<void>;
}
