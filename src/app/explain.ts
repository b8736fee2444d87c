/**
 * The explain API's one entry (docs/explain.md): `explain({feed, readerId, itemId})` checks its input
 * and hands it to the feed's own explain (src/for-you/explain.ts, src/hot/explain.ts,
 * src/discover/explain.ts, src/following/explain.ts). The route (routes/explain.ts) and the library
 * (`freshet.explain`, open.ts) both call it. Reads only.
 */
import { fail } from '../kernel/errors.js';
import { EXPLAIN_FEEDS, type ExplainFeed, type Explanation } from '../kernel/explain.js';
import { assertId } from '../kernel/ids.js';

/** One feed's explain: why `itemId` would or would not be served to `readerId` at `nowMs`. */
export type FeedExplain = (readerId: string, itemId: string, nowMs: number) => Promise<Explanation>;

/** What `freshet.explain` takes. */
export interface ExplainQuery {
  /** One of `for-you`, `hot`, `discover`, `following`. */
  feed: string;
  readerId: string;
  itemId: string;
  /** The time to explain at, epoch ms (default: the instance's clock). */
  nowMs?: number;
}

/**
 * The explain entry over each feed's explain.
 * @returns a function that throws FreshetError `INVALID_INPUT` for an unknown feed, `INVALID_ID` for a bad
 *   reader or item id, `NOT_FOUND` for an item the store never held, and store errors.
 */
export function explainer(
  feeds: Record<ExplainFeed, FeedExplain>,
  now: () => number,
): (q: ExplainQuery) => Promise<Explanation> {
  return async (q) => {
    if (!(EXPLAIN_FEEDS as readonly string[]).includes(q.feed))
      throw fail('INVALID_INPUT', `feed must be one of ${EXPLAIN_FEEDS.join(', ')}`, { field: 'feed' });
    assertId(q.readerId, 'reader id');
    assertId(q.itemId, 'item_id');
    return feeds[q.feed as ExplainFeed](q.readerId, q.itemId, q.nowMs ?? now());
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
    at_ms: e.atMs,
  };
}
