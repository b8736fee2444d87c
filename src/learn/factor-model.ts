/**
 * The learned vectors of the learning room: implicit ALS (als.ts) trained on the engagement graph on a
 * schedule, its item vectors stored (ModelStore) for every serving process, and a reader's vector folded
 * in at request time from its current history — so a reader's vector is never stored (nothing to erase)
 * and is current the moment the reader views or engages with something.
 *
 * - {@link FactorTrainer} (the builder's process): trains when the graph moved since the last training,
 *   yielding to the event loop every 256 rows solved (als.ts); saves the model as the new current one.
 * - {@link FactorIndex} (every process): loads the current model when its version changes (polled), and
 *   answers a reader's best items by dot product — an exact scan of the item vectors by usearch's native
 *   (SIMD) `exactSearch` with the inner-product metric: n · f multiply-adds, 200k items × 64 ≈ 13 M, a
 *   few ms (bench/learn.ts measures it).
 *
 * Items without engagements have no learned vector: they stay reachable through their text or app
 * embedding (the discover feed's vector index), the interest matches and the fill pool — the hybrid.
 */
import type { Logger } from '../kernel/observability.js';
import { foldIn, gram, trainAls, type AlsSettings, type Csr } from './als.js';
import type { CompactGraph } from './engagement-graph.js';
import type { LearnBuilder } from './builder.js';
import type { ModelStore, StoredModel } from './model-store.js';
import { MetricKind, exactSearch, type Matches } from '../kernel/usearch.js';

/** One item a reader's vector scores. */
export interface FactorCandidate {
  itemId: string;
  /** The dot product of the reader's and the item's vectors. */
  score: number;
}

/** The reader × item matrix of a compact graph (values: interaction weights), its items all held. */
export function csrOf(g: CompactGraph): { m: Csr; itemIds: string[] } {
  // only items some reader holds get a column (a dropped item keeps its number in the graph)
  const column = new Int32Array(g.items).fill(-1);
  const itemIds: string[] = [];
  for (let i = 0; i < g.items; i++)
    if (g.itemPtr[i + 1]! > g.itemPtr[i]!) {
      column[i] = itemIds.length;
      itemIds.push(g.itemIds[i]!);
    }
  const idx = new Int32Array(g.readerItems.length);
  for (let k = 0; k < idx.length; k++) idx[k] = column[g.readerItems[k]!]!;
  return {
    m: { rows: g.readers, cols: itemIds.length, ptr: g.readerPtr, idx, val: g.readerWeights },
    itemIds,
  };
}

/** Trains the factor model in the builder's process (see the module doc). */
export class FactorTrainer {
  private trainedGeneration = -1;
  private version = 0;
  private stopping = false;

  constructor(
    private readonly builder: LearnBuilder,
    private readonly models: ModelStore,
    private readonly settings: AlsSettings,
    private readonly log: Logger,
  ) {}

  /** Ends a training in progress at its next alternation (unsaved), and every later one at once (closing). */
  stop(): void {
    this.stopping = true;
  }

  /**
   * Trains and saves a model when the graph changed since the last one (no-op otherwise).
   * @returns the saved model, or null when nothing was trained.
   */
  async train(nowMs: number): Promise<StoredModel | null> {
    if (this.stopping) return null;
    const generation = this.builder.generation;
    const g = this.builder.current.compact();
    if (generation === this.trainedGeneration || g.readerItems.length === 0) return null;
    const { m, itemIds } = csrOf(g);
    const started = Date.now();
    const factors = await trainAls(m, this.settings, async () => {
      await new Promise((r) => setImmediate(r));
      if (this.stopping) throw new TrainingStopped();
    }).catch((err: unknown) => {
      if (err instanceof TrainingStopped) return null;
      throw err;
    });
    if (!factors) return null;
    // versions only grow, whatever the clock did since the stored model (a restart, a replay's virtual time)
    const stored = await this.models.currentModel();
    this.version = Math.max(this.version + 1, (stored?.version ?? 0) + 1, nowMs);
    const model: StoredModel = {
      version: this.version,
      factors: this.settings.factors,
      trainedAtMs: nowMs,
      settings: { kind: 'implicit-als', ...this.settings },
    };
    await this.models.saveModel(model, itemIds, factors.items);
    this.trainedGeneration = generation;
    this.log.info(
      { items: itemIds.length, pairs: m.idx.length, ms: Date.now() - started },
      'learn: factor model trained',
    );
    return model;
  }
}

/** Thrown inside a training that {@link FactorTrainer.stop} ended. */
class TrainingStopped extends Error {}

/** The current model's item vectors in one process, and a reader's best items by them. */
export class FactorIndex {
  private model: {
    stored: StoredModel;
    row: Map<string, number>;
    itemIds: string[];
    vectors: Float32Array;
    yty: Float64Array;
  } | null = null;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | null = null;

  constructor(
    private readonly models: ModelStore,
    private readonly settings: Pick<AlsSettings, 'regularization' | 'alpha'> & { pollMs: number },
    private readonly now: () => number,
  ) {}

  /** The loaded model (null before the first training). */
  get current(): StoredModel | null {
    return this.model?.stored ?? null;
  }

  /** Loads the current model when its version changed (at most once per `pollMs`, one load at a time). */
  async refresh(force = false): Promise<void> {
    if (!force && this.now() - this.checkedAt < this.settings.pollMs) return;
    this.loading ??= (async () => {
      this.checkedAt = this.now();
      const stored = await this.models.currentModel();
      if (!stored || stored.version === this.model?.stored.version) return;
      const { itemIds, vectors } = await this.models.loadVectors(stored.version);
      this.model = {
        stored,
        itemIds,
        vectors,
        row: new Map(itemIds.map((id, k) => [id, k])),
        yty: gram(vectors, itemIds.length, stored.factors),
      };
    })().finally(() => {
      this.loading = null;
    });
    await this.loading;
  }

  /**
   * The reader's best `limit` items by its folded-in vector, best first (ties: item id), leaving out the
   * items of its history. [] before the first model, or when none of the history is in the model.
   * @param history the reader's items and interaction weights.
   */
  async candidates(history: ReadonlyMap<string, number>, limit: number): Promise<FactorCandidate[]> {
    await this.refresh();
    const m = this.model;
    if (!m || history.size === 0) return [];
    const entries: { row: number; weight: number }[] = [];
    for (const [itemId, weight] of history) {
      const row = m.row.get(itemId);
      if (row !== undefined) entries.push({ row, weight });
    }
    const f = m.stored.factors;
    const x = foldIn(m.vectors, m.yty, entries, { ...this.settings, factors: f });
    if (!x) return [];
    // usearch's exact scan (native SIMD): inner-product distance 1 − x·y, nearest first
    const want = Math.min(m.itemIds.length, limit + history.size);
    const found = exactSearch(m.vectors, x, f, want, MetricKind.IP, 1) as Matches;
    const out: FactorCandidate[] = [];
    for (let k = 0; k < found.keys.length && out.length < limit; k++) {
      const itemId = m.itemIds[Number(found.keys[k])]!;
      if (!history.has(itemId)) out.push({ itemId, score: 1 - found.distances[k]! });
    }
    return out;
  }
}
