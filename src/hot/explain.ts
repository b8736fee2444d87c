/**
 * The hot list's explain (docs/explain.md): why an item is or is not in `GET /v1/hot` of a reader now,
 * with the hot-ranking design's score taken apart (domain.ts `hotScoreParts`: pv, uv, weighted views, age in hours, the
 * decay, the score) and its rank in the current snapshot.
 *
 * Order of the rules (as `GET /v1/hot` applies them): outside_window (published outside the range asked
 * for, default `[now − 72h, now]`) → not_ranked (not in the current snapshot: no counted view, or below the
 * ranking's cap) → muted_author → muted_word → language (the reader's preferences, the only exclusions
 * the hot list applies: it is the same list for everyone else).
 *
 * Writes nothing: no view, the exclusions read without a cache fill; the snapshot is the one
 * `GET /v1/hot` would use (computed and cached in process when stale, as that route does).
 */
import type { ExclusionSource } from '../kernel/exclusion-source.js';
import { findingRule, outsideWindow, preferenceRules, type ExplainRule, type Explanation } from '../kernel/explain.js';
import type { Item } from '../kernel/items/item.js';
import { DEFAULT_RANGE, hotScoreParts, hoursSincePublish, parseRange } from './domain.js';
import type { HotCounters } from './hot-counters.js';
import type { HotRanking } from './service.js';

/** What the hot explain reads. */
export interface HotExplainDeps {
  ranking: HotRanking;
  counters: HotCounters;
  exclusions: ExclusionSource;
}

/** The hot list's explain (see the module doc). */
export class HotExplain {
  constructor(private readonly deps: HotExplainDeps) {}

  /**
   * Why `record` is or is not in the hot list of `readerId` at `nowMs` over `range` (`GET /v1/hot`'s `range`,
   * default 72h; the caller checked it).
   * @param record the live item (the app's explain looks it up: unknown → `NOT_FOUND`, deleted → the `deleted` rule).
   * @throws store errors.
   */
  async explain(readerId: string, record: Item, nowMs: number, range = DEFAULT_RANGE): Promise<Explanation> {
    const itemId = record.id;
    const rangeMs = parseRange(range) ?? parseRange(DEFAULT_RANGE)!;
    const [snap, ex] = await Promise.all([
      this.deps.ranking.snapshotAt(nowMs),
      this.deps.exclusions.forReaderReadOnly(readerId, nowMs),
    ]);
    const rules: ExplainRule[] = [];
    const inRange = record.publishedAt >= nowMs - rangeMs && record.publishedAt <= nowMs;
    if (!inRange)
      rules.push(outsideWindow(`It was not published in the last ${range}, the range of the hot list asked for.`));
    const entry = snap.entries.find((e) => e.item.id === itemId);
    if (!entry)
      rules.push({
        rule: 'not_ranked',
        reason: 'It is not in the current ranking: no counted view yet, or below the ranking’s cap.',
      });
    const findings = ex.findings(record, 'hot');
    rules.push(...preferenceRules(findings, readerId, 'hot'));
    const notes = findings.notes.map((f) => findingRule(f, readerId, 'hot'));
    const params = this.deps.ranking.settings.params;
    let score: Explanation['score'] = null;
    if (inRange) {
      // in the snapshot: its counters and time; otherwise the counters now (what the next snapshot reads)
      const [c] = entry ? [entry] : await this.deps.counters.counters([itemId]);
      const at = entry ? snap.computedAtMs : nowMs;
      const { score: value, ...parts } = hotScoreParts(c!.pv, c!.uv, hoursSincePublish(at, record.publishedAt), params);
      score = { value, parts };
    }
    const eligible = rules.length === 0;
    let rank: number | null = null;
    if (eligible) {
      // the list `GET /v1/hot` gives the reader: the snapshot in range, its preferences applied
      const page = await this.deps.ranking.top(rangeMs, Number.MAX_SAFE_INTEGER, nowMs);
      const listed = page.entries.filter((e) => ex.itemReason(e.item, 'hot') === null);
      rank = listed.findIndex((e) => e.item.id === itemId) + 1 || null;
    }
    return { feed: 'hot', readerId, itemId, eligible, rules, notes, score, rank, atMs: nowMs };
  }
}
