/**
 * ForYouFeed: the for-you feed (docs/for-you.md) — a stateless client sends `{action, limit}`, the server
 * recalls, drops what the reader has seen, delivers a page and keeps the rest in a per-reader cache.
 *
 * refresh:   lease → recall N clean candidates (walk.ts: interest matches, the shared fill pool, older
 *            items; rounds of N, each one seen check; a load_more's fallback resumes at the reader's
 *            cursor) → first `limit` delivered, the rest replaces the cache atomically (the for-you design's `DEL`
 *            is folded into that replace) → impressions written while the page is hydrated.
 * peek:      how many fresh unseen candidates a refresh would bring (first round only; writes nothing).
 * load_more: `LPOP key limit` (+ how many remain) → impressions written while hydrating; nothing
 *            popped → a silent refresh; fewer than `limit` → returned as they are, `hasMore` false.
 * Both top a page up from the cache when hydration dropped items deleted meanwhile (by another process:
 *            this one's deletes leave the pool at once), so pages stay full while candidates remain.
 *
 * Exclusions (the exclusions design, `ExclusionSource`): read once per request in parallel with the lease and the
 * interests (refresh) or with the pop (load_more); applied to every round of the walk, and every delivered
 * page passes them again, so an item excluded after the refresh that cached it is dropped on delivery.
 * The reader's preferences come in the same snapshot: rules that read the item (muted words, languages,
 * muted authors) hydrate each round's unseen candidates in the walk, and a page from the cache is then
 * hydrated and filtered BEFORE its impressions are written, so a hidden item is never marked seen (it comes
 * back when the mute ends); an item holding a muted phrase whose action is `warn` is delivered with
 * `filtered` (`ReaderExclusions.serve`). Author diversity (src/kernel/author-diversity.ts): a refresh arranges its clean
 * candidates into pages of its `limit` with at most `authorCap` items of one author each while other
 * authors remain among them, then the rest in pages over the cap: all of it is cached, so a catalog of one
 * author (or a few) scrolls to its end with `has_more` true until the last page.
 *
 * Impressions are written concurrently with hydration (so they add no round trip to the response
 * path) and are acknowledged before the response leaves, so the reader's next request can never
 * be served the same item again. A failed impression write is logged and counted, never thrown.
 * The refresh lease keeps two refreshes of one reader (e.g. two parallel `load_more`s on an empty
 * cache) from checking the seen filter before the other's impressions land; it is released only
 * after they do.
 */
import { randomUUID } from 'node:crypto';
import type { Item, ServedItem } from '../kernel/items/item.js';
import { fail } from '../kernel/errors.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import type { Candidate, CandidateRecall, RecallQuery } from './recall.js';
import type { FillPool } from './fill-pool.js';
import { parseCursor, refreshWalkInput, servingOrder, walk } from './walk.js';
import { interestMatches } from './interests.js';
import type { Pool } from './fill-pool.js';
import type { FeedCache } from './feed-cache.js';
import { markSeenBestEffort, type SeenFilter } from '../kernel/seen-filter.js';
import type { ExclusionSource, ReaderExclusions } from '../kernel/exclusion-source.js';
import type { FeedMetrics, Logger } from '../kernel/observability.js';
import { reRanked, sourcedCandidates, type RecallSource, type ReRank } from './sources.js';

/** What `peek` answers: fresh unseen candidates a refresh would now bring (at most `cap`). */
export interface PeekResult {
  count: number;
  /** `count` reached the bound of the check (the recall size): there may be more. */
  capped: boolean;
}

/** The two actions of the for-you design. */
export type FeedAction = 'refresh' | 'load_more';

/** One delivered page. */
export interface FeedPage {
  /** Hydrated, live items in delivery order (with `filtered` where they hold the reader's `warn` phrases). */
  items: ServedItem[];
  /** Whether the reader's delivery buffer still holds items (the for-you design's `has_more`). */
  hasMore: boolean;
  /** True when a `load_more` found nothing cached and silently refreshed. */
  refreshed: boolean;
}

/** Tunables of the feed; durations in ms. */
export interface ForYouFeedSettings {
  recall: Omit<RecallQuery, 'readerId' | 'interests' | 'nowMs'>;
  /** Lifetime of a reader's recall cursor (the seen window). */
  cursorTtlMs: number;
  /**
   * Where interest matches come from: `pool` (in process against the shared pool's lexemes: no SQL, the
   * pool's items only) or `index` (SQL over the banded lexeme index: the whole window, at most
   * `MATCH_SCAN_FACTOR × limit` rows read). Both are bounded whatever the catalog (docs/for-you.md).
   */
  interests: 'pool' | 'index';
  /** Lifetime of a reader's page cache (the for-you design: 30 minutes). */
  cacheTtlMs: number;
  /** How long a refresh may hold the reader's lease before it lapses by itself. */
  leaseMs: number;
  /** Poll interval while waiting for another refresh of the same reader. */
  leasePollMs: number;
}

/** Ports the feed depends on. */
export interface ForYouDeps {
  content: ContentStore;
  recall: CandidateRecall;
  seen: SeenFilter;
  /**
   * The discover design's per-reader filter, when `seen` is the for-you design's rolling one: delivered items older than the
   * decay window are marked in it too, and candidates older than the window are checked against it
   * (walk.ts). Absent: only `seen` (items served more than its window ago may come back).
   */
  olderSeen?: SeenFilter;
  /** The shared fill (fill-pool.ts). */
  pool: FillPool;
  cache: FeedCache;
  /** The exclusions (docs/exclusions.md), fetched once per request in parallel with the first reads. */
  exclusions: ExclusionSource;
  metrics: FeedMetrics;
  log: Logger;
  /** Extra recall sources (the learned recall; the library's): fused and walked first (sources.ts). */
  sources?: readonly RecallSource[];
  /** The library's re-rank hook, applied to a refresh's clean candidates before they are served (sources.ts). */
  rerank?: ReRank;
}

const FEED = 'for_you';

/** The items as served to the reader: those holding its `warn` phrases carry `filtered` (docs/preferences.md). */
const served = (ex: ReaderExclusions, items: readonly Item[]): ServedItem[] => items.map((i) => ex.serve(i, 'for-you'));
/** Rounds of extra pops when cached items were deleted meanwhile (keeps pages full). */
const MAX_REFILL_ROUNDS = 3;

export class ForYouFeed {
  constructor(
    private readonly deps: ForYouDeps,
    private readonly settings: ForYouFeedSettings,
  ) {}

  /**
   * Serves one request of `readerId` at virtual time `nowMs` (epoch ms).
   * @param limit items wanted, 1..100 (validated at the edge).
   * @throws FreshetError `STORE_UNAVAILABLE` when another refresh of the reader holds its lease
   *   for longer than twice the lease time; store errors propagate.
   */
  async page(readerId: string, action: FeedAction, limit: number, nowMs: number): Promise<FeedPage> {
    const page =
      action === 'refresh'
        ? await this.refresh(readerId, limit, nowMs, false)
        : await this.loadMore(readerId, limit, nowMs);
    this.deps.metrics.impressions(FEED, page.items.length);
    return page;
  }

  private async loadMore(readerId: string, limit: number, nowMs: number): Promise<FeedPage> {
    // the exclusions are read while popping: cached items must still pass them (a view, a block or a
    // "not interested" since the refresh that cached them)
    const ex = this.deps.exclusions.forReader(readerId, nowMs);
    ex.catch(() => {}); // awaited below (or by the refresh); a failure surfaces there
    const first = await this.deps.cache.pop(readerId, limit);
    if (first.itemIds.length === 0) {
      this.deps.metrics.cacheResult(FEED, 'fallback');
      return this.refresh(readerId, limit, nowMs, true, ex);
    }
    const page = await this.deliverFromCache(readerId, first.itemIds, first.remaining, limit, nowMs, await ex);
    this.deps.metrics.cacheResult(FEED, page.hasMore ? 'hit' : 'short');
    return page;
  }

  /** Hydrates popped ids (recording their impressions meanwhile); tops up when some were deleted. */
  private async deliverFromCache(
    readerId: string,
    popped: string[],
    remaining: number,
    limit: number,
    nowMs: number,
    ex: ReaderExclusions,
  ): Promise<FeedPage> {
    const items = await this.deliver(readerId, popped, nowMs, ex);
    return this.topUp(readerId, items, remaining, limit, nowMs, ex);
  }

  /**
   * Tops a page up from the reader's cache while it is short of `limit` (items deleted since they were
   * recalled) and the cache holds more (`remaining`), at most `MAX_REFILL_ROUNDS` pops.
   */
  private async topUp(
    readerId: string,
    items: ServedItem[],
    remaining: number,
    limit: number,
    nowMs: number,
    ex: ReaderExclusions,
  ): Promise<FeedPage> {
    for (let round = 0; round < MAX_REFILL_ROUNDS && items.length < limit && remaining > 0; round++) {
      const more = await this.deps.cache.pop(readerId, limit - items.length);
      remaining = more.remaining;
      if (more.itemIds.length === 0) break;
      items = items.concat(await this.deliver(readerId, more.itemIds, nowMs, ex));
    }
    return { items, hasMore: remaining > 0, refreshed: false };
  }

  private async refresh(
    readerId: string,
    limit: number,
    nowMs: number,
    fromLoadMore: boolean,
    exclusions?: Promise<ReaderExclusions>,
  ): Promise<FeedPage> {
    const token = randomUUID();
    // The reader's interests and exclusions are read while the lease is taken (independent round trips).
    const interests = this.deps.content.getInterests(readerId);
    interests.catch(() => {}); // awaited below; a failure then surfaces there, not as an unhandled rejection
    const exPending = exclusions ?? this.deps.exclusions.forReader(readerId, nowMs);
    exPending.catch(() => {});
    const waited = await this.takeLease(readerId, token);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.deps.cache
        .releaseLease(readerId, token)
        .catch((err) => this.deps.log.warn({ err, readerId }, 'lease release failed'));
    };
    try {
      if (waited && fromLoadMore) {
        // Another refresh just filled the cache: serve from it instead of recalling again.
        const next = await this.deps.cache.pop(readerId, limit);
        if (next.itemIds.length > 0) {
          const page = await this.deliverFromCache(
            readerId,
            next.itemIds,
            next.remaining,
            limit,
            nowMs,
            await exPending,
          );
          return { ...page, refreshed: true };
        }
      }
      const ex = await exPending;
      const walked = await this.cleanCandidates(readerId, await interests, ex, nowMs, limit, fromLoadMore);
      const ranked = await reRanked(this.deps.rerank, { readerId, nowMs, feed: 'for-you' }, walked.clean);
      const clean = this.diversify(ranked, limit, ex);
      const pageIds = clean.slice(0, limit);
      const rest = clean.slice(limit);
      const hydrated = this.deps.content.getItems(pageIds);
      const writes = Promise.all([
        this.deps.cache.replace(readerId, rest, this.settings.cacheTtlMs),
        this.markSeen(readerId, pageIds, nowMs),
        hydrated.then((items) => this.markOlder(readerId, items, nowMs)),
      ]);
      const [items] = await Promise.all([hydrated, writes.finally(release)]);
      // an item deleted by another process since the walk is not hydrated: top the page up from the cache
      const page = await this.topUp(readerId, served(ex, ex.filterItems(items)), rest.length, limit, nowMs, ex);
      return { ...page, refreshed: fromLoadMore };
    } finally {
      release();
    }
  }

  /**
   * Recall (walk.ts): the reader's interest matches (exclusions pushed into the SQL), then the shared
   * fill pool, then older items, each round checked against the seen filter, until the recall size N of
   * clean candidates is found; the reader's cursor is read first and stored after.
   * @param resume whether the walk resumes at the reader's cursor (a load_more whose buffer ran out).
   */
  private async cleanCandidates(
    readerId: string,
    interests: string[],
    ex: ReaderExclusions,
    nowMs: number,
    page: number,
    resume: boolean,
  ): Promise<{ clean: Candidate[]; exhausted: boolean }> {
    const r = this.settings.recall;
    const [pool, stored] = await Promise.all([this.deps.pool.get(nowMs), this.deps.cache.getCursor(readerId)]);
    const { lexemes, matches } = await this.matches(readerId, interests, ex, nowMs, pool);
    const hydrate = (ids: readonly string[]) => this.deps.content.getItems(ids);
    const out = await walk(
      { ...this.deps, hydrate },
      refreshWalkInput(r, { readerId, nowMs, ex, matches, lexemes, pool, cursor: parseCursor(stored), resume, page }),
    );
    this.deps.metrics.recallSize(FEED, out.examined);
    this.deps.metrics.seenDropped(FEED, out.dropped);
    if (out.cursor) await this.deps.cache.setCursor(readerId, JSON.stringify(out.cursor), this.settings.cursorTtlMs);
    return { clean: out.clean, exhausted: out.exhausted };
  }

  /**
   * The clean candidates in serving order: pages of `limit` with at most the reader's author cap of one
   * author each while other authors remain among them, then the rest (walk.ts `servingOrder`).
   */
  private diversify(clean: readonly Candidate[], limit: number, ex: ReaderExclusions): string[] {
    return servingOrder(clean, limit, ex.maxPerAuthor).map((c) => c.id);
  }

  /**
   * The reader's interest lexemes and the candidates walked first: the recall sources' fused candidates
   * (sources.ts), then the interest matches inside the window (interests.ts), read in parallel.
   */
  private async matches(
    readerId: string,
    interests: string[],
    ex: ReaderExclusions,
    nowMs: number,
    pool: Pool,
  ): Promise<{ lexemes: string[]; matches: Candidate[] }> {
    const r = this.settings.recall;
    const [interest, sourced] = await Promise.all([
      interestMatches(this.deps.recall, this.settings, { readerId, interests, ex, nowMs, pool }),
      sourcedCandidates(
        { sources: this.deps.sources ?? [], content: this.deps.content, log: this.deps.log },
        { readerId, nowMs, limit: r.limit, decay: r.decay, horizonMs: r.horizonMs },
      ),
    ]);
    return { lexemes: interest.lexemes, matches: [...sourced, ...interest.matches] };
  }

  /**
   * The "new" badge: how many fresh (inside the decay window) unseen candidates a refresh would
   * now bring, counted over the first round of a refresh's walk only — the interest matches and the
   * first N entries of the shared pool, one seen check — so the work is bounded. Writes nothing: no
   * impression, no lease, the page cache and the cursor untouched.
   */
  async peek(readerId: string, nowMs: number): Promise<PeekResult> {
    const r = this.settings.recall;
    const [interests, ex] = await Promise.all([
      this.deps.content.getInterests(readerId),
      this.deps.exclusions.forReader(readerId, nowMs),
    ]);
    const pool = await this.deps.pool.get(nowMs);
    const { matches } = await this.matches(readerId, interests, ex, nowMs, pool);
    const edge = nowMs - r.horizonMs;
    const ids = new Set<string>();
    for (const c of [...matches, ...pool.entries.slice(0, r.limit)]) {
      if (ids.size >= r.limit) break;
      if (
        c.publishedAt < edge ||
        c.publishedAt > nowMs ||
        c.authorId === readerId ||
        pool.removed.has(c.id) ||
        ex.excludes(c.id, c.authorId)
      )
        continue;
      ids.add(c.id);
    }
    const list = [...ids];
    const seen = list.length > 0 ? await this.deps.seen.seen(readerId, list, nowMs) : [];
    const count = seen.filter((s) => !s).length;
    return { count, capped: count >= r.limit };
  }

  /**
   * Hydrates ids while their impressions are written (both finish before this resolves), and drops
   * the items the reader's exclusions rule out. When the reader's preferences read the item (muted
   * authors or words, languages), the items are hydrated and filtered first and only the delivered ones
   * are marked seen: a hidden item must come back when its mute ends.
   */
  private async deliver(readerId: string, ids: string[], nowMs: number, ex: ReaderExclusions): Promise<ServedItem[]> {
    if (ex.needsItems('for-you')) {
      const kept = ex.filterItems(await this.deps.content.getItems(ids), 'for-you');
      await Promise.all([
        this.markSeen(
          readerId,
          kept.map((i) => i.id),
          nowMs,
        ),
        this.markOlder(readerId, kept, nowMs),
      ]);
      return served(ex, kept);
    }
    const [items] = await Promise.all([this.deps.content.getItems(ids), this.markSeen(readerId, ids, nowMs)]);
    await this.markOlder(readerId, items, nowMs);
    return served(ex, ex.filterItems(items));
  }

  /**
   * Marks the delivered items older than the decay window in `olderSeen` (when wired): those are the
   * ones the walk checks there. Items served while fresh are not (readers who stay in the window cost
   * no per-reader filter); docs/for-you.md "Repeats beyond the seen window" says what that leaves.
   */
  private async markOlder(readerId: string, items: readonly Item[], nowMs: number): Promise<void> {
    const older = this.deps.olderSeen;
    if (!older) return;
    const edge = nowMs - this.settings.recall.horizonMs;
    const ids = items.filter((i) => i.publishedAt < edge).map((i) => i.id);
    await markSeenBestEffort(older, readerId, ids, nowMs, (err) => {
      this.deps.metrics.impressionWriteFailed(FEED);
      this.deps.log.warn({ err, readerId, items: ids.length }, 'impression write failed (per-reader filter)');
    });
  }

  /** Records impressions; a failure is logged and counted, never thrown. */
  private markSeen(readerId: string, ids: string[], nowMs: number): Promise<void> {
    return markSeenBestEffort(this.deps.seen, readerId, ids, nowMs, (err) => {
      this.deps.metrics.impressionWriteFailed(FEED);
      this.deps.log.warn({ err, readerId, items: ids.length }, 'impression write failed');
    });
  }

  /**
   * Takes the reader's refresh lease, waiting while another refresh holds it.
   * @returns whether it had to wait (another refresh ran meanwhile).
   */
  private async takeLease(readerId: string, token: string): Promise<boolean> {
    const { leaseMs, leasePollMs } = this.settings;
    const deadline = Date.now() + 2 * leaseMs;
    let waited = false;
    while (!(await this.deps.cache.acquireLease(readerId, token, leaseMs))) {
      if (Date.now() > deadline)
        throw fail('STORE_UNAVAILABLE', 'another refresh of this reader did not finish in time');
      waited = true;
      await new Promise((r) => setTimeout(r, leasePollMs));
    }
    return waited;
  }
}
