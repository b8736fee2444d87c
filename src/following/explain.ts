/**
 * The following timeline's explain (docs/explain.md): why an item is or is not on a reader's timeline,
 * and its position from the newest. The timeline is chronological: it has no score, its rank is the
 * position (1 = the newest entry the reader would be shown).
 *
 * The rules are the timeline's own (service.ts module doc): it applies `deleted`, `blocked_author`
 * (authors the reader blocks, and those who block it) and the reader's preferences, never the ranked
 * feeds' `recently_viewed`, `engaged` or `not_interested`. Order: deleted → outside_window (not on the
 * timelines yet: unpublished, or its fan-out still below the visibility watermark) → blocked_author or
 * not_followed (its author is not one the reader follows) → muted_author → muted_word → language (only
 * with `languages_in_following`).
 *
 * Writes nothing: the PostgreSQL side of the timeline (TimelineIndex) is read — never an inbox rebuild,
 * a lazy removal, a last-active touch or a marker — and the exclusions without a cache fill.
 */
import type { ExclusionSource } from '../kernel/exclusion-source.js';
import { findingRule, outsideWindow, preferenceRules, type ExplainRule, type Explanation } from '../kernel/explain.js';
import type { Item } from '../kernel/items/item.js';
import type { TimelineIndex } from './timeline-index.js';

/** Entries newer than the item a rank counts at most: past them the rank is null. */
export const EXPLAIN_DEPTH = 1_000;

/** What the following explain reads. */
export interface FollowingExplainDeps {
  index: TimelineIndex;
  exclusions: ExclusionSource;
}

/** The following timeline's explain (see the module doc). */
export class FollowingExplain {
  constructor(private readonly deps: FollowingExplainDeps) {}

  /**
   * Why `record` is or is not on the timeline of `readerId` at `nowMs`.
   * @param record the live item (the app's explain looks it up: unknown → `NOT_FOUND`, deleted → the `deleted` rule).
   * @throws store errors.
   */
  async explain(readerId: string, record: Item, nowMs: number): Promise<Explanation> {
    const itemId = record.id;
    const { index } = this.deps;
    const [[tid], view, ex] = await Promise.all([
      index.tidsOf([itemId]),
      index.readView(readerId),
      this.deps.exclusions.forReaderReadOnly(readerId, nowMs),
    ]);
    const rules: ExplainRule[] = [];
    const onTimelines = tid !== null && tid !== undefined && tid < view.watermark;
    if (!onTimelines) rules.push(outsideWindow('It is not on the timelines yet: its fan-out has not finished.'));
    else {
      const vis = await index.visible(readerId, [tid]);
      if (vis.unfollowed.length > 0)
        rules.push(
          ex.blockedAuthors.has(record.authorId) && record.authorId !== readerId
            ? findingRule({ rule: 'blocked_author' }, readerId, 'following')
            : { rule: 'not_followed', reason: `Its author is not one ${readerId} follows.` },
        );
    }
    const findings = ex.findings(record, 'following');
    rules.push(...preferenceRules(findings, readerId, 'following'));
    const notes = findings.notes.map((f) => findingRule(f, readerId, 'following'));
    const eligible = rules.length === 0;
    let rank: number | null = null;
    if (eligible && onTimelines) {
      // the entries above it a read would show: followed, not blocked or deleted, the preferences applied
      const newer = await index.timeline(readerId, view.watermark, tid, EXPLAIN_DEPTH);
      const shown = newer.filter((t) => ex.itemReason(t.item, 'following') === null).length;
      rank = newer.length < EXPLAIN_DEPTH ? shown + 1 : null;
    }
    return { feed: 'following', readerId, itemId, eligible, rules, notes, score: null, rank, atMs: nowMs };
  }
}
