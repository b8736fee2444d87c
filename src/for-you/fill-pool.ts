/**
 * FillPool: the reader-independent part of the for-you recall (the for-you design's freshness × popularity fill),
 * computed once per interval per process and shared by every reader — so a refresh does not rescan the
 * decay window, and its cost does not grow with the catalog (docs/for-you.md "Recall").
 *
 * A build asks `CandidateRecall.fill` for `size` entries at the request's virtual `now` (one statement that
 * sorts the decay window: its cost grows with the window, so it runs per interval, not per request). A
 * build is awaited only when there is none yet or when a request's `now` is more than the interval away
 * from the build's (a replay jumping in virtual time); otherwise the current pool is served while one
 * rebuild runs in the background (stale-while-revalidate, one build at a time) once the build is
 * `intervalMs` old on the injected clock (wall time in production; tests inject a manual one).
 *
 * Publishes and deletes (`invalidate`: this process's from the use cases, other processes' from their
 * change messages) **patch** the pool and never rebuild it: a deleted id is skipped at once; a published item is read back by id and placed where
 * a build would put it, before the next request is served — by score inside the window; by
 * (`published_at`, id) among the older entries when the pool holds the whole window and the item is not
 * older than where the keyset walk continues; nowhere otherwise, since the keyset walk below the pool then
 * meets it. (An edit that moves an item is the same: its old entry goes first.) A patch that lands while a
 * build runs is applied to that build too. What a patch cannot express, and only the interval rebuild
 * brings: the passing of time (every score is the decay at the build's `now`, and the window's lower edge
 * moves) and other processes' writes whose change message was lost (src/compose/open.ts passes the messages
 * of src/kernel/items/item-changes.ts to `invalidate`; a new item shows within the interval at worst, and
 * delivery drops a deleted item in every process, so it never appears).
 * Entries published after a request's `now` are skipped by the feed (a request may be slightly earlier
 * than the build).
 */
import type { Clock } from '../kernel/clock.js';
import { fnv1a } from '../kernel/hash.js';
import { gaussDecay, type GaussDecay } from './decay.js';
import type { Candidate, CandidateRecall, FillResult, KeysetCursor } from './recall.js';
import { fillScore } from './scoring.js';

/** Tunables of the pool; durations in ms. */
export interface FillPoolSettings {
  /** Entries per build (`FRESHET_FOR_YOU_POOL_SIZE`, default 5,000). */
  size: number;
  /** Rebuild period (`FRESHET_FOR_YOU_POOL_INTERVAL_S`, default 30 s). */
  intervalMs: number;
  decay: GaussDecay;
  horizonMs: number;
}

/** One build, as the feed walks it. */
export interface Pool {
  /** Build number (1, 2, …): a reader's cursor into an older build is mapped by item id. */
  gen: number;
  /** The virtual `now` of the build (epoch ms). */
  nowMs: number;
  entries: readonly Candidate[];
  /** Position of each entry's id. */
  index: ReadonlyMap<string, number>;
  /** Whether every live item of the decay window is in `entries` (the keyset walk may start below). */
  windowComplete: boolean;
  /** Where the keyset walk continues below the pool (see `FillResult.next`). */
  next: KeysetCursor | null;
  /** Ids deleted since the build (skipped). */
  removed: ReadonlySet<string>;
}

/** A published item as a patch reads it back (`CandidateRecall.pooled`). */
type PooledRow = Candidate & { popularity: number };

/**
 * The engine's own popularity (the learning room's, bridged by src/compose/bridges.ts): readers' views
 * and engagements, decayed. A build adds it to each item's publisher prior — the pool's score is
 * decay × ln(2 + prior + engine popularity) — and takes in the most popular items of the window that
 * the prior alone left out.
 */
export interface PopularitySource {
  /** The `limit` items of highest engine popularity at `nowMs`, best first, with that popularity. */
  top(nowMs: number, limit: number): Promise<{ itemId: string; popularity: number }[]>;
  /** The engine popularity at `nowMs` of these items (absent: none). */
  of(itemIds: readonly string[], nowMs: number): Promise<Map<string, number>>;
}

/** The shared fill pool of one process. */
export class FillPool {
  private current: (Pool & { builtAt: number; removed: Set<string> }) | undefined;
  private building: Promise<void> | undefined;
  /** Rows patched in while a build runs (applied to it when it lands). */
  private patchedMeanwhile: Map<string, PooledRow> | undefined;
  private patching: Promise<void> | undefined;
  private gen = 0;
  /** Builds done (for tests and metrics). */
  builds = 0;

  constructor(
    private readonly recall: Pick<CandidateRecall, 'fill' | 'pooled'>,
    private readonly settings: FillPoolSettings,
    private readonly clock: Clock,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly popularity: PopularitySource | null = null,
  ) {}

  /**
   * The pool to walk at virtual time `nowMs`: awaits a build when there is none or the last one is
   * more than the interval away from `nowMs`; otherwise returns the current one (starting a background
   * rebuild when it is `intervalMs` old). Patches in flight are awaited first.
   * @throws the store's error when a build that must be awaited fails.
   */
  async get(nowMs: number): Promise<Pool> {
    if (this.patching) await this.patching;
    const cur = this.current;
    if (!cur || Math.abs(nowMs - cur.nowMs) > this.settings.intervalMs) {
      await this.build(nowMs);
      return this.current!;
    }
    if (!this.building && this.clock.now() - cur.builtAt >= this.settings.intervalMs)
      this.build(nowMs).catch(this.onError);
    return cur;
  }

  /**
   * Items were published (`publishedIds`, new or edited) or deleted (`deletedIds`), here or in another process: deleted
   * ids leave the served pool at once; published ones are read back (one primary-key lookup) and placed
   * (see the module doc) before the next request is served. Never starts a build.
   */
  invalidate(publishedIds: readonly string[], deletedIds: readonly string[] = []): void {
    for (const id of deletedIds) this.current?.removed.add(id);
    if (publishedIds.length === 0 || !this.current) return;
    const prev = this.patching ?? Promise.resolve();
    const patch = prev
      .then(() => this.recall.pooled(publishedIds))
      .then((rows) => {
        for (const row of rows) this.patchedMeanwhile?.set(row.id, row);
        this.insert(rows);
      })
      .catch(this.onError)
      .finally(() => {
        if (this.patching === patch) this.patching = undefined;
      });
    this.patching = patch;
  }

  /** Places rows in the current pool (replacing an entry of the same id), as a build would order them. */
  private insert(rows: readonly PooledRow[]): void {
    const cur = this.current;
    if (!cur || rows.length === 0) return;
    const { decay, horizonMs } = this.settings;
    const edge = cur.nowMs - horizonMs;
    const ids = new Set(rows.map((r) => r.id));
    const entries = cur.entries.filter((e) => !ids.has(e.id));
    for (const row of rows) {
      const { popularity, ...candidate } = row;
      cur.removed.delete(row.id);
      if (row.publishedAt >= edge) {
        const score = fillScore(gaussDecay(decay, cur.nowMs, row.publishedAt), popularity);
        const entry = { ...candidate, score };
        const at = entries.findIndex((e) => e.score === undefined || byScore(entry, e) < 0);
        entries.splice(at < 0 ? entries.length : at, 0, entry);
      } else if (cur.windowComplete && cur.next && row.publishedAt >= cur.next[0]) {
        // not below where the keyset walk continues: among the older entries, by (published_at, id) desc
        // (a tie on published_at is taken in too: the walk drops a candidate met twice)
        const at = entries.findIndex((e) => e.score === undefined && byKeyset(candidate, [e.publishedAt, e.id]) < 0);
        entries.splice(at < 0 ? entries.length : at, 0, candidate);
      }
      // otherwise the keyset walk meets it (below the pool, or from now when the pool is not the whole window)
    }
    this.current = { ...cur, entries, index: new Map(entries.map((e, i) => [e.id, i])) };
  }

  /**
   * The recall's fill with the engine's popularity merged in (see {@link PopularitySource}): the window's
   * entries rescored by decay × ln(2 + prior + engine popularity), the most popular window items the
   * prior left out taken in, `size` kept. Without a source, the fill as it is.
   */
  private async withEnginePopularity(nowMs: number): Promise<FillResult> {
    const { size, decay, horizonMs } = this.settings;
    const [fill, top] = await Promise.all([
      this.recall.fill({ ...this.settings, nowMs }),
      this.popularity ? this.popularity.top(nowMs, size) : Promise.resolve([]),
    ]);
    if (!this.popularity || top.length === 0) return fill;
    const edge = nowMs - horizonMs;
    const inWindow = fill.entries.filter((e) => e.score !== undefined);
    const older = fill.entries.filter((e) => e.score === undefined);
    const have = new Set(fill.entries.map((e) => e.id));
    const extra = (await this.recall.pooled(top.map((t) => t.itemId).filter((id) => !have.has(id)))).filter(
      (r) => r.publishedAt >= edge && r.publishedAt <= nowMs,
    );
    const engine = new Map(top.map((t) => [t.itemId, t.popularity]));
    const missing = inWindow.map((e) => e.id).filter((id) => !engine.has(id));
    for (const [id, p] of await this.popularity.of(missing, nowMs)) engine.set(id, p);
    const window = [...inWindow, ...extra].map((e) => {
      const prior = e.popularity ?? 0;
      return { ...e, score: fillScore(gaussDecay(decay, nowMs, e.publishedAt), prior + (engine.get(e.id) ?? 0)) };
    });
    window.sort(byScore);
    const entries = [...window, ...older].slice(0, size);
    // items taken in from outside the fill: the window is complete only if it was and nothing was cut
    const complete = fill.windowComplete && entries.length === window.length + older.length;
    return { entries, windowComplete: complete, next: complete ? fill.next : null };
  }

  /** Waits for a background build in flight (tests). */
  async settled(): Promise<void> {
    await this.building?.catch(() => {});
  }

  private build(nowMs: number): Promise<void> {
    if (this.building) return this.building;
    const startedAt = this.clock.now();
    const patched = new Map<string, PooledRow>();
    this.patchedMeanwhile = patched;
    const prev = this.current;
    const run = (async () => {
      const { entries, windowComplete, next } = await this.withEnginePopularity(nowMs);
      const index = new Map(entries.map((e, i) => [e.id, i]));
      // deletes that raced with the build: keep skipping them
      const removed = new Set([...(prev?.removed ?? [])].filter((id) => index.has(id)));
      this.current = { gen: ++this.gen, nowMs, entries, index, windowComplete, next, removed, builtAt: startedAt };
      this.builds++;
      // publishes that raced with the build: its statement may have run before they committed
      this.insert([...patched.values()]);
    })();
    this.building = run.finally(() => {
      this.building = undefined;
      if (this.patchedMeanwhile === patched) this.patchedMeanwhile = undefined;
    });
    return this.building;
  }
}

/**
 * < 0 when `a` comes before `b` in a build's window order: score desc, then newest, then a hash of the
 * id (FNV-1a: equal items in no fixed alphabetical order), then the id (a hash collision).
 */
function byScore(a: Candidate, b: Candidate): number {
  return (
    (b.score ?? 0) - (a.score ?? 0) ||
    b.publishedAt - a.publishedAt ||
    fnv1a(a.id) - fnv1a(b.id) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** < 0 when `a` comes before position `k` in the keyset order, (published_at, id) desc. */
function byKeyset(a: Candidate, k: KeysetCursor): number {
  return k[0] - a.publishedAt || (a.id > k[1] ? -1 : a.id < k[1] ? 1 : 0);
}
