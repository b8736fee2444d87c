/**
 * DiscoverFeed: the discover design's multi-phase discover feed, `GET /v1/feeds/discover?limit&cursor`.
 *
 * A session starts at `t0` (the first request's time) and walks three phases; one signed cursor
 * (cursor.ts) carries the phase and every phase's position:
 *   1. **followed creators**, newest first; every 5th slot of a page is a **trending** item (the hot
 *      ranking's top list, when it has entries), seen-checked like the rest;
 *   2. **discovery**: the items nearest to the reader's embedding (embeddings.ts) by exact cosine,
 *      above a minimum similarity, from the nearest-neighbour index (DiscoverIndex.nearest) — skipped
 *      for a reader with no signals; the ranked pool (`pool` candidates a search) is cached per session
 *      (pool-cache.ts), so a session's later phase-2 pages page through it, and it grows by a new search
 *      resuming after its last entry when a page needs more, until the index has nothing more. While
 *      the index is still starting (after a restart; `DiscoverIndex.nearestReady`), phase 2 is
 *      **deferred**: the page is filled from phase 3 (logged once, counted), and the cursor stays in
 *      phase 2 with phase 3's position, so a later page serves discovery once the index is ready and
 *      phase 3 then resumes where it stopped;
 *   3. **newest overall**, without followed creators.
 * When a phase runs dry the same request continues into the next, so a page is short only when every
 * phase is exhausted — and then `next_cursor` is null.
 *
 * Every phase over-fetches `factor × remaining need` candidates per round (3 to start; then
 * 1.25 / (1 − observed drop rate), clamped to [1.5, cap]), drops what the reader has seen (the seen
 * filter, one round trip per round) and what the exclusions forbid (docs/exclusions.md), and keeps going until
 * the page is full or the phase is dry. Impressions are written while the page is hydrated and
 * acknowledged before the response (no window in which the next request could repeat an item); a
 * failed write is logged and counted, never an error (the reader already has the page).
 *
 * The reader's preferences (docs/preferences.md) come in the exclusions snapshot: muted authors are dropped
 * with the id rules; when muted words or a language list apply, each round's unseen candidates are
 * hydrated (the item cache) and checked before they are taken, so a page stays full and a hidden item is
 * never marked seen; an item holding a muted phrase whose action is `warn` is served with `filtered`. Phases 2 and 3 keep author diversity (src/kernel/author-diversity.ts): inside a
 * page, candidates are taken by rank × the home-mixer discount of their author's count, and an author at
 * the cap is passed over while other candidates remain (it is not marked seen; a later session serves it).
 * When a round offers only capped authors, or the stream runs dry, the passed-over candidates fill the page
 * and the position goes back to the last one taken: a catalog of one author, or a few, is served to its end.
 */
import type { ExclusionReason, ExclusionSource, ReaderExclusions } from '../kernel/exclusion-source.js';
import type { Item, ServedItem } from '../kernel/items/item.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import { rankedAfter, type After, type DiscoverIndex, type StreamRow } from './discover-index.js';
import { markSeenBestEffort, type SeenFilter } from '../kernel/seen-filter.js';
import type { Logger } from '../kernel/observability.js';
import type { CursorCodec, CursorState, Phase, Position } from './cursor.js';
import type { DiscoverEmbeddings, ReaderQuery } from './embeddings.js';
import type { DiscoverPoolCache, PoolEntry, RankedPool } from './pool-cache.js';
import type { DiscoverMetrics } from './discover-metrics.js';
import { authorCap, pickPage } from '../kernel/author-diversity.js';

/** Where an item of a page came from. */
export type DiscoverSource = 'followed' | 'trending' | 'discovery' | 'newest';

/** The trending list the feed interleaves (the hot ranking's cached top list). */
export interface TrendingSource {
  /** Best first, at most `limit`, as of `nowMs`. */
  trending(nowMs: number, limit: number): Promise<{ id: string; authorId: string }[]>;
}

/**
 * The learned part of the similar phase (the learning room's collaborative recall and factor model,
 * bridged by src/compose/bridges.ts): the reader's candidates, best first.
 */
export interface SimilarSource {
  /** Up to `limit` live items published at or before `untilMs`, best first, each with a score in (0, 1]. */
  similar(readerId: string, untilMs: number, limit: number): Promise<{ id: string; authorId: string; score: number }[]>;
}

/**
 * A re-rank hook (docs/library.md "Ranking hooks"): a page's candidates, already clean, in the feed's
 * order; returns the ids in the order to serve (unknown ids ignored, so it never brings back a seen or
 * excluded item). Runs before the page is marked seen.
 */
export type DiscoverReRank = (
  q: { readerId: string; nowMs: number; feed: 'discover' },
  candidates: readonly { itemId: string; authorId: string; publishedAt: number; score?: number }[],
) => readonly string[] | Promise<readonly string[]>;

/** Tunables (config `FRESHET_DISCOVER_*`). */
export interface DiscoverFeedSettings {
  /** Initial over-fetch factor (the discover design: 3). */
  overFetch: number;
  /** Upper bound of the adapted factor. */
  overFetchCap: number;
  /** Every n-th slot of a phase-1 page is trending (the discover design: 5). */
  trendingEvery: number;
  /** Trending entries considered per session (depth of the hot list read). */
  trendingDepth: number;
  /**
   * Phase-2 pool: the fewest candidates one vector search adds to a session's ranked pool (a search adds at
   * least what the page asks for: its want × the over-fetch factor).
   */
  pool: number;
  /** Phase 2 keeps only items whose cosine to the reader is above this (0: some shared direction). */
  minSimilarity: number;
  /** Most candidates fetched in one round. */
  maxFetch: number;
  /** Learned candidates a session's phase 2 starts with (`FRESHET_DISCOVER_LEARNED`). */
  learnedPool: number;
}

/** What a page dropped, for metrics and the simulate report. */
export interface DiscoverStats {
  fetched: number;
  seenDropped: number;
  excluded: Partial<Record<ExclusionReason, number>>;
}

/** One page. */
export interface DiscoverPage {
  /** With `filtered` where they hold the reader's `warn` phrases (docs/preferences.md). */
  items: ServedItem[];
  /** Aligned with `items`. */
  sources: DiscoverSource[];
  /**
   * Aligned with `items`: each item's sort key in its phase — the exact cosine to the reader for
   * `discovery`, the publication time (epoch ms) for `followed` and `newest`, the list index for
   * `trending` (what the explain API reports as the item's similarity).
   */
  keys: number[];
  /** Null when every phase is exhausted (the last page). */
  nextCursor: string | null;
  /** True when a stale cursor was replaced by a fresh start. */
  restarted: boolean;
  stats: DiscoverStats;
}

export interface DiscoverDeps {
  index: DiscoverIndex;
  embeddings: DiscoverEmbeddings;
  content: ContentStore;
  seen: SeenFilter;
  exclusions: ExclusionSource;
  trending: TrendingSource;
  cursors: CursorCodec;
  log: Logger;
  metrics: DiscoverMetrics;
  /** The ranked phase-2 pool per session (pool-cache.ts); absent: every page searches. */
  pool?: DiscoverPoolCache;
  /** The learned part of phase 2: ranked above the vector search's items (see `phase2`); absent: none. */
  similar?: SimilarSource;
  /** The library's re-rank hook, applied to each page before it is marked seen. */
  rerank?: DiscoverReRank;
}

interface Candidate {
  id: string;
  authorId: string;
  key: number;
}

/** Safety bound on rounds per phase and request (each round advances the stream). */
const MAX_ROUNDS = 64;

/** The per-request working state. */
interface Run {
  readerId: string;
  nowMs: number;
  s: CursorState;
  /** The reader's exclusions, read while the phases start fetching; awaited by the first clean. */
  ex: Promise<ReaderExclusions>;
  picked: { id: string; source: DiscoverSource; key: number }[];
  pickedIds: Set<string>;
  stats: DiscoverStats;
  /** Started with the exclusions read (phase ≤ 2): the reader's phase-2 query. */
  query: Promise<ReaderQuery | null> | null;
  /** Started with the exclusions read (phase 1): the trending list. */
  trending: Promise<{ id: string; authorId: string }[]> | null;
  /** The session's ranked phase-2 pool when the cache had it at the request's start. */
  cachedPool: RankedPool | undefined;
  /** Phase 2 was deferred (the index is starting): phase 3 fills the page, the cursor stays in phase 2. */
  deferred: boolean;
  /** Items of each author in the page so far (the author cap of phases 2 and 3). */
  authors: Map<string, number>;
  /** The reader's author cap for this page size (Infinity: none). */
  cap: number;
}

/** The index of the last entry of `list` in `set` (-1: none). */
function lastIndexIn<T>(list: readonly T[], set: ReadonlySet<T>): number {
  for (let i = list.length - 1; i >= 0; i--) if (set.has(list[i]!)) return i;
  return -1;
}

/** A promise whose rejection is handled (observed later, or never when the page ends first). */
function started<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

export class DiscoverFeed {
  /** Whether a deferral was logged since the index was last seen ready (one log line per start). */
  private deferralLogged = false;

  constructor(
    private readonly deps: DiscoverDeps,
    readonly settings: DiscoverFeedSettings,
  ) {}

  /**
   * Serves one page of `readerId` at virtual time `nowMs`.
   * @param limit 1..100 (validated at the edge).
   * @throws FreshetError `INVALID_CURSOR` for a forged, edited or foreign cursor; store errors propagate.
   */
  async page(readerId: string, limit: number, cursor: string | undefined, nowMs: number): Promise<DiscoverPage> {
    let s = cursor === undefined ? null : this.deps.cursors.decode(readerId, cursor, nowMs);
    const restarted = cursor !== undefined && s === null;
    s ??= { t0: nowMs, phase: 1, p1: null, trending: 0, p2: null, p3: null, factor: this.settings.overFetch };
    // independent reads, in parallel: exclusions (needed first by a clean, after the phase's first
    // fetch), the reader query (cached per session, so started on a phase-1 page it serves the later
    // phase-2 pages; not needed when the session's pool is cached) and the trending list
    const cachedPool = s.phase === 2 ? this.deps.pool?.get(readerId, s.t0) : undefined;
    const query =
      s.phase === 1 || (s.phase === 2 && !cachedPool)
        ? started(this.deps.embeddings.readerQuery(readerId, s.t0))
        : null;
    const slots = Math.floor(limit / this.settings.trendingEvery);
    const trending =
      s.phase === 1 && slots > 0 ? started(this.deps.trending.trending(nowMs, this.settings.trendingDepth)) : null;
    const ex = started(this.deps.exclusions.forReader(readerId, nowMs));
    // a session's first page readies the reader's seen filter beside these reads (a reader new to Redis
    // is restored from its checkpoint now, not in the first clean)
    if (cursor === undefined && this.deps.seen.warm) void started(this.deps.seen.warm(readerId, nowMs));
    const run: Run = {
      readerId,
      nowMs,
      s: { ...s },
      ex,
      picked: [],
      pickedIds: new Set(),
      stats: { fetched: 0, seenDropped: 0, excluded: {} },
      query,
      trending,
      cachedPool,
      deferred: false,
      authors: new Map(),
      cap: Number.POSITIVE_INFINITY,
    };
    if (run.s.phase === 1) await this.phase1(run, limit);
    if (run.s.phase === 2) await this.phase2(run, limit);
    if (run.s.phase === 3 || run.deferred) await this.phase3(run, limit);
    const exclusions = await ex; // a failed read fails the page, even one that had nothing to clean
    const pickOf = new Map(run.picked.map((p) => [p.id, p]));
    const hydrated = await this.hydrateAndMark(run, pickOf);
    const items = hydrated.map((i) => exclusions.serve(i, 'discover')); // `filtered`: the reader's warn phrases
    this.deps.metrics.impressions(items.length);
    return {
      items,
      sources: items.map((i) => pickOf.get(i.id)!.source),
      keys: items.map((i) => pickOf.get(i.id)!.key),
      nextCursor: run.s.phase === 4 ? null : this.deps.cursors.encode(readerId, run.s),
      restarted,
      stats: run.stats,
    };
  }

  /** Phase 1: followed creators, with a trending item in every n-th slot of the page. */
  private async phase1(run: Run, limit: number): Promise<void> {
    const every = this.settings.trendingEvery;
    const slots = Math.floor(limit / every);
    const trending = slots > 0 ? await this.trendingCandidates(run, slots) : [];
    const need = limit - trending.length;
    const followed = await this.drain(
      run,
      need,
      (after, n) => this.deps.index.followed(run.readerId, run.s.t0, after, n),
      'p1',
    );
    let t = 0;
    for (const f of followed.taken) {
      if (run.picked.length % every === every - 1 && t < trending.length)
        this.pick(run, trending[t++]!.row, 'trending');
      this.pick(run, f, 'followed');
    }
    if (run.picked.length % every === every - 1 && t < trending.length && followed.taken.length > 0)
      this.pick(run, trending[t++]!.row, 'trending');
    if (t > 0) run.s.trending = trending[t - 1]!.index + 1;
    // trending entries held for slots the followed items never reached (a reader who follows nobody, or
    // few followed items left) are not picked: they stay open to this page's later phases
    for (const left of trending.slice(t)) run.pickedIds.delete(left.row.id);
    if (followed.done) run.s.phase = 2;
  }

  /**
   * Phase 2: the learned candidates first (the {@link SimilarSource}: co-engagement neighbours and the
   * factor model, key 1 + score so they rank above every cosine), then the pool nearest to the reader's
   * embedding, by cosine desc then id asc. The pool comes from the session cache when it has it (its
   * entries' liveness is re-checked before they are served), else starts with the learned candidates;
   * whenever a round needs more than the pool holds past the position, a vector search resumes after its
   * last entry. Cached for the session's next pages. A cache miss recomputes the learned part from the
   * reader's current history: an item may then be passed over in that session, never served twice.
   */
  private async phase2(run: Run, limit: number): Promise<void> {
    const need = limit - run.picked.length;
    if (need <= 0) return;
    let pool = run.cachedPool;
    if (!pool) {
      const [query, learned] = await Promise.all([
        run.query ?? this.deps.embeddings.readerQuery(run.readerId, run.s.t0),
        this.learned(run),
      ]);
      if (!query && learned.length === 0) {
        run.s.phase = 3;
        return;
      }
      if (!this.deps.index.nearestReady()) return this.defer(run);
      this.deferralLogged = false;
      pool = { entries: learned, done: !query };
    }
    const ranked = pool;
    /** Entries known live in this request: found by its searches, or re-checked. */
    const checked = new Set<string>();
    const stream = async (after: After | null, n: number): Promise<PoolEntry[]> => {
      for (;;) {
        let from = ranked.entries.findIndex((c) => rankedAfter(c, after));
        if (from < 0) from = ranked.entries.length;
        if (ranked.entries.length - from < n && !ranked.done) {
          await this.grow(run, ranked, Math.max(n, this.settings.pool), checked, after);
          continue;
        }
        const slice = ranked.entries.slice(from, from + n);
        const stale = slice.filter((c) => !checked.has(c.id));
        if (stale.length === 0) return slice;
        // from the cache: drop candidates deleted since their search (what a search would have done)
        const live = await this.deps.index.live(stale.map((c) => c.id));
        for (const c of stale) checked.add(c.id);
        if (live.size === stale.length) return slice;
        const dead = new Set(stale.filter((c) => !live.has(c.id)).map((c) => c.id));
        ranked.entries = ranked.entries.filter((c) => !dead.has(c.id));
      }
    };
    const found = await this.drain(run, need, stream, 'p2', true);
    for (const c of found.taken) this.pick(run, c, 'discovery');
    if (found.done) {
      run.s.phase = 3;
      this.deps.pool?.delete(run.readerId, run.s.t0);
    } else this.deps.pool?.set(run.readerId, run.s.t0, ranked);
  }

  /**
   * Appends the next `n` nearest items after the pool's last entry (an empty pool: after the cursor's
   * `position`); marks the pool done when the index has no more.
   */
  private async grow(
    run: Run,
    pool: RankedPool,
    n: number,
    checked: Set<string>,
    position: After | null,
  ): Promise<void> {
    const q = await (run.query ?? this.deps.embeddings.readerQuery(run.readerId, run.s.t0));
    if (!q) {
      pool.done = true;
      return;
    }
    const last = pool.entries[pool.entries.length - 1];
    const rows = await this.deps.index.nearest({
      vector: q.vector,
      untilMs: run.s.t0,
      readerId: run.readerId,
      limit: n,
      after: last ? { key: last.key, id: last.id } : position,
      depth: pool.entries.filter((c) => c.key <= 1).length, // the vector search's own entries
      minSimilarity: this.settings.minSimilarity,
    });
    const have = new Set(pool.entries.map((c) => c.id));
    for (const r of rows) {
      checked.add(r.id);
      if (!have.has(r.id)) pool.entries.push(r);
    }
    if (rows.length < n) pool.done = true;
  }

  /** The learned candidates of phase 2 as pool entries (key 1 + score, best first); [] without a source. */
  private async learned(run: Run): Promise<PoolEntry[]> {
    if (!this.deps.similar) return [];
    const rows = await this.deps.similar.similar(run.readerId, run.s.t0, this.settings.learnedPool);
    return rows
      .map((r) => ({ id: r.id, authorId: r.authorId, key: 1 + Math.min(1, Math.max(0, r.score)) }))
      .sort((a, b) => b.key - a.key || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Defers phase 2 while the index starts (see the module doc): phase 3 fills this page. */
  private defer(run: Run): void {
    run.deferred = true;
    this.deps.metrics.phase2Deferred();
    if (this.deferralLogged) return;
    this.deferralLogged = true;
    this.deps.log.warn(
      { readerId: run.readerId },
      'discover: the vector index is still starting; phase 2 deferred, newest items served meanwhile',
    );
  }

  /** Phase 3: newest overall, without followed creators. */
  private async phase3(run: Run, limit: number): Promise<void> {
    const need = limit - run.picked.length;
    if (need <= 0) return;
    const found = await this.drain(
      run,
      need,
      (after, n) => this.deps.index.newest(run.readerId, run.s.t0, after, n),
      'p3',
      true,
    );
    for (const c of found.taken) this.pick(run, c, 'newest');
    if (found.done) run.s.phase = 4;
  }

  /**
   * Pulls clean candidates from a keyset stream until `need` are taken or the stream is dry, moving
   * the cursor's position past what was consumed. `done`: the stream is dry and nothing clean was
   * left behind (the phase is over). With `diverse` (phases 2 and 3), each round is taken by
   * {@link pickPage} under the reader's author cap; candidates passed over stay unseen, and fill the page
   * when the stream runs dry or a round offers only capped authors ({@link fillPassed}).
   */
  private async drain(
    run: Run,
    need: number,
    fetch: (after: After | null, n: number) => Promise<StreamRow[]>,
    pos: 'p1' | 'p2' | 'p3',
    diverse = false,
  ): Promise<{ taken: Candidate[]; done: boolean }> {
    const taken: Candidate[] = [];
    const passed: Candidate[] = [];
    if (diverse) {
      run.cap = authorCap((await run.ex).maxPerAuthor, need + run.picked.length);
      diverse = Number.isFinite(run.cap); // max_per_author 0: no cap and no discount
    }
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const want = need - taken.length;
      if (want <= 0) return { taken, done: false };
      const n = Math.min(this.settings.maxFetch, Math.ceil(want * run.s.factor));
      const rows = await fetch(run.s[pos], n);
      const clean = await this.clean(run, rows);
      const use = diverse ? pickPage(clean, want, run.cap, undefined, run.authors, false).page : clean.slice(0, want);
      taken.push(...use);
      const used = new Set(use);
      let lastUsed = use[use.length - 1];
      if (diverse) {
        // in rank order: the last taken is the position; what was passed over before it waits in `passed`
        const at = lastIndexIn(clean, used);
        lastUsed = at < 0 ? undefined : clean[at];
        const upTo = use.length === want ? at : clean.length - 1;
        for (let i = 0; i <= upTo; i++) if (!used.has(clean[i]!)) passed.push(clean[i]!);
      }
      const last: Position | undefined = use.length === want ? lastUsed : rows[rows.length - 1];
      if (last) run.s[pos] = { key: last.key, id: last.id };
      // only capped authors in this round (none taken of its candidates): they fill the page, the cap holding
      // while other authors remain — a catalog of one author, or a few, is served to its end
      const onlyCapped = diverse && use.length === 0 && clean.length > 0;
      if (rows.length < n || onlyCapped) {
        // the stream is dry, or offers only capped authors: what the cap passed over fills the page
        const left = this.fillPassed(run, pos, taken, passed, need);
        const leftInRound = use.length === want ? clean.length - 1 - lastIndexIn(clean, used) : 0;
        return { taken, done: rows.length < n && !left && leftInRound === 0 };
      }
    }
    return { taken, done: false };
  }

  /**
   * Takes what the cap passed over (in rank order) into `taken` up to `need`. When some are left, the
   * position goes back to the last one taken, so the next page starts with them instead of losing them.
   * @returns whether some were left.
   */
  private fillPassed(
    run: Run,
    pos: 'p1' | 'p2' | 'p3',
    taken: Candidate[],
    passed: Candidate[],
    need: number,
  ): boolean {
    const fill = passed.slice(0, need - taken.length);
    taken.push(...fill);
    const last = fill[fill.length - 1];
    const left = fill.length < passed.length;
    if (left && last) run.s[pos] = { key: last.key, id: last.id };
    return left;
  }

  /** The first `slots` clean trending entries at or after the cursor's trending index, with their index. */
  private async trendingCandidates(run: Run, slots: number): Promise<{ row: Candidate; index: number }[]> {
    const list = await (run.trending ?? this.deps.trending.trending(run.nowMs, this.settings.trendingDepth));
    const from = run.s.trending;
    const rows = list.slice(from).map((t, i) => ({ id: t.id, authorId: t.authorId, key: from + i }));
    const out: { row: Candidate; index: number }[] = [];
    for (let at = 0; at < rows.length && out.length < slots; ) {
      const chunk = rows.slice(at, at + Math.ceil((slots - out.length) * run.s.factor));
      at += chunk.length;
      for (const c of await this.clean(run, chunk)) if (out.length < slots) out.push({ row: c, index: c.key });
    }
    for (const o of out) run.pickedIds.add(o.row.id);
    return out;
  }

  /** Drops picked, excluded and seen candidates (one seen round trip); adapts the over-fetch factor. */
  private async clean(run: Run, rows: readonly Candidate[]): Promise<Candidate[]> {
    if (rows.length === 0) return [];
    const ex = await run.ex;
    const open: Candidate[] = [];
    for (const r of rows) {
      if (run.pickedIds.has(r.id)) continue;
      const reason = ex.reason(r.id, r.authorId);
      if (reason) run.stats.excluded[reason] = (run.stats.excluded[reason] ?? 0) + 1;
      else open.push(r);
    }
    const seen =
      open.length > 0
        ? await this.deps.seen.seen(
            run.readerId,
            open.map((r) => r.id),
            run.nowMs,
          )
        : [];
    let clean = open.filter((_, i) => !seen[i]);
    run.stats.fetched += rows.length;
    run.stats.seenDropped += open.length - clean.length;
    if (clean.length > 0 && ex.needsItems('discover')) clean = await this.visible(run, ex, clean);
    const kept = clean.length / rows.length;
    const { overFetchCap } = this.settings;
    run.s.factor = Math.min(overFetchCap, Math.max(1.5, kept > 0 ? 1.25 / kept : overFetchCap));
    return clean;
  }

  /**
   * The candidates whose items pass the reader's preferences that read the item (muted authors and words,
   * languages): one hydration through the item cache; the others are counted by reason, not seen.
   */
  private async visible(run: Run, ex: ReaderExclusions, candidates: Candidate[]): Promise<Candidate[]> {
    const items = new Map((await this.deps.content.getItems(candidates.map((c) => c.id))).map((i) => [i.id, i]));
    return candidates.filter((c) => {
      const item = items.get(c.id);
      if (!item) return false; // deleted since it was found
      const reason = ex.itemReason(item, 'discover');
      if (reason) run.stats.excluded[reason] = (run.stats.excluded[reason] ?? 0) + 1;
      return reason === null;
    });
  }

  private pick(run: Run, c: Candidate, source: DiscoverSource): void {
    run.picked.push({ id: c.id, source, key: c.key });
    run.pickedIds.add(c.id);
  }

  /**
   * The page's items hydrated, its impressions written meanwhile (both done before this resolves). With a
   * re-rank hook, the items are hydrated first, ordered by the hook (what it drops is not served, nor
   * marked seen; ids it adds are ignored), and only then marked.
   */
  private async hydrateAndMark(run: Run, pickOf: ReadonlyMap<string, { key: number }>): Promise<Item[]> {
    const ids = run.picked.map((p) => p.id);
    const hook = this.deps.rerank;
    if (!hook || ids.length === 0) {
      const [items] = await Promise.all([this.deps.content.getItems(ids), this.markSeen(run.readerId, ids, run.nowMs)]);
      return items;
    }
    const hydrated = await this.deps.content.getItems(ids);
    const byId = new Map(hydrated.map((i) => [i.id, i]));
    const order = await hook(
      { readerId: run.readerId, nowMs: run.nowMs, feed: 'discover' },
      hydrated.map((i) => ({
        itemId: i.id,
        authorId: i.authorId,
        publishedAt: i.publishedAt,
        score: pickOf.get(i.id)?.key,
      })),
    );
    const items: Item[] = [];
    for (const id of order) {
      const item = byId.get(id);
      if (item) items.push(item);
      byId.delete(id);
    }
    await this.markSeen(
      run.readerId,
      items.map((i) => i.id),
      run.nowMs,
    );
    return items;
  }

  /** Records impressions; a failure is logged and counted, never thrown (the page is still served). */
  private markSeen(readerId: string, ids: string[], nowMs: number): Promise<void> {
    return markSeenBestEffort(this.deps.seen, readerId, ids, nowMs, (err) => {
      this.deps.metrics.impressionWriteFailed();
      this.deps.log.warn({ err, readerId, items: ids.length }, 'discover impression write failed');
    });
  }
}

export type { Phase };
