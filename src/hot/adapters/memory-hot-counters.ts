/**
 * The hot counters (docs/hot.md) in process (the embedded default, and the executable spec the Redis
 * adapter is tested against): Maps for PV, publication times, suspicious counters, rate-limit marks
 * and per-minute budgets, a Redis-compatible HyperLogLog per item (src/hot/hll.ts, so UV equals
 * Redis's PFCOUNT for the same visitors), and one ranking Map ordered like a Redis ZSET.
 *
 * Each `view` runs synchronously from its first check to its last write, so it is one transaction:
 * no other call can interleave (the in-process equivalent of the Lua script). One shard (0).
 *
 * State is lost with the process: the store starts "lost" and the service restores it from the
 * PostgreSQL checkpoint on start (`restore`). Rate-limit marks and budgets follow the caller's virtual
 * time only (Redis additionally expires them on its wall clock; the two agree whenever virtual time
 * does not run slower than the wall clock).
 */
import { assertId, compareIds } from '../../kernel/ids.js';
import { HyperLogLog } from '../hll.js';
import {
  budgetMinute,
  hotScore,
  hoursSincePublish,
  noSuspicious,
  retentionCutoff,
  type SuspiciousCounts,
  type SuspiciousKind,
  type ViewVerdict,
} from '../domain.js';
import type {
  CounterSnapshot,
  HotCounters,
  HotRules,
  ItemCounters,
  RankedEntry,
  RescoreResult,
  ViewInput,
  ViewResult,
} from '../hot-counters.js';
import { byRank } from '../hot-counters.js';

/** One item's counters. */
interface ItemState {
  /** Publication time in epoch seconds (the hot-ranking design's `publishedAt`). */
  /** Epoch ms, whole seconds (as Redis keeps it). */
  publishedAtMs: number;
  pv: number;
  hll: HyperLogLog | null;
  /** Cached estimate of `hll` (recomputed only when a register changes, as Redis caches it). */
  uv: number;
  suspicious: SuspiciousCounts;
}

/** Marks older than this many entries trigger a sweep of the ones out of their window. */
const SWEEP_AT = 100_000;

/** {@link HotCounters} in process. */
export class MemoryHotCounters implements HotCounters {
  readonly shards = 1;
  private readonly items = new Map<string, ItemState>();
  private readonly ranking = new Map<string, number>();
  private readonly rateMarks = new Map<string, number>();
  private readonly budgets = new Map<string, number>();
  private readonly totals = noSuspicious();
  private dirty = new Set<string>();
  private readonly inflight = new Set<string>();
  private lost = true;
  private readonly restoredWhileLost = new Set<string>();

  constructor(private readonly rules: HotRules) {}

  shardOf(itemId: string): number {
    assertId(itemId, 'item id');
    return 0;
  }

  async register(
    items: readonly { itemId: string; publishedAtMs: number }[],
    opts: { onlyExisting?: boolean } = {},
  ): Promise<void> {
    for (const it of items) assertId(it.itemId, 'item id');
    for (const { itemId, publishedAtMs } of items) {
      const publishedAtWholeSecMs = Math.floor(publishedAtMs / 1000) * 1000;
      const state = this.items.get(itemId);
      if (state) state.publishedAtMs = publishedAtWholeSecMs;
      else if (!opts.onlyExisting)
        this.items.set(itemId, {
          publishedAtMs: publishedAtWholeSecMs,
          pv: 0,
          hll: null,
          uv: 0,
          suspicious: noSuspicious(),
        });
    }
  }

  async view(v: ViewInput): Promise<ViewResult> {
    assertId(v.itemId, 'item id');
    assertId(v.visitorId, 'visitor id');
    const state = this.items.get(v.itemId);
    if (!state) return { verdict: 'unknown', pv: 0, uv: 0, score: 0 };
    const cutoff = retentionCutoff(v.nowMs, this.rules.retentionMs);
    if (cutoff !== null && state.publishedAtMs < cutoff) return this.uncounted('expired', v.itemId, state);
    if (v.flagged) return this.suspicious('flagged', v.itemId, state);
    if (this.overBudget(v.visitorId, v.nowMs)) return this.suspicious('budget', v.itemId, state);
    if (this.isRepeat(v.itemId, v.visitorId, v.nowMs)) return this.suspicious('repeat', v.itemId, state);
    state.pv += 1;
    state.hll ??= new HyperLogLog();
    if (state.hll.add(v.visitorId)) state.uv = state.hll.count();
    const score = hotScore(state.pv, state.uv, hoursSincePublish(v.nowMs, state.publishedAtMs), this.rules.params);
    this.ranking.set(v.itemId, score);
    this.dirty.add(v.itemId);
    return { verdict: 'counted', pv: state.pv, uv: state.uv, score };
  }

  async top(n: number): Promise<RankedEntry[]> {
    return [...this.ranking]
      .map(([itemId, score]) => ({ itemId, score }))
      .sort(byRank)
      .slice(0, Math.max(0, n));
  }

  async counters(itemIds: readonly string[]): Promise<ItemCounters[]> {
    for (const id of itemIds) assertId(id, 'item id');
    return itemIds.map((itemId) => {
      const s = this.items.get(itemId);
      const score = this.ranking.get(itemId) ?? null;
      if (!s) return { itemId, publishedAtMs: null, pv: 0, uv: 0, score, suspicious: noSuspicious() };
      return { itemId, publishedAtMs: s.publishedAtMs, pv: s.pv, uv: s.uv, score, suspicious: { ...s.suspicious } };
    });
  }

  async rescore(nowMs: number): Promise<RescoreResult> {
    let rescored = 0;
    let dropped = 0;
    for (const itemId of [...this.ranking.keys()]) {
      const s = this.items.get(itemId);
      if (!s || s.pv === 0) {
        this.ranking.delete(itemId);
        dropped++;
        continue;
      }
      this.ranking.set(itemId, hotScore(s.pv, s.uv, hoursSincePublish(nowMs, s.publishedAtMs), this.rules.params));
      rescored++;
    }
    return { rescored, dropped, trimmed: this.trim() };
  }

  async suspiciousTotals(): Promise<SuspiciousCounts> {
    return { ...this.totals };
  }

  async forget(itemIds: readonly string[]): Promise<void> {
    for (const id of itemIds) assertId(id, 'item id');
    for (const id of itemIds) {
      this.items.delete(id);
      this.ranking.delete(id);
    }
  }

  async beginCheckpoint(): Promise<string[]> {
    for (const id of this.dirty) this.inflight.add(id);
    this.dirty = new Set();
    return [...this.inflight];
  }

  async snapshot(itemIds: readonly string[]): Promise<{ snapshots: CounterSnapshot[]; lost: number[] }> {
    if (this.lost) return { snapshots: [], lost: [0] };
    const snapshots: CounterSnapshot[] = [];
    for (const itemId of itemIds) {
      const s = this.items.get(itemId);
      if (!s) continue;
      snapshots.push({
        itemId,
        publishedAtMs: s.publishedAtMs,
        pv: s.pv,
        uv: s.uv,
        hll: s.hll ? s.hll.toRedis() : Buffer.alloc(0),
        suspicious: { ...s.suspicious },
      });
    }
    return { snapshots, lost: [] };
  }

  async endCheckpoint(itemIds: readonly string[]): Promise<void> {
    for (const id of itemIds) this.inflight.delete(id);
  }

  async lostShards(): Promise<number[]> {
    return this.lost ? [0] : [];
  }

  async restore(snapshots: readonly CounterSnapshot[], nowMs: number, shards: readonly number[]): Promise<number> {
    for (const snap of snapshots) assertId(snap.itemId, 'item id');
    if (!this.lost || !shards.includes(0)) return 0;
    let restored = 0;
    for (const snap of snapshots) {
      if (this.restoredWhileLost.has(snap.itemId)) continue;
      this.addSnapshot(snap, nowMs);
      this.restoredWhileLost.add(snap.itemId);
      restored++;
    }
    return restored;
  }

  async seal(shards: readonly number[]): Promise<void> {
    if (!shards.includes(0)) return;
    this.lost = false;
    this.restoredWhileLost.clear();
  }
  /** One layout in process: none before it. */
  async priorLayout(): Promise<HotCounters | null> {
    return null;
  }

  async adoptLayout(): Promise<void> {}

  async retire(): Promise<void> {}

  async purge(): Promise<void> {}

  async close(): Promise<void> {}

  /** Sums one checkpointed item into the live counters and ranks it at `nowMs`. */
  private addSnapshot(snap: CounterSnapshot, nowMs: number): void {
    let s = this.items.get(snap.itemId);
    if (!s) {
      s = {
        publishedAtMs: Math.floor(snap.publishedAtMs / 1000) * 1000,
        pv: 0,
        hll: null,
        uv: 0,
        suspicious: noSuspicious(),
      };
      this.items.set(snap.itemId, s);
    }
    s.pv += snap.pv;
    if (snap.hll.length > 0) {
      s.hll ??= new HyperLogLog();
      s.hll.merge(HyperLogLog.fromRedis(snap.hll));
      s.uv = s.hll.count();
    }
    for (const kind of Object.keys(s.suspicious) as SuspiciousKind[]) {
      s.suspicious[kind] += snap.suspicious[kind];
      this.totals[kind] += snap.suspicious[kind];
    }
    if (s.pv > 0)
      this.ranking.set(snap.itemId, hotScore(s.pv, s.uv, hoursSincePublish(nowMs, s.publishedAtMs), this.rules.params));
    this.dirty.add(snap.itemId);
  }

  private uncounted(verdict: ViewVerdict, itemId: string, s: ItemState): ViewResult {
    return { verdict, pv: s.pv, uv: s.uv, score: this.ranking.get(itemId) ?? 0 };
  }

  private suspicious(kind: SuspiciousKind, itemId: string, s: ItemState): ViewResult {
    s.suspicious[kind]++;
    this.totals[kind]++;
    this.dirty.add(itemId);
    return this.uncounted(kind, itemId, s);
  }

  async forgetVisitor(visitorId: string): Promise<number> {
    let n = 0;
    for (const key of [...this.rateMarks.keys()]) if (key.endsWith(`\n${visitorId}`) && this.rateMarks.delete(key)) n++;
    for (const key of [...this.budgets.keys()]) if (key.startsWith(`${visitorId}\n`) && this.budgets.delete(key)) n++;
    return n;
  }

  /** Counts the view against the visitor's minute; true when it is beyond the budget. */
  private overBudget(visitorId: string, nowMs: number): boolean {
    const minute = budgetMinute(nowMs);
    const key = `${visitorId}\n${minute}`;
    const n = (this.budgets.get(key) ?? 0) + 1;
    this.budgets.set(key, n);
    if (this.budgets.size > SWEEP_AT) sweep(this.budgets, (k) => Number(k.slice(k.indexOf('\n') + 1)) < minute - 1);
    return n > this.rules.visitorBudgetPerMinute;
  }

  /** True when the visitor's last counted view of the item is within the window; else marks `nowMs`. */
  private isRepeat(itemId: string, visitorId: string, nowMs: number): boolean {
    const key = `${itemId}\n${visitorId}`;
    const last = this.rateMarks.get(key);
    if (last !== undefined && (nowMs < last || nowMs - last < this.rules.rateWindowMs)) return true;
    this.rateMarks.set(key, nowMs);
    if (this.rateMarks.size > SWEEP_AT) sweep(this.rateMarks, (_k, t) => nowMs - t >= this.rules.rateWindowMs);
    return false;
  }

  /** Keeps the `cap` best of the ranking, removing in Redis's ZREMRANGEBYRANK order; returns how many went. */
  private trim(): number {
    const excess = this.ranking.size - this.rules.cap;
    if (excess <= 0) return 0;
    const ascending = [...this.ranking].sort(([a, sa], [b, sb]) => sa - sb || compareIds(a, b)); // byRank reversed
    for (let i = 0; i < excess; i++) this.ranking.delete(ascending[i]![0]);
    return excess;
  }
}

function sweep<V>(map: Map<string, V>, stale: (key: string, value: V) => boolean): void {
  for (const [k, v] of map) if (stale(k, v)) map.delete(k);
}
