/**
 * The explain API's one entry (docs/explain.md): `explain({feed, readerId, itemId})` checks its input
 * and hands it to the feed's own explain (src/for-you/explain.ts, src/hot/explain.ts,
 * src/discover/explain.ts, src/following/explain.ts). The route (src/server/routes/explain.ts) and the library
 * (`freshet.explain`, src/compose/open.ts) both call it. Reads only.
 */
import { fail } from '../kernel/errors.js';
import { deletedExplanation, EXPLAIN_FEEDS, type ExplainFeed, type Explanation } from '../kernel/explain.js';
import type { Item } from '../kernel/items/item.js';
import { assertId } from '../kernel/ids.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import type { ExclusionSource } from '../kernel/exclusion-source.js';
import type { ForYou } from '../for-you/wire.js';
import type { Hot } from '../hot/wire.js';
import type { Discover } from '../discover/wire.js';
import type { Following } from '../following/wire.js';
import { HotExplain } from '../hot/explain.js';
import { parseRange } from '../hot/domain.js';
import { preview } from '../kernel/preview.js';
import { FollowingExplain } from '../following/explain.js';

/**
 * One feed's explain: why the live `item` would or would not be served to `readerId` at `nowMs`; `range`
 * (hot only, checked by the entry) is the hot list's range.
 */
export type FeedExplain = (readerId: string, item: Item, nowMs: number, range?: string) => Promise<Explanation>;

/** What `freshet.explain` takes. */
export interface ExplainQuery {
  /** One of `for-you`, `hot`, `discover`, `following`. */
  feed: string;
  readerId: string;
  itemId: string;
  /** The time to explain at, epoch ms (default: the instance's clock). */
  nowMs?: number;
  /**
   * Hot only: the range of the hot list to explain against (`<n>h` 1–720 or `<n>d` 1–30, as `GET /v1/hot`
   * takes; default 72h). Another feed given a range is refused (`INVALID_INPUT`).
   */
  range?: string;
}

/**
 * The explain entry over each feed's explain.
 * @returns a function that throws FreshetError `INVALID_INPUT` for an unknown feed or a `range` that is not
 *   the hot feed's or not a hot range, `INVALID_ID` for a bad reader or item id, `NOT_FOUND` for an item the store never held, and store errors.
 */
export function explainer(
  feeds: Record<ExplainFeed, FeedExplain>,
  content: ContentStore,
  now: () => number,
): (q: ExplainQuery) => Promise<Explanation> {
  return async (q) => {
    if (!(EXPLAIN_FEEDS as readonly string[]).includes(q.feed))
      throw fail('INVALID_INPUT', `feed must be one of ${EXPLAIN_FEEDS.join(', ')}`, { field: 'feed' });
    const feed = q.feed as ExplainFeed;
    if (q.range !== undefined) {
      if (feed !== 'hot')
        throw fail('INVALID_INPUT', 'range applies to the hot feed only: drop it, or explain feed hot', {
          field: 'range',
        });
      if (parseRange(q.range) === null)
        throw fail(
          'INVALID_INPUT',
          `range must be <n>h (1–720) or <n>d (1–30), as GET /v1/hot takes; got ${preview(q.range)}`,
          {
            field: 'range',
          },
        );
    }
    assertId(q.readerId, 'reader id');
    assertId(q.itemId, 'item_id');
    const nowMs = q.nowMs ?? now();
    // the live item as the feeds hydrate it: the item cache's shared copy, whose muted-word fold is computed
    // once (src/exclusions/muted-words.ts), not at every explain
    const [live] = await content.getItems([q.itemId]);
    if (live) return feeds[feed](q.readerId, live, nowMs, q.range);
    // not live: the store of record knows a deleted item from one that never was
    const record = await content.getItemRecord(q.itemId);
    if (!record) throw fail('NOT_FOUND', `no item ${q.itemId}`);
    const { deleted, ...item } = record;
    if (deleted) return deletedExplanation(feed, q.readerId, q.itemId, nowMs);
    return feeds[feed](q.readerId, item, nowMs, q.range);
  };
}

/** An explanation as the wire carries it (snake_case; `data` of the envelope). */
export function explanationJson(e: Explanation) {
  const rule = ({ subFilter, ...r }: Explanation['rules'][number]) =>
    subFilter === undefined ? r : { ...r, sub_filter: subFilter };
  return {
    feed: e.feed,
    reader_id: e.readerId,
    item_id: e.itemId,
    eligible: e.eligible,
    rules: e.rules.map(rule),
    notes: e.notes.map(rule),
    score: e.score,
    rank: e.rank,
    served: e.served ? { day: e.served.day, rank_if_unseen: e.served.rankIfUnseen } : null,
    at_ms: e.atMs,
  };
}

/** The wired parts the four explains read. */
export interface ExplainParts {
  forYou: ForYou;
  hot: Hot;
  discover: Discover;
  following: Following;
  content: ContentStore;
  exclusions: ExclusionSource;
}

/** `freshet.explain` over the wired feeds (src/compose/open.ts); `now` is the instance's clock. */
export function wireExplain(p: ExplainParts, now: () => number): (q: ExplainQuery) => Promise<Explanation> {
  const { content, exclusions } = p;
  const hot = new HotExplain({ ranking: p.hot.ranking, counters: p.hot.counters, exclusions });
  const following = new FollowingExplain({ index: p.following.index, exclusions });
  return explainer(
    {
      'for-you': (r, i, at) => p.forYou.explain.explain(r, i, at),
      hot: (r, i, at, range) => hot.explain(r, i, at, range),
      discover: (r, i, at) => p.discover.explain.explain(r, i, at),
      following: (r, i, at) => following.explain(r, i, at),
    },
    content,
    now,
  );
}
