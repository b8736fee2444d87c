/**
 * The explain API's shared floor ("why this item, why not that one", docs/explain.md): the shape every
 * feed's explain returns, the rule names, and the one plain-English sentence each rule reads as. Each
 * feed builds its own explanation in its folder (src/for-you/explain.ts, src/hot/explain.ts, …) from
 * its own ranking functions; the app wires them to `GET /v1/feeds/{feed}/explain` and `freshet.explain`.
 * An explanation is a read: no feed writes anything while building one.
 */
import type { ExclusionFinding, ExclusionFindings } from './exclusion-source.js';
import type { SeenProbe } from './seen-filter.js';

/** The feeds that explain (the path segment of the route). */
export const EXPLAIN_FEEDS = ['for-you', 'hot', 'discover', 'following'] as const;
/** One of {@link EXPLAIN_FEEDS}. */
export type ExplainFeed = (typeof EXPLAIN_FEEDS)[number];

/**
 * Every rule that can remove an item (the names the wire carries): the exclusion rules
 * (`ExclusionReason` less the down-weights), `seen` (a Bloom filter answers "probably served"),
 * `outside_window` (outside the recall window, the hot range, or older than a timeline keeps), and the
 * feed-specific `not_followed` (following) and `not_ranked` (hot: not in the current snapshot).
 */
export type ExplainRuleName =
  | 'seen'
  | 'recently_viewed'
  | 'own'
  | 'engaged'
  | 'not_interested'
  | 'blocked_author'
  | 'muted_word'
  | 'muted_author'
  | 'language'
  | 'deleted'
  | 'outside_window'
  | 'not_followed'
  | 'not_ranked';

/** One rule as reported: its name, one sentence, and the rule's own fields. */
export interface ExplainRule {
  rule: ExplainRuleName;
  /** One plain English sentence. */
  reason: string;
  /** `seen` in a rolling daily filter: the UTC day (`YYYY-MM-DD`) of the filter that holds it. */
  day?: string;
  /** `seen` in the per-reader scalable filter: the sub-filter that holds it (0 = the oldest). */
  subFilter?: number;
  /** `seen`: that filter's current false-positive rate estimated from its fill, in [0, 1]. */
  fpr?: number;
  /** `muted_word`: the phrase as the reader wrote it. */
  phrase?: string;
  /** `muted_word`: `hide` (a rule) or `warn` (a note). */
  action?: 'hide' | 'warn';
  /** `language`: the item's primary language tag. */
  lang?: string;
}

/** The score of an item in a feed: its value and the factors the feed really combines. */
export interface ExplainScore {
  value: number;
  /** Factor name → value (numbers), or the discover phase (a source name). */
  parts: Record<string, number | string>;
}

/** What a feed's explain answers (`data` of the route; snake_case on the wire). */
export interface Explanation {
  feed: ExplainFeed;
  readerId: string;
  itemId: string;
  /** `rules` is empty: a refresh now could serve the item. */
  eligible: boolean;
  /** Every rule that removes the item, in the order the feed applies them. */
  rules: ExplainRule[];
  /** What marks the item without removing it (a `warn` muted word). */
  notes: ExplainRule[];
  /** Null when the feed has no score, or the item is deleted or outside the feed's window. */
  score: ExplainScore | null;
  /** 1-based rank in a refresh now, or null when not eligible or beyond what one refresh reaches. */
  rank: number | null;
  /**
   * Ranked feeds (for-you, discover), when the seen filter says the item was served: when (`day`, the UTC
   * day of the rolling filter holding it; null for the reader's own filter, which keeps no day) and why it
   * ranked — `rankIfUnseen`, its rank in a refresh now were it alone not served yet (null when another rule
   * removes it too, or beyond what one refresh reaches). Null otherwise (absent: null).
   */
  served?: { day: string | null; rankIfUnseen: number | null } | null;
  /** The time the explanation is for, epoch ms (the request's clock). */
  atMs: number;
}

/** Formats a rate as a percentage the way the sentences show it (`0.12 %`, `< 0.0001 %`). */
export function percent(rate: number): string {
  const p = rate * 100;
  if (p === 0) return '0 %';
  if (p < 0.0001) return '< 0.0001 %';
  return `${Number(p.toPrecision(2))} %`;
}

/** The `seen` rule for a probe that answered seen (null when it did not). */
export function seenRule(probe: SeenProbe, readerId: string): ExplainRule | null {
  if (!probe.seen) return null;
  const rate = `estimated false-positive rate ${percent(probe.fpr)}`;
  if (probe.day !== null)
    return {
      rule: 'seen',
      reason: `Already served to ${readerId}: the rolling filter of ${probe.day} holds it (${rate}).`,
      day: probe.day,
      fpr: probe.fpr,
    };
  return {
    rule: 'seen',
    reason: `Already served to ${readerId}: sub-filter ${probe.subFilter} of the reader's own filter holds it (${rate}).`,
    subFilter: probe.subFilter ?? 0,
    fpr: probe.fpr,
  };
}

/** An exclusion finding (src/kernel/exclusion-source.ts) as a reported rule, with its sentence. */
export function findingRule(f: ExclusionFinding, readerId: string, feed: ExplainFeed): ExplainRule {
  const out: ExplainRule = { rule: f.rule as ExplainRuleName, reason: '' };
  switch (f.rule) {
    case 'own':
      out.reason = `It is by ${readerId}: a reader is never served its own items.`;
      break;
    case 'blocked_author':
      out.reason = `Its author and ${readerId} are blocked (one blocks the other).`;
      break;
    case 'muted_author':
      out.reason = `Its author is one of ${readerId}'s muted authors.`;
      break;
    case 'not_interested':
      out.reason = `It was marked "not interested" by ${readerId}.`;
      break;
    case 'engaged':
      out.reason = `It was engaged with by ${readerId} already (a reply, like or share).`;
      break;
    case 'recently_viewed':
      out.reason = `It is one of the items ${readerId} viewed recently.`;
      break;
    case 'muted_word':
      out.phrase = f.phrase;
      out.action = f.action;
      out.reason =
        f.action === 'warn'
          ? `It mentions “${f.phrase}”, one of ${readerId}'s muted words (action warn): served with the phrase in \`filtered\`.`
          : `It mentions “${f.phrase}”, one of ${readerId}'s muted words (action hide).`;
      break;
    case 'language':
      out.lang = f.lang;
      out.reason = `It is in ${f.lang}, outside the languages ${readerId} reads in ${feed}.`;
      break;
    default:
      out.reason = `Rule ${f.rule} removes it.`;
  }
  return out;
}

/**
 * The rules of a ranked feed (for-you, discover) in the order its candidates meet them: `outside` (when
 * given), the id and author rules (own, blocked_author, muted_author, not_interested, engaged,
 * recently_viewed), `seen` (when the probe says so), then the rules that read the item (muted_word,
 * language) — a ranked feed hydrates only the candidates that passed its seen check.
 */
export function rankedFeedRules(
  findings: ExclusionFindings,
  probe: SeenProbe,
  readerId: string,
  feed: ExplainFeed,
  outside: ExplainRule | null,
): ExplainRule[] {
  const all = findings.rules.map((f) => findingRule(f, readerId, feed));
  const byItem = all.filter((r) => r.rule === 'muted_word' || r.rule === 'language');
  const seen = seenRule(probe, readerId);
  return [...(outside ? [outside] : []), ...all.filter((r) => !byItem.includes(r)), ...(seen ? [seen] : []), ...byItem];
}

/**
 * The rules of the reader's preferences that read the item (muted_author, muted_word, language), in
 * their order: all the hot list and the following timeline apply of the exclusions (besides their own).
 */
export function preferenceRules(findings: ExclusionFindings, readerId: string, feed: ExplainFeed): ExplainRule[] {
  return findings.rules
    .filter((f) => f.rule === 'muted_author' || f.rule === 'muted_word' || f.rule === 'language')
    .map((f) => findingRule(f, readerId, feed));
}

/** The `deleted` rule. */
export const DELETED_RULE: ExplainRule = { rule: 'deleted', reason: 'It was deleted: no feed serves it.' };

/** An `outside_window` rule whose sentence says which window. */
export function outsideWindow(reason: string): ExplainRule {
  return { rule: 'outside_window', reason };
}

/** The explanation of a deleted item: the one rule, no score, no rank. */
export function deletedExplanation(feed: ExplainFeed, readerId: string, itemId: string, atMs: number): Explanation {
  return { feed, readerId, itemId, eligible: false, rules: [DELETED_RULE], notes: [], score: null, rank: null, atMs };
}
