/**
 * The exclusion rules of a reader's snapshot (docs/exclusions.md), as ONE ordered table: the feeds' filter
 * (`reason`, `itemReason` of domain.ts: the first rule that matches is the reason) and the explain API's
 * findings (every rule that matches, in this order) both read it, so what explain says can never drift
 * from what the feeds filter (docs/explain.md).
 *
 * Order: own → blocked author → muted author → not interested → engaged → recently viewed, on ids (an
 * author when the candidate's is known); then, on hydrated items, muted author again (for candidates
 * read by id alone), muted word (a `hide` phrase of the feed) and language. Pure: no I/O.
 */
import type { Item } from '../kernel/items/item.js';
import type { ExclusionFinding, ExclusionReason, PreferenceFeed } from '../kernel/exclusion-source.js';
import { UNDETERMINED } from '../kernel/items/lang.js';
import type { MutedWordMatcher } from './muted-words.js';

/** What the rules read of one reader's snapshot. */
export interface RuleState {
  readerId: string;
  blocked: ReadonlySet<string>;
  muted: ReadonlySet<string>;
  dismissed: ReadonlySet<string>;
  engaged: ReadonlySet<string>;
  viewed: ReadonlySet<string>;
  /** The `hide` phrases' matcher of each feed that has any. */
  words: ReadonlyMap<PreferenceFeed, MutedWordMatcher>;
  /** The languages kept, or null for all. */
  languages: ReadonlySet<string> | null;
  /** Whether the language list applies to a feed (the following feed only when the reader asked). */
  langApplies(feed: PreferenceFeed): boolean;
}

/** One rule of the table. */
export interface ExclusionRule {
  rule: ExclusionReason;
  /** Checked on ids before hydration (`reason`). */
  onIds: boolean;
  /** Checked on the hydrated item (`itemReason`). */
  onItem: boolean;
  /**
   * The finding when the rule removes the candidate (`authorId` undefined: not known yet; `item`
   * undefined: not hydrated), else null.
   */
  match(
    s: RuleState,
    itemId: string,
    authorId: string | undefined,
    item: Item | undefined,
    feed: PreferenceFeed,
  ): ExclusionFinding | null;
}

/** A rule that removes by the candidate's author, when it is known. */
function byAuthor(rule: ExclusionReason, onItem: boolean, test: (s: RuleState, a: string) => boolean): ExclusionRule {
  return {
    rule,
    onIds: true,
    onItem,
    match: (s, _id, authorId) => (authorId !== undefined && test(s, authorId) ? { rule } : null),
  };
}

/** A rule that removes by the candidate's id. */
function byId(rule: ExclusionReason, test: (s: RuleState, id: string) => boolean): ExclusionRule {
  return { rule, onIds: true, onItem: false, match: (s, id) => (test(s, id) ? { rule } : null) };
}

/** The rules, in the order the feeds check them (the first that matches is the reason). */
export const EXCLUSION_RULES: readonly ExclusionRule[] = [
  byAuthor('own', false, (s, a) => a === s.readerId),
  byAuthor('blocked_author', false, (s, a) => s.blocked.has(a)),
  byAuthor('muted_author', true, (s, a) => s.muted.has(a)),
  byId('not_interested', (s, id) => s.dismissed.has(id)),
  byId('engaged', (s, id) => s.engaged.has(id)),
  byId('recently_viewed', (s, id) => s.viewed.has(id)),
  {
    rule: 'muted_word',
    onIds: false,
    onItem: true,
    match: (s, _id, _a, item, feed) => {
      const phrase = item && s.words.get(feed)?.match(item);
      return phrase ? { rule: 'muted_word', phrase, action: 'hide' } : null;
    },
  },
  {
    rule: 'language',
    onIds: false,
    onItem: true,
    match: (s, _id, _a, item, feed) => {
      const lang = item?.lang;
      if (!s.langApplies(feed) || lang === undefined || lang === UNDETERMINED || s.languages!.has(lang)) return null;
      return { rule: 'language', lang };
    },
  },
];

const ID_RULES = EXCLUSION_RULES.filter((r) => r.onIds);
const ITEM_RULES = EXCLUSION_RULES.filter((r) => r.onItem);

/** The first id rule that removes `itemId` (by `authorId` too when known), or null. */
export function idReason(s: RuleState, itemId: string, authorId?: string): ExclusionReason | null {
  for (const r of ID_RULES) if (r.match(s, itemId, authorId, undefined, 'for-you')) return r.rule;
  return null;
}

/** The first item rule that removes the hydrated `item` in `feed`, or null. */
export function itemRuleReason(s: RuleState, item: Item, feed: PreferenceFeed): ExclusionReason | null {
  for (const r of ITEM_RULES) if (r.match(s, item.id, item.authorId, item, feed)) return r.rule;
  return null;
}

/** Every rule of the table that removes the hydrated `item` in `feed`, in the table's order. */
export function ruleFindings(s: RuleState, item: Item, feed: PreferenceFeed): ExclusionFinding[] {
  const out: ExclusionFinding[] = [];
  for (const r of EXCLUSION_RULES) {
    const f = r.match(s, item.id, item.authorId, item, feed);
    if (f) out.push(f);
  }
  return out;
}
