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
import type { ReaderExclusions } from '../kernel/exclusion-source.js';
import { findingRule, outsideWindow, rankedFeedRules, type ExplainScore, type Explanation } from '../kernel/explain.js';
import type { Item } from '../kernel/items/item.js';
import type { SeenFilter, SeenProbe } from '../kernel/seen-filter.js';
import { gaussDecay } from './decay.js';
import type { Pool } from './fill-pool.js';
import type { ForYouDeps } from './service.js';
import { interestMatches, type InterestSettings } from './interests.js';
import type { Candidate } from './recall.js';
import { fillScore, matchedCount, matchScore, popularityFactor } from './scoring.js';
import { parseCursor, refreshWalkInput, servingOrder, walk } from './walk.js';
import { sourcedCandidates, type SourcedCandidate } from './sources.js';

/** The page size a rank is counted in (the for-you route's default `limit`): author diversity arranges pages of it. */
export const EXPLAIN_PAGE = 20;

/** What the explain reads: the feed's own ports (service.ts), less the metrics and the log. */
export type ForYouExplainDeps = Pick<
  ForYouDeps,
  'content' | 'recall' | 'seen' | 'olderSeen' | 'pool' | 'cache' | 'exclusions' | 'sources' | 'log'
>;

/** A seen check that writes nothing: the filter's probe (`unseen`: an id it answers unseen whatever it holds). */
const readOnly = (f: SeenFilter, unseen?: string): Pick<SeenFilter, 'seen'> => ({
  seen: async (readerId, ids, nowMs) =>
    (await f.probe(readerId, ids, nowMs)).map((p, i) => p.seen && ids[i] !== unseen),
});

/** The for-you explain (see the module doc). */
export class ForYouExplain {
  constructor(
    private readonly deps: ForYouExplainDeps,
    private readonly settings: InterestSettings,
  ) {}

  /**
   * Why `item` would or would not be in a refresh of `readerId` at `nowMs`.
   * @param item the live item (the app's explain looks it up: unknown → `NOT_FOUND`, deleted → the `deleted` rule).
   * @throws store errors.
   */
  async explain(readerId: string, item: Item, nowMs: number): Promise<Explanation> {
    const itemId = item.id;
    const [interests, ex, pool] = await Promise.all([
      this.deps.content.getInterests(readerId),
      this.deps.exclusions.forReaderReadOnly(readerId, nowMs),
      this.deps.pool.get(nowMs),
    ]);
    const r = this.settings.recall;
    const [{ lexemes, matches: interest }, sourced] = await Promise.all([
      interestMatches(this.deps.recall, this.settings, { readerId, interests, ex, nowMs, pool }),
      sourcedCandidates(
        { sources: this.deps.sources ?? [], content: this.deps.content, log: this.deps.log },
        { readerId, nowMs, limit: r.limit, decay: r.decay, horizonMs: r.horizonMs },
      ),
    ]);
    const matches = [...sourced, ...interest]; // as a refresh walks them (service.ts `matches`)
    const future = item.publishedAt > nowMs;
    const findings = ex.findings(item, 'for-you');
    const outside = future ? outsideWindow('It is published after now: the recall reads items up to now only.') : null;
    const probe = await this.probe(readerId, item, nowMs);
    const rules = rankedFeedRules(findings, probe, readerId, 'for-you', outside);
    const learned = sourced.find((c) => c.id === itemId);
    const score = future
      ? null
      : learned
        ? await this.sourcedScore(readerId, item, learned, nowMs)
        : await this.score(item, ex, lexemes, nowMs);
    const eligible = rules.length === 0;
    const ranked = (unseen?: string) => this.rank(readerId, itemId, ex, lexemes, matches, pool, nowMs, unseen);
    const rank = eligible ? await ranked() : null;
    // a served card: when, and where it would rank now were it alone not served yet (only seen removes it)
    const onlySeen = rules.length === 1 && rules[0]!.rule === 'seen';
    const served = probe.seen ? { day: probe.day, rankIfUnseen: onlySeen ? await ranked(itemId) : null } : null;
    const notes = findings.notes.map((f) => findingRule(f, readerId, 'for-you'));
    return { feed: 'for-you', readerId, itemId, eligible, rules, notes, score, rank, served, atMs: nowMs };
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
   * order) × the author weight its round is sorted by. `parts.source` names the walk's stage that reaches
   * it: `interest_match` and `fill` inside the decay window (ordered by `value`), `older` past it — those
   * come after the window's items, newest first (`parts.published_at_ms`), and `value` (a decay near 0)
   * does not order them.
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
    const inWindow = item.publishedAt >= nowMs - this.settings.recall.horizonMs;
    const source = !inWindow ? 'older' : relevance > 0 ? 'interest_match' : 'fill';
    const parts = { source, relevance, decay, author_penalty: weight, popularity };
    // past the window the walk serves newest first: the publication time orders it, not a decay near 0
    return { value, parts: inWindow ? parts : { ...parts, published_at_ms: item.publishedAt } };
  }

  /**
   * The score of an item a recall source found (sources.ts): its fused score × decay, each source's part,
   * and the sources' evidence — the learned source says which of the reader's items made it a neighbour
   * ("readers who engaged with … also engaged with this"), its neighbour and factor scores.
   */
  private async sourcedScore(readerId: string, item: Item, c: SourcedCandidate, nowMs: number): Promise<ExplainScore> {
    const decay = gaussDecay(this.settings.recall.decay, nowMs, item.publishedAt);
    const parts: Record<string, number | string> = { source: Object.keys(c.parts).join('+'), decay };
    for (const [name, part] of Object.entries(c.parts)) parts[`${name}_part`] = part;
    Object.assign(parts, c.evidence);
    for (const s of this.deps.sources ?? []) {
      if (!(s.name in c.parts) || !s.explain) continue;
      Object.assign(parts, (await s.explain(readerId, item.id, this.settings.recall.limit)) ?? {});
    }
    return { value: c.score, parts };
  }

  /**
   * The item's 1-based position in a refresh now: the walk of a refresh from the top (the reader's cursor
   * read, not moved) with read-only seen checks, arranged into pages of {@link EXPLAIN_PAGE} by the
   * reader's author cap as a refresh arranges them; null when the walk does not reach it. `unseen`: an id
   * the seen checks answer unseen (a served item ranked as if it were not).
   */
  private async rank(
    readerId: string,
    itemId: string,
    ex: ReaderExclusions,
    lexemes: string[],
    matches: readonly Candidate[],
    pool: Pool,
    nowMs: number,
    unseen?: string,
  ): Promise<number | null> {
    const r = this.settings.recall;
    const { seen, olderSeen, recall, content } = this.deps;
    const cursor = parseCursor(await this.deps.cache.getCursor(readerId));
    const out = await walk(
      {
        recall,
        seen: readOnly(seen, unseen),
        olderSeen: olderSeen && readOnly(olderSeen, unseen),
        hydrate: (ids) => content.getItems(ids),
      },
      refreshWalkInput(r, { readerId, nowMs, ex, matches, lexemes, pool, cursor, resume: false, page: EXPLAIN_PAGE }),
    );
    const at = servingOrder(out.clean, EXPLAIN_PAGE, ex.maxPerAuthor).findIndex((c) => c.id === itemId);
    return at < 0 ? null : at + 1;
  }
}
