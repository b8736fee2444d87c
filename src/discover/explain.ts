/**
 * The discover feed's explain (docs/explain.md): why an item would or would not be in a fresh discover
 * session of a reader now, its phase (the feed's source names: followed, trending, discovery, newest)
 * and, in discovery, its cosine to the reader, and its position in the session's first pages.
 *
 * The phases and their order are the feed's own: the explain runs `DiscoverFeed.page` itself, from a
 * fresh session, over read-only ports — the seen filter answers from its probe and records nothing,
 * the exclusions are read without a cache fill, no session pool is cached and no filter is warmed — so
 * no second copy of the phases exists. It reads at most {@link EXPLAIN_PAGES} pages of
 * {@link EXPLAIN_LIMIT}: an item further down has no rank.
 *
 * Order of the rules (the feed's `clean`): outside_window (published after now: a session reads up to
 * its start) → own → blocked_author → muted_author → not_interested → engaged → recently_viewed → seen →
 * muted_word → language. A removed item inside the window keeps its phase and similarity: a second pass
 * with the seen check and the exclusions aside says where it would have ranked (its rank stays null). A
 * served item (seen its only rule) also gets `served.rankIfUnseen`: its position in a pass where only its
 * own seen check is aside — where the session would put it were it not served yet.
 */
import type { ExclusionSource, ReaderExclusions } from '../kernel/exclusion-source.js';
import { findingRule, outsideWindow, rankedFeedRules, type ExplainScore, type Explanation } from '../kernel/explain.js';
import type { Item } from '../kernel/items/item.js';
import type { SeenFilter } from '../kernel/seen-filter.js';
import { DiscoverFeed, type DiscoverDeps, type DiscoverFeedSettings } from './service.js';

/** Items per page of the explain's pass (the route's largest `limit`). */
export const EXPLAIN_LIMIT = 100;
/** Pages of the explain's pass: the rank counts the first 300 items of a session at most. */
export const EXPLAIN_PAGES = 3;

/**
 * A seen filter that answers from `probe` and writes nothing (`aside`: every item unseen; an id: that item
 * unseen, the others as the filter says).
 */
function readOnlySeen(f: SeenFilter, aside: boolean | string): SeenFilter {
  return {
    seen: async (readerId, ids, nowMs) =>
      aside === true
        ? ids.map(() => false)
        : (await f.probe(readerId, ids, nowMs)).map((p, i) => p.seen && ids[i] !== aside),
    markSeen: async () => {},
    probe: (readerId, ids, nowMs) => f.probe(readerId, ids, nowMs),
    close: async () => {},
  };
}

/**
 * Exclusions read without a cache fill; with `aside`, a snapshot whose rules remove nothing (its weights
 * and author cap kept): where the item would rank were no rule to remove it.
 */
function readOnlyExclusions(x: ExclusionSource, aside: boolean): ExclusionSource {
  const read = async (r: string, now: number): Promise<ReaderExclusions> => {
    const ex = await x.forReaderReadOnly(r, now);
    if (!aside) return ex;
    return {
      ...ex,
      reason: () => null,
      itemReason: () => null,
      excludes: () => false,
      needsItems: () => false,
      filterItems: (items) => [...items],
    };
  };
  return { forReader: read, forReaderReadOnly: read };
}

/** The discover feed's explain (see the module doc). */
export class DiscoverExplain {
  /** The feed over read-only ports, the seen check as the feed makes it. */
  private readonly pass: DiscoverFeed;
  /** The same with the seen check and the exclusions aside (where a removed item would rank). */
  private readonly asidePass: DiscoverFeed;
  /** A pass with one served item's seen check aside (where it would rank were it not served yet). */
  private readonly unseenPass: (itemId: string) => DiscoverFeed;

  constructor(
    private readonly deps: DiscoverDeps,
    settings: DiscoverFeedSettings,
  ) {
    const pass = (aside: boolean | string) =>
      new DiscoverFeed(
        {
          ...deps,
          exclusions: readOnlyExclusions(deps.exclusions, aside === true),
          seen: readOnlySeen(deps.seen, aside),
          pool: undefined,
        },
        settings,
      );
    this.pass = pass(false);
    this.asidePass = pass(true);
    this.unseenPass = (itemId) => pass(itemId);
  }

  /**
   * Why `record` would or would not be in a fresh discover session of `readerId` at `nowMs`.
   * @param record the live item (the app's explain looks it up: unknown → `NOT_FOUND`, deleted → the `deleted` rule).
   * @throws store errors.
   */
  async explain(readerId: string, record: Item, nowMs: number): Promise<Explanation> {
    const itemId = record.id;
    const [ex, [probe]] = await Promise.all([
      this.deps.exclusions.forReaderReadOnly(readerId, nowMs),
      this.deps.seen.probe(readerId, [itemId], nowMs),
    ]);
    const future = record.publishedAt > nowMs;
    const outside = future
      ? outsideWindow('It is published after now: a discover session reads items up to its start.')
      : null;
    const findings = ex.findings(record, 'discover');
    const rules = rankedFeedRules(findings, probe!, readerId, 'discover', outside);
    const notes = findings.notes.map((f) => findingRule(f, readerId, 'discover'));
    // a removed item inside the window still gets its phase and key, from a pass with the rules aside
    const eligible = rules.length === 0;
    const found = future ? null : await this.find(eligible ? this.pass : this.asidePass, readerId, itemId, nowMs);
    // a served item: where a fresh session would put it were it alone not served yet (only seen removes it)
    const onlySeen = rules.length === 1 && rules[0]!.rule === 'seen';
    const unseen = onlySeen ? await this.find(this.unseenPass(itemId), readerId, itemId, nowMs) : null;
    return {
      feed: 'discover',
      readerId,
      itemId,
      eligible,
      rules,
      notes,
      score: found?.score ?? null,
      rank: eligible ? (found?.rank ?? null) : null,
      served: probe!.seen ? { day: probe!.day, rankIfUnseen: unseen?.rank ?? null } : null,
      atMs: nowMs,
    };
  }

  /** The item's position, phase and key in a fresh session's first pages (null: not reached). */
  private async find(
    feed: DiscoverFeed,
    readerId: string,
    itemId: string,
    nowMs: number,
  ): Promise<{ rank: number; score: ExplainScore } | null> {
    let cursor: string | undefined;
    let before = 0;
    for (let p = 0; p < EXPLAIN_PAGES; p++) {
      const page = await feed.page(readerId, EXPLAIN_LIMIT, cursor, nowMs);
      const at = page.items.findIndex((i) => i.id === itemId);
      if (at >= 0) {
        // the phase's sort key: the cosine (discovery), the publication time (followed, newest), the list index (trending)
        const phase = page.sources[at]!;
        const key = page.keys[at]!;
        const parts: Record<string, number | string> = { phase };
        if (phase === 'discovery') parts.similarity = key;
        else parts[phase === 'trending' ? 'trending_index' : 'published_at_ms'] = key;
        return { rank: before + at + 1, score: { value: key, parts } };
      }
      before += page.items.length;
      if (page.nextCursor === null) return null;
      cursor = page.nextCursor;
    }
    return null;
  }
}
