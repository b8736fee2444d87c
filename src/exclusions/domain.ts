/**
 * A reader's exclusions as one immutable snapshot (design note 5): built once per feed request from
 * the hot state (recent views) and the durable state (engagements, "not interested", blocks), then
 * applied to every candidate with plain guard clauses. Pure: no I/O.
 *
 * Order of the guard clauses (the first that matches is the reason): own → blocked author →
 * not interested → engaged → recently viewed.
 */
import type { Item } from '../kernel/items/item.js';
import type { ExclusionReason, ReaderExclusions } from '../kernel/exclusion-source.js';

export type { ExclusionReason, ReaderExclusions } from '../kernel/exclusion-source.js';

/** Kinds accepted by `POST /v1/engagements`. */
export const ENGAGEMENT_KINDS = ['reply', 'like', 'share'] as const;
/** An engagement of a reader with an item. */
export type EngagementKind = (typeof ENGAGEMENT_KINDS)[number];

/** Kinds accepted by `POST /v1/feedback` / `DELETE /v1/feedback/:item_id`. */
export const FEEDBACK_KINDS = ['not_interested'] as const;
/** Explicit negative feedback of a reader on an item. */
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];

/** One "not interested" of a reader. */
export interface NotInterested {
  itemId: string;
  /** The item's author when the feedback was given. */
  authorId: string;
  /** When it was given, epoch ms (virtual time): the author's down-weight runs from here. */
  atMs: number;
}

/** The durable part of a reader's exclusions, as PostgreSQL holds it and Redis caches it. */
export interface DurableExclusions {
  /** Items the reader engaged with (any kind), most recent first, at most the configured cap. */
  engaged: string[];
  /** The reader's "not interested" items, most recent first, at most the configured cap. */
  notInterested: NotInterested[];
  /** Authors the reader blocks or who block the reader (note 4 graph; [] without one). */
  blockedAuthors: string[];
}

/** How "not interested" weighs on the item's author (config `FRESHET_NOT_INTERESTED_*`). */
export interface AuthorPenalty {
  /** Multiplier of the author's items' scores for the reader, in (0, 1] (1 = no penalty). */
  weight: number;
  /** How long after the feedback the penalty lasts, ms (virtual time). */
  durationMs: number;
}

/** No exclusions at all except the reader's own items (a reader nobody knows anything about). */
export const NO_DURABLE: DurableExclusions = { engaged: [], notInterested: [], blockedAuthors: [] };

/**
 * Builds the snapshot of `readerId` at `nowMs`.
 * @param recentViews newest first (duplicates allowed; they are dropped here, note 5's de-duplication on read).
 */
export function buildReaderExclusions(
  readerId: string,
  recentViews: readonly string[],
  durable: DurableExclusions,
  nowMs: number,
  penalty: AuthorPenalty,
): ReaderExclusions {
  const views = [...new Set(recentViews)];
  const viewed = new Set(views);
  const engaged = new Set(durable.engaged);
  const dismissed = new Set(durable.notInterested.map((n) => n.itemId));
  const blocked = new Set(durable.blockedAuthors);
  const authors = new Set<string>([readerId, ...blocked]);
  const weights = new Map<string, number>();
  if (penalty.weight < 1) {
    for (const n of durable.notInterested) {
      if (nowMs >= n.atMs && nowMs - n.atMs < penalty.durationMs) weights.set(n.authorId, penalty.weight);
    }
  }
  const itemIds = new Set<string>([...viewed, ...engaged, ...dismissed]);

  const reason = (itemId: string, authorId?: string): ExclusionReason | null => {
    if (authorId !== undefined) {
      if (authorId === readerId) return 'own';
      if (blocked.has(authorId)) return 'blocked_author';
    }
    if (dismissed.has(itemId)) return 'not_interested';
    if (engaged.has(itemId)) return 'engaged';
    if (viewed.has(itemId)) return 'recently_viewed';
    return null;
  };
  return {
    readerId,
    itemIds,
    blockedAuthors: authors,
    recentViews: views,
    engaged: durable.engaged,
    authorWeights: weights,
    reason,
    excludes: (itemId, authorId) => reason(itemId, authorId) !== null,
    authorWeight: (authorId) => weights.get(authorId) ?? 1,
    filterItems: (items: readonly Item[]) => items.filter((it) => reason(it.id, it.authorId) === null),
  };
}
