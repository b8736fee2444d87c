/**
 * Collaborative recall: a reader's candidates from what readers like them engaged with — the
 * co-engagement neighbours of the reader's own recent positive signals (Gorse's "item-to-item" recall;
 * Sarwar, Karypis, Konstan & Riedl 2001, "Item-based collaborative filtering recommendation algorithms",
 * WWW, §3.2: a candidate's score is the sum of its similarities to the items the reader engaged with,
 * each weighted by that engagement):
 *
 *   score(j) = Σ_{i ∈ history(reader)} weight(reader, i) · similarity(i, j)
 *
 * over the reader's newest `historyCap` pairs (the same cap the builder keeps), the items the reader
 * already holds left out. Neighbour rows come from the {@link ModelStore} through an in-process LRU
 * (`rowCacheTtlMs`: a row the builder rewrote is read again after that), so a page's recall reads the
 * reader's history (one indexed query) and, once warm, no row. Each candidate carries its evidence: the
 * reader's items that contributed most, for explain.
 */
import { LRUCache } from 'lru-cache';
import { interactionWeight, type InteractionStore } from './interactions.js';
import type { ModelStore } from './model-store.js';
import { TopK } from './neighbours.js';
import { IdIndex } from './engagement-graph.js';
import type { FactorIndex } from './factor-model.js';

/** One collaborative candidate. */
export interface LearnedCandidate {
  itemId: string;
  /** Σ weight · similarity (see the module doc); > 0. */
  score: number;
  /** The reader's items that contributed most (up to 3), best first, with their share of the score. */
  because: { itemId: string; similarity: number; shared: number }[];
}

/** One candidate of {@link LearnedRecall.recommend}: both learners' evidence, fused. */
export interface Recommendation {
  itemId: string;
  /** The fused score: neighbour score / the best neighbour score + factor score / the best factor score. */
  score: number;
  /** Σ weight · similarity over the reader's items (0: not a neighbour of any). */
  neighbourScore: number;
  /** The dot product of the reader's folded-in vector and the item's (null: not among the factor candidates). */
  factorScore: number | null;
  /** The reader's items that contributed most to the neighbour score. */
  because: LearnedCandidate['because'];
}

/** Tunables of the recall; durations in ms. */
export interface LearnedRecallSettings {
  /** The reader's newest pairs read (the builder's history cap). */
  historyCap: number;
  /** How long a neighbour row is served from the in-process cache. */
  rowCacheTtlMs: number;
  /** Neighbour rows the cache holds at most (a row of 100 neighbours: ~1.3 KB packed). */
  rowCacheRows: number;
}

/** A neighbour row as the recall keeps it: item numbers (its `IdIndex`), similarities, shared readers. */
interface CompactRow {
  items: Int32Array;
  scores: Float32Array;
  shared: Int32Array;
}

/** Reader → candidates by co-engagement (see the module doc). */
export class LearnedRecall {
  private readonly rows: LRUCache<string, CompactRow>;
  /** Item ids ↔ numbers of every row this process read (it grows with the catalog: ~60 B an item). */
  private readonly ids = new IdIndex();
  /** Scratch of {@link candidates}: a score per item number, and the numbers touched. */
  private sums: Float64Array = new Float64Array(1024);

  constructor(
    private readonly interactions: InteractionStore,
    private readonly models: ModelStore,
    private readonly settings: LearnedRecallSettings,
    private readonly factors: FactorIndex | null = null,
  ) {
    this.rows = new LRUCache({ max: settings.rowCacheRows, ttl: settings.rowCacheTtlMs });
  }

  /** The reader's newest positive pairs (item id → weight), newest first. */
  async history(readerId: string): Promise<Map<string, number>> {
    const rows = await this.interactions.history(readerId, this.settings.historyCap);
    return new Map(rows.map((r) => [r.itemId, interactionWeight(r.kinds)]));
  }

  /**
   * The reader's best `limit` candidates by co-engagement, best first (ties: item id). [] for a reader
   * with no history or whose items have no neighbours yet.
   * @param history the reader's pairs when already read ({@link history}).
   */
  async candidates(readerId: string, limit: number, history?: Map<string, number>): Promise<LearnedCandidate[]> {
    const h = history ?? (await this.history(readerId));
    if (h.size === 0) return [];
    const rows = await this.neighbourRows([...h.keys()]);
    const own = new Set<number>();
    for (const id of h.keys()) own.add(this.ids.intern(id));
    if (this.sums.length < this.ids.size) this.sums = new Float64Array(Math.max(this.ids.size, this.sums.length * 2));
    const sums = this.sums;
    const touched: number[] = [];
    // a dense score per item number, then one top-k selection: no map of strings, no sort of every candidate
    for (const [itemId, weight] of h) {
      const row = rows.get(itemId);
      if (!row) continue;
      for (let k = 0; k < row.items.length; k++) {
        const j = row.items[k]!;
        if (own.has(j)) continue;
        if (sums[j] === 0) touched.push(j);
        sums[j]! += weight * row.scores[k]!;
      }
    }
    const top = new TopK(limit, this.ids.ids);
    for (const j of touched) {
      if (sums[j]! >= top.floor) top.offer(j, sums[j]!, 0);
      sums[j] = 0;
    }
    const out = top
      .sorted()
      .map((c) => ({ itemId: c.itemId, score: c.score, because: [] as LearnedCandidate['because'] }));
    this.addEvidence(out, h, rows);
    return out;
  }

  /** The evidence of the kept candidates: the reader's items whose rows hold them, the 3 most similar. */
  private addEvidence(out: LearnedCandidate[], h: Map<string, number>, rows: Map<string, CompactRow>): void {
    const kept = new Map(out.map((c) => [this.ids.get(c.itemId)!, c]));
    for (const itemId of h.keys()) {
      const row = rows.get(itemId);
      if (!row) continue;
      for (let k = 0; k < row.items.length; k++)
        kept.get(row.items[k]!)?.because.push({ itemId, similarity: row.scores[k]!, shared: row.shared[k]! });
    }
    for (const c of out) c.because = c.because.sort((a, b) => b.similarity - a.similarity).slice(0, 3);
  }

  /**
   * The reader's best `limit` items by both learners, best first: the co-engagement candidates and the
   * factor model's, each score divided by its list's best and summed (a candidate only one learner found
   * gets that learner's part alone). Normalised-score fusion (Fox & Shaw 1994, "Combination of multiple
   * searches", CombSUM over max-normalised scores): measured beside reciprocal-rank fusion on
   * ml-latest-small in docs/learning.md. [] for a reader with no history.
   */
  async recommend(readerId: string, limit: number): Promise<Recommendation[]> {
    const history = await this.history(readerId);
    if (history.size === 0) return [];
    const [near, factor] = await Promise.all([
      this.candidates(readerId, limit, history),
      this.factors ? this.factors.candidates(history, limit) : Promise.resolve([]),
    ]);
    const out = new Map<string, Recommendation>();
    const nMax = near[0]?.score ?? 1;
    for (const c of near)
      out.set(c.itemId, {
        itemId: c.itemId,
        score: c.score / nMax,
        neighbourScore: c.score,
        factorScore: null,
        because: c.because,
      });
    const fMax = factor[0]?.score ?? 1;
    for (const c of factor) {
      const part = fMax > 0 ? Math.max(0, c.score) / fMax : 0;
      const r = out.get(c.itemId);
      if (r) {
        r.score += part;
        r.factorScore = c.score;
      } else out.set(c.itemId, { itemId: c.itemId, score: part, neighbourScore: 0, factorScore: c.score, because: [] });
    }
    return [...out.values()].sort((a, b) => b.score - a.score || (a.itemId < b.itemId ? -1 : 1)).slice(0, limit);
  }

  /** Neighbour rows of `itemIds`: the cache, then one store read for the misses. */
  private async neighbourRows(itemIds: readonly string[]): Promise<Map<string, CompactRow>> {
    const out = new Map<string, CompactRow>();
    const misses: string[] = [];
    for (const id of itemIds) {
      const row = this.rows.get(id);
      if (row) out.set(id, row);
      else misses.push(id);
    }
    if (misses.length === 0) return out;
    const read = await this.models.neighbours(misses);
    for (const id of misses) {
      const list = read.get(id) ?? [];
      const row: CompactRow = {
        items: Int32Array.from(list, (n) => this.ids.intern(n.itemId)),
        scores: Float32Array.from(list, (n) => n.score),
        shared: Int32Array.from(list, (n) => n.shared),
      };
      this.rows.set(id, row);
      out.set(id, row);
    }
    return out;
  }

  /** Forgets cached rows (after a build in this process, or an erase). */
  clear(): void {
    this.rows.clear();
  }
}
