/**
 * A reader's interests as the for-you recall reads them (docs/for-you.md "Recall"): its interest lexemes
 * (interest terms and the words of what it viewed or engaged with lately) and its interest
 * matches inside the decay window — against the shared pool in process, or through the banded index
 * (`interests: 'index'`). Shared by a refresh (service.ts) and the explain API (explain.ts), so both
 * see the same matches. Reads only.
 */
import type { ReaderExclusions } from '../kernel/exclusion-source.js';
import type { Pool } from './fill-pool.js';
import type { Candidate, CandidateRecall, RecallQuery } from './recall.js';
import { matchPool } from './walk.js';

/** How many of the reader's recent views and engagements lend their words to the recall's interests. */
export const INTEREST_ITEMS = 20;

/** The settings the matches read (a part of `ForYouFeedSettings`). */
export interface InterestSettings {
  recall: Omit<RecallQuery, 'readerId' | 'interests' | 'nowMs'>;
  interests: 'pool' | 'index';
}

/** One reader's request. */
export interface InterestQuery {
  readerId: string;
  /** The reader's explicit interest terms. */
  interests: readonly string[];
  ex: ReaderExclusions;
  nowMs: number;
  pool: Pool;
}

/**
 * The reader's interest lexemes (one small statement) and its matches inside the window, best first;
 * both empty for a reader with no terms, views or engagements.
 * @throws store errors (`STORE_UNAVAILABLE`).
 */
export async function interestMatches(
  recall: CandidateRecall,
  settings: InterestSettings,
  q: InterestQuery,
): Promise<{ lexemes: string[]; matches: Candidate[] }> {
  const { readerId, interests, ex, nowMs, pool } = q;
  // what the reader viewed or engaged with lately also says what it is interested in
  const interestItemIds = [...ex.recentViews, ...ex.engaged].slice(0, INTEREST_ITEMS);
  if (interests.length === 0 && interestItemIds.length === 0) return { lexemes: [], matches: [] };
  const lexemes = await recall.interestLexemes(interests, interestItemIds, ex.languages ?? []);
  const r = settings.recall;
  if (settings.interests === 'index') {
    const authorIds = ex.mutedAuthors.size > 0 ? [...ex.blockedAuthors, ...ex.mutedAuthors] : ex.blockedAuthors;
    const exclusions = { authorIds, itemIds: ex.itemIds, authorWeights: ex.authorWeights };
    return { lexemes, matches: await recall.matches({ ...r, readerId, lexemes, nowMs, exclusions }) };
  }
  const weight = (a: string) => ex.authorWeight(a);
  return {
    lexemes,
    matches: matchPool(pool, lexemes, { nowMs, decay: r.decay, horizonMs: r.horizonMs, limit: r.limit, weight }),
  };
}
