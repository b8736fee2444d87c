/**
 * A reader's exclusions as one immutable snapshot (docs/exclusions.md): built once per feed request from
 * the hot state (recent views) and the durable state (engagements, "not interested", "show less", blocks,
 * the reader's preferences), then applied to every candidate with plain guard clauses. Pure: no I/O.
 *
 * Order of the guard clauses (the first that matches is the reason), one table for the feeds and explain
 * (rules.ts): own → blocked author → muted author → not interested → engaged → recently viewed; then, on
 * hydrated items (`itemReason`), muted word → language. A muted word whose action is `warn` hides nothing: `serve` marks the item with `filtered`. "Show less" and "not interested" weigh authors (and "show less" tags) down; the per-author
 * cap of a page is the feeds' (src/kernel/author-diversity.ts).
 */
import type { Item, ServedItem } from '../kernel/items/item.js';
import type { ExclusionFinding, PreferenceFeed, ReaderExclusions } from '../kernel/exclusion-source.js';
import { compilePreferences, type CompiledPreferences } from './compiled-preferences.js';
import { idReason, itemRuleReason, ruleFindings, type RuleState } from './rules.js';
import { DEFAULT_MAX_PER_AUTHOR, DEFAULT_PREFERENCES, type Preferences } from './preferences.js';

export type { ExclusionReason, ReaderExclusions } from '../kernel/exclusion-source.js';

/** Kinds accepted by `POST /v1/engagements`. */
export const ENGAGEMENT_KINDS = ['reply', 'like', 'share'] as const;
/** An engagement of a reader with an item. */
export type EngagementKind = (typeof ENGAGEMENT_KINDS)[number];

/** Kinds accepted by `POST /v1/feedback` / `DELETE /v1/feedback/:item_id`. */
export const FEEDBACK_KINDS = ['not_interested', 'show_less'] as const;
/** Explicit negative feedback of a reader on an item ("not interested": the item goes; "show less": its author and tags weigh less). */
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];

/** One "not interested" of a reader. */
export interface NotInterested {
  itemId: string;
  /** The item's author when the feedback was given. */
  authorId: string;
  /** When it was given, epoch ms (virtual time): the author's down-weight runs from here. */
  atMs: number;
}

/** One "show less like this" of a reader: its item's author and tags weigh less for a while. */
export interface ShowLess extends NotInterested {
  /** The item's tags when the feedback was given (read at load time). */
  tags: string[];
}

/** The durable part of a reader's exclusions, as PostgreSQL holds it and Redis caches it. */
export interface DurableExclusions {
  /** Items the reader engaged with (any kind), most recent first, at most the configured cap. */
  engaged: string[];
  /** The reader's "not interested" items, most recent first, at most the configured cap. */
  notInterested: NotInterested[];
  /** Authors the reader blocks or who block the reader (the following graph; [] without one). */
  blockedAuthors: string[];
  /** The reader's "show less" signals, most recent first, at most the configured cap (absent in old caches). */
  showLess?: ShowLess[];
  /** The reader's preferences; null (or absent) when it never set any. */
  preferences?: Preferences | null;
}

/** How "not interested" weighs on the item's author (config `FRESHET_NOT_INTERESTED_*`). */
export interface AuthorPenalty {
  /** Multiplier of the author's items' scores for the reader, in (0, 1] (1 = no penalty). */
  weight: number;
  /** How long after the feedback the penalty lasts, ms (virtual time). */
  durationMs: number;
}

/** How "show less" weighs (config `FRESHET_SHOW_LESS_*`). */
export interface ShowLessWeight {
  /** Multiplier per signal naming the author (or the tag), compounding, in (0, 1]. */
  weight: number;
  /** Lowest multiplier however many signals compound. */
  floor: number;
  /** How long after each signal it counts, ms (virtual time). */
  durationMs: number;
}

/** No exclusions at all except the reader's own items (a reader nobody knows anything about). */
export const NO_DURABLE: DurableExclusions = {
  engaged: [],
  notInterested: [],
  blockedAuthors: [],
  showLess: [],
  preferences: null,
};

/** No "show less" weighting (tests and callers that do not configure it). */
export const NO_SHOW_LESS: ShowLessWeight = { weight: 1, floor: 1, durationMs: 0 };

/** Counts of live "show less" signals by author and by tag at `nowMs`. */
function showLessCounts(signals: readonly ShowLess[], nowMs: number, durationMs: number) {
  const authors = new Map<string, number>();
  const tags = new Map<string, number>();
  for (const s of signals) {
    if (!(nowMs >= s.atMs && nowMs - s.atMs < durationMs)) continue;
    authors.set(s.authorId, (authors.get(s.authorId) ?? 0) + 1);
    for (const t of new Set(s.tags.map((x) => x.toLowerCase()))) tags.set(t, (tags.get(t) ?? 0) + 1);
  }
  return { authors, tags };
}

/** Author weights at `nowMs`: not interested (a fixed weight) × show less (compounding, floored). */
function authorWeightsOf(
  durable: DurableExclusions,
  nowMs: number,
  penalty: AuthorPenalty,
  showLess: ShowLessWeight,
  showLessAuthors: ReadonlyMap<string, number>,
): Map<string, number> {
  const weights = new Map<string, number>();
  if (penalty.weight < 1) {
    for (const n of durable.notInterested) {
      if (nowMs >= n.atMs && nowMs - n.atMs < penalty.durationMs) weights.set(n.authorId, penalty.weight);
    }
  }
  for (const [author, n] of showLessAuthors) {
    const w = Math.max(showLess.floor, showLess.weight ** n);
    if (w < 1) weights.set(author, (weights.get(author) ?? 1) * w);
  }
  return weights;
}

/**
 * Builds the snapshot of `readerId` at `nowMs` (expired mutes left out; the preferences compiled once per
 * document and stretch of time, compiled-preferences.ts). Its guard clauses and its findings read one
 * ordered rule table (rules.ts).
 * @param recentViews newest first (duplicates allowed; they are dropped here, the exclusions design's de-duplication on read).
 * @param defaultMaxPerAuthor the author cap of a reader who did not set one (`FRESHET_MAX_PER_AUTHOR`).
 */
export function buildReaderExclusions(
  readerId: string,
  recentViews: readonly string[],
  durable: DurableExclusions,
  nowMs: number,
  penalty: AuthorPenalty,
  showLess: ShowLessWeight = NO_SHOW_LESS,
  defaultMaxPerAuthor = DEFAULT_MAX_PER_AUTHOR,
): ReaderExclusions {
  const views = [...new Set(recentViews)];
  const prefs = durable.preferences ?? DEFAULT_PREFERENCES;
  const compiled = compilePreferences(prefs, nowMs); // memoized per document (compiled-preferences.ts)
  const warnings = compiled.warn;
  const s = ruleStateOf(readerId, views, durable, compiled, prefs);
  const counts = showLessCounts(durable.showLess ?? [], nowMs, showLess.durationMs);
  const weights = authorWeightsOf(durable, nowMs, penalty, showLess, counts.authors);
  const authorWeight = (authorId: string) => weights.get(authorId) ?? 1;
  const tagWeights = new Map<string, number>();
  for (const [tag, n] of counts.tags) tagWeights.set(tag, Math.max(showLess.floor, showLess.weight ** n));
  const reason = (itemId: string, authorId?: string) => idReason(s, itemId, authorId);
  const itemReason = (item: Item, feed: PreferenceFeed) => itemRuleReason(s, item, feed);
  return {
    readerId,
    itemIds: new Set<string>([...s.viewed, ...s.engaged, ...s.dismissed]),
    blockedAuthors: new Set<string>([readerId, ...s.blocked]),
    recentViews: views,
    engaged: durable.engaged,
    authorWeights: weights,
    maxPerAuthor: prefs.maxPerAuthor ?? defaultMaxPerAuthor,
    languages: prefs.languages,
    mutedAuthors: s.muted,
    reason,
    itemReason,
    needsItems: (feed) =>
      s.muted.size > 0 || s.words.has(feed) || s.langApplies(feed) || (feed !== 'following' && tagWeights.size > 0),
    excludes: (itemId, authorId) => reason(itemId, authorId) !== null,
    authorWeight,
    itemWeight: (item) => itemWeightOf(item, authorWeight(item.authorId), tagWeights, showLess.floor),
    serve: <T extends Item>(item: T, feed: PreferenceFeed): T & ServedItem => {
      const filtered = warnings.get(feed)?.matchAll(item);
      return filtered && filtered.length > 0 ? { ...item, filtered } : item;
    },
    findings: (item, feed) => ({
      rules: ruleFindings(s, item, feed),
      notes: (warnings.get(feed)?.matchAll(item) ?? []).map(
        (p): ExclusionFinding => ({ rule: 'muted_word', phrase: p, action: 'warn' }),
      ),
    }),
    filterItems: (items: readonly Item[], feed: PreferenceFeed = 'for-you') =>
      items.filter((it) => reason(it.id, it.authorId) === null && itemReason(it, feed) === null),
  };
}

/** What the rule table reads of the reader's snapshot (rules.ts). */
function ruleStateOf(
  readerId: string,
  views: readonly string[],
  durable: DurableExclusions,
  compiled: CompiledPreferences,
  prefs: Preferences,
): RuleState {
  const { languages } = compiled;
  return {
    readerId,
    blocked: new Set(durable.blockedAuthors),
    muted: compiled.mutedAuthors,
    dismissed: new Set(durable.notInterested.map((n) => n.itemId)),
    engaged: new Set(durable.engaged),
    viewed: new Set(views),
    words: compiled.hide,
    languages,
    langApplies: (feed) => languages !== null && (feed !== 'following' || prefs.languagesInFollowing),
  };
}

/** An item's weight: its author's, times its tags' "show less" weights (compounding, floored at `floor`). */
function itemWeightOf(
  item: Pick<Item, 'tags'>,
  authorWeight: number,
  tagWeights: ReadonlyMap<string, number>,
  floor: number,
) {
  let w = authorWeight;
  if (tagWeights.size === 0) return w;
  let t = 1;
  for (const tag of new Set(item.tags.map((x) => x.toLowerCase()))) t *= tagWeights.get(tag) ?? 1;
  w *= Math.max(floor, t);
  return w;
}
