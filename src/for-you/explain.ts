/**
 * The for-you feed's explain (docs/explain.md): why an item would or would not be in a refresh of a
 * reader now, every rule that removes it in the order a refresh applies them, its score from the feed's
 * own functions (scoring.ts, decay.ts), and its rank in a read-only run of the refresh's walk.
 *
 * Order of the rules (walk.ts `accept`, then the seen check, then the rules that read the item):
 * outside_window (published after now) → own → blocked_author → muted_author → not_interested → engaged →
 * recently_viewed → seen → muted_word → language.
 *
 * Writes nothing: the exclusions are read without filling their cache (`forReaderReadOnly`), the seen
 * filters are probed (`SeenFilter.probe`: no mark, no TTL refresh), the walk runs with those probes in
 * place of its seen checks and its cursor is read, never stored; no lease, no page cache pop or replace.
 */
import { fail } from '../kernel/errors.js';
import type { ExclusionSource, ReaderExclusions } from '../kernel/exclusion-source.js';
import {
  findingRule,
  outsideWindow,
  deletedExplanation,
  seenRule,
  type ExplainRule,
  type ExplainScore,
  type Explanation,
} from '../kernel/explain.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import type { Item } from '../kernel/items/item.js';
import type { SeenFilter, SeenProbe } from '../kernel/seen-filter.js';
import { arrangePages, authorCap } from '../kernel/author-diversity.js';
import { gaussDecay } from './decay.js';
import type { FeedCache } from './feed-cache.js';
import type { FillPool, Pool } from './fill-pool.js';
import { interestMatches, type InterestSettings } from './interests.js';
import type { Candidate, CandidateRecall } from './recall.js';
import { fillScore, matchedCount, matchScore, popularityFactor } from './scoring.js';
import { parseCursor, walk } from './walk.js';

/** The page size a rank is counted in (the for-you route's default `limit`): author diversity arranges pages of it. */
export const EXPLAIN_PAGE = 20;

/** What the explain reads (the feed's own ports). */
export interface ForYouExplainDeps {
  content: ContentStore;
  recall: CandidateRecall;
  seen: SeenFilter;
  /** The per-reader filter for items older than the window, when the feed has one (service.ts). */
  olderSeen?: SeenFilter;
  pool: FillPool;
  cache: FeedCache;
  exclusions: ExclusionSource;
}

/** A seen check that writes nothing: the filter's probe. */
const readOnly = (f: SeenFilter): Pick<SeenFilter, 'seen'> => ({
  seen: async (readerId, ids, nowMs) => (await f.probe(readerId, ids, nowMs)).map((p) => p.seen),
});

/** The for-you explain (see the module doc). */
export class ForYouExplain {
  constructor(
    private readonly deps: ForYouExplainDeps,
    private readonly settings: InterestSettings,
  ) {}

  /**
   * Why `itemId` would or would not be in a refresh of `readerId` at `nowMs`.
   * @throws FreshetError `NOT_FOUND` for an id the store never held; `INVALID_ID`; store errors.
   */
  async explain(readerId: string, itemId: string, nowMs: number): Promise<Explanation> {
    const record = await this.deps.content.getItemRecord(itemId);
    if (!record) throw fail('NOT_FOUND', `no item ${itemId}`);
    if (record.deleted) return deletedExplanation('for-you', readerId, itemId, nowMs);
    const item: Item = record;
    const [interests, ex, pool] = await Promise.all([
      this.deps.content.getInterests(readerId),
      this.deps.exclusions.forReaderReadOnly(readerId, nowMs),
      this.deps.pool.get(nowMs),
    ]);
    const { lexemes, matches } = await interestMatches(this.deps.recall, this.settings, {
      readerId,
      interests,
      ex,
      nowMs,
      pool,
    });
    const future = item.publishedAt > nowMs;
    const rules = await this.rules(readerId, item, ex, nowMs, future);
    const score = future ? null : await this.score(item, ex, lexemes, nowMs);
    const eligible = rules.length === 0;
    const rank = eligible ? await this.rank(readerId, itemId, ex, lexemes, matches, pool, nowMs) : null;
    const notes = ex.findings(item, 'for-you').notes.map((f) => findingRule(f, readerId, 'for-you'));
    return { feed: 'for-you', readerId, itemId, eligible, rules, notes, score, rank, atMs: nowMs };
  }

  /** Every rule that removes the item, in the walk's order (see the module doc). */
  private async rules(
    readerId: string,
    item: Item,
    ex: ReaderExclusions,
    nowMs: number,
    future: boolean,
  ): Promise<ExplainRule[]> {
    const out: ExplainRule[] = [];
    if (future) out.push(outsideWindow('It is published after now: the recall reads items up to now only.'));
    const found = ex.findings(item, 'for-you').rules.map((f) => findingRule(f, readerId, 'for-you'));
    const byItem = found.filter((r) => r.rule === 'muted_word' || r.rule === 'language');
    out.push(...found.filter((r) => !byItem.includes(r)));
    const seen = seenRule(await this.probe(readerId, item, nowMs), readerId);
    if (seen) out.push(seen);
    out.push(...byItem);
    return out;
  }

  /** The seen filter's probe; for an item older than the window, the per-reader filter's too (as the walk). */
  private async probe(readerId: string, item: Item, nowMs: number): Promise<SeenProbe> {
    const [probe] = await this.deps.seen.probe(readerId, [item.id], nowMs);
    const older = this.deps.olderSeen;
    if (probe!.seen || !older || item.publishedAt >= nowMs - this.settings.recall.horizonMs) return probe!;
    const [old] = await older.probe(readerId, [item.id], nowMs);
    return old!.seen ? old! : probe!;
  }

  /**
   * The item's score, from the feed's functions: an interest match ranks by lexemes matched × decay ×
   * author weight (matchScore); any other item by decay × ln(2 + popularity) (fillScore, the pool's
   * order) × the author weight its round is sorted by.
   */
  private async score(
    item: Item,
    ex: ReaderExclusions,
    lexemes: readonly string[],
    nowMs: number,
  ): Promise<ExplainScore> {
    const [pooled] = await this.deps.recall.pooled([item.id]);
    const relevance = pooled ? matchedCount(pooled, new Set(lexemes)) : 0;
    const decay = gaussDecay(this.settings.recall.decay, nowMs, item.publishedAt);
    const weight = ex.itemWeight(item);
    const popularity = popularityFactor(item.popularity);
    const value = relevance > 0 ? matchScore(relevance, decay, weight) : fillScore(decay, item.popularity) * weight;
    return { value, parts: { relevance, decay, author_penalty: weight, popularity } };
  }

  /**
   * The item's 1-based position in a refresh now: the walk of a refresh from the top (the reader's cursor
   * read, not moved) with read-only seen checks, arranged into pages of {@link EXPLAIN_PAGE} by the
   * reader's author cap as a refresh arranges them; null when the walk does not reach it.
   */
  private async rank(
    readerId: string,
    itemId: string,
    ex: ReaderExclusions,
    lexemes: string[],
    matches: readonly Candidate[],
    pool: Pool,
    nowMs: number,
  ): Promise<number | null> {
    const r = this.settings.recall;
    const { seen, olderSeen, recall, content } = this.deps;
    const out = await walk(
      {
        recall,
        seen: readOnly(seen),
        olderSeen: olderSeen && readOnly(olderSeen),
        hydrate: (ids) => content.getItems(ids),
      },
      {
        readerId,
        nowMs,
        ex,
        matches,
        lexemes,
        decay: r.decay,
        pool,
        cursor: parseCursor(await this.deps.cache.getCursor(readerId)),
        resume: false,
        want: r.limit,
        page: EXPLAIN_PAGE,
        chunk: r.limit,
        horizonMs: r.horizonMs,
      },
    );
    const cap = authorCap(ex.maxPerAuthor, EXPLAIN_PAGE);
    const at = arrangePages(out.clean, EXPLAIN_PAGE, cap, !out.exhausted).ordered.findIndex((c) => c.id === itemId);
    return at < 0 ? null : at + 1;
  }
}
