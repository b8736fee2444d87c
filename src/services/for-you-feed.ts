/**
 * ForYouFeed: the for-you feed of note 1 — a stateless client sends `{action, limit}`, the server
 * recalls, drops what the reader has seen, delivers a page and keeps the rest in a per-reader cache.
 *
 * refresh:   lease → recall top N (relevance × Gaussian decay) → seen check (one round trip) →
 *            first `limit` delivered, the rest replaces the cache atomically (note 1's `DEL` is
 *            folded into that replace) → impressions written while the page is hydrated.
 * load_more: `LPOP key limit` (+ how many remain) → impressions written while hydrating; nothing
 *            popped → a silent refresh; fewer than `limit` → returned as they are, `hasMore` false.
 *
 * Exclusions (note 5, `ExclusionSource`): read once per request in parallel with the lease and the
 * interests (refresh) or with the pop (load_more); pushed into the recall's SQL, and every delivered
 * page passes them again, so an item excluded after the refresh that cached it is dropped on delivery.
 *
 * Impressions are written concurrently with hydration (so they add no round trip to the response
 * path) and are acknowledged before the response leaves, so the reader's next request can never
 * be served the same item again. A failed impression write is logged and counted, never thrown.
 * The refresh lease keeps two refreshes of one reader (e.g. two parallel `load_more`s on an empty
 * cache) from checking the seen filter before the other's impressions land; it is released only
 * after they do.
 */
import { randomUUID } from 'node:crypto';
import type { Item } from '../domain/item.js';
import { fail } from '../domain/errors.js';
import type { CandidateRecall, ContentStore, RecallQuery } from '../ports/content-store.js';
import type { FeedCache } from '../ports/feed-cache.js';
import type { SeenFilter } from '../ports/seen-filter.js';
import type { ExclusionSource, ReaderExclusions } from '../ports/exclusions.js';
import type { FeedMetrics, Logger } from '../ports/observability.js';

/** How many of the reader's recent views and engagements lend their words to the recall's interests. */
const INTEREST_ITEMS = 20;

/** The two actions of note 1. */
export type FeedAction = 'refresh' | 'load_more';

/** One delivered page. */
export interface FeedPage {
  /** Hydrated, live items in delivery order. */
  items: Item[];
  /** Whether the reader's delivery buffer still holds items (note 1's `has_more`). */
  hasMore: boolean;
  /** True when a `load_more` found nothing cached and silently refreshed. */
  refreshed: boolean;
}

/** Tunables of the feed; durations in ms. */
export interface ForYouSettings {
  recall: Omit<RecallQuery, 'readerId' | 'interests' | 'nowMs'>;
  /** Lifetime of a reader's page cache (note 1: 30 minutes). */
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
  cache: FeedCache;
  /** Note 5's exclusions, fetched once per request in parallel with the first reads. */
  exclusions: ExclusionSource;
  metrics: FeedMetrics;
  log: Logger;
}

const FEED = 'for_you';
/** Rounds of extra pops when cached items were deleted meanwhile (keeps pages full). */
const MAX_REFILL_ROUNDS = 3;

export class ForYouFeed {
  constructor(
    private readonly deps: ForYouDeps,
    private readonly settings: ForYouSettings,
  ) {}

  /**
   * Serves one request of `readerId` at virtual time `nowMs` (epoch ms).
   * @param limit items wanted, 1..100 (validated at the edge).
   * @throws FreshetError `STORE_UNAVAILABLE` when another refresh of the reader holds its lease
   *   for longer than twice the lease time; store errors propagate.
   */
  async serve(readerId: string, action: FeedAction, limit: number, nowMs: number): Promise<FeedPage> {
    if (action === 'refresh') return this.refresh(readerId, limit, nowMs, false);
    return this.loadMore(readerId, limit, nowMs);
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
    let items = await this.deliver(readerId, popped, nowMs, ex);
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
      this.deps.cache.releaseLease(readerId, token).catch((err) => this.deps.log.warn({ err, readerId }, 'lease release failed'));
    };
    try {
      if (waited && fromLoadMore) {
        // Another refresh just filled the cache: serve from it instead of recalling again.
        const next = await this.deps.cache.pop(readerId, limit);
        if (next.itemIds.length > 0) {
          const page = await this.deliverFromCache(readerId, next.itemIds, next.remaining, limit, nowMs, await exPending);
          return { ...page, refreshed: true };
        }
      }
      const ex = await exPending;
      const clean = await this.cleanCandidates(readerId, await interests, ex, nowMs);
      const pageIds = clean.slice(0, limit);
      const rest = clean.slice(limit);
      const writes = Promise.all([
        this.deps.cache.replace(readerId, rest, this.settings.cacheTtlMs),
        this.markSeen(readerId, pageIds, nowMs),
      ]);
      const [items] = await Promise.all([this.deps.content.getItems(pageIds), writes.finally(release)]);
      return { items: ex.filterItems(items), hasMore: rest.length > 0, refreshed: fromLoadMore };
    } finally {
      release();
    }
  }

  /**
   * Recall with the reader's exclusions pushed into it (excluded items and authors are never candidates,
   * "not interested" authors weigh less), then drop what the seen filter says the reader has seen
   * (one round trip).
   */
  private async cleanCandidates(readerId: string, interests: string[], ex: ReaderExclusions, nowMs: number): Promise<string[]> {
    const exclusions = { authorIds: ex.blockedAuthors, itemIds: ex.itemIds, authorWeights: ex.authorWeights };
    // what the reader viewed or engaged with lately also says what it is interested in (issue 2)
    const interestItemIds = [...ex.recentViews, ...ex.engaged].slice(0, INTEREST_ITEMS);
    const candidates = await this.deps.recall.recall({ ...this.settings.recall, readerId, interests, interestItemIds, nowMs, exclusions });
    this.deps.metrics.recallSize(FEED, candidates.length);
    if (candidates.length === 0) return [];
    const seen = await this.deps.seen.seen(readerId, candidates, nowMs);
    const clean = candidates.filter((_, i) => !seen[i]);
    this.deps.metrics.seenDropped(FEED, candidates.length - clean.length);
    return clean;
  }

  /**
   * Hydrates ids while their impressions are written (both finish before this resolves), and drops
   * the items the reader's exclusions rule out.
   */
  private async deliver(readerId: string, ids: string[], nowMs: number, ex: ReaderExclusions): Promise<Item[]> {
    const [items] = await Promise.all([this.deps.content.getItems(ids), this.markSeen(readerId, ids, nowMs)]);
    return ex.filterItems(items);
  }

  /** Records impressions; a failure is logged and counted, never thrown. */
  private async markSeen(readerId: string, ids: string[], nowMs: number): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.deps.seen.markSeen(readerId, ids, nowMs);
    } catch (err) {
      this.deps.metrics.impressionWriteFailed(FEED);
      this.deps.log.warn({ err, readerId, items: ids.length }, 'impression write failed');
    }
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
      if (Date.now() > deadline) throw fail('STORE_UNAVAILABLE', 'another refresh of this reader did not finish in time');
      waited = true;
      await new Promise((r) => setTimeout(r, leasePollMs));
    }
    return waited;
  }
}
