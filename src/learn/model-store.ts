/**
 * ModelStore port: what the learning room computes in the background and every serving process reads —
 * each item's co-engagement neighbours, the engine's own popularity, and the factor model's item vectors.
 * PostgreSQL holds them (adapters/postgres-model-store.ts), so a process that never builds (a second
 * `serve` replica) serves what the builder wrote. Store failures throw FreshetError `STORE_UNAVAILABLE`.
 */
import type { Neighbour } from './neighbours.js';

/** A trained factor model as stored. */
export interface StoredModel {
  /** Increasing with every training (epoch ms of the training, unique). */
  version: number;
  /** Dimensions of a vector. */
  factors: number;
  trainedAtMs: number;
  /** The hyper-parameters it was trained with (explain and operators read them). */
  settings: Record<string, number | string>;
}

/** Contract: test/contracts/model-store.contract.ts. */
export interface ModelStore {
  /** Replaces the rows of these items (an empty list deletes the item's row). */
  writeNeighbours(
    rows: readonly { itemId: string; neighbours: readonly Neighbour[] }[],
    builtAtMs: number,
  ): Promise<void>;
  /** The stored rows of these items (absent: none). */
  neighbours(itemIds: readonly string[]): Promise<Map<string, Neighbour[]>>;
  /** Item ids that hold a neighbour row (the builder's reconciliation after a reload). */
  neighbourItems(): Promise<string[]>;
  /** Upserts items' popularity (log scores, popularity.ts); `null` deletes. */
  writePopularity(rows: readonly { itemId: string; logScore: number | null }[]): Promise<void>;
  /** The `limit` items of highest popularity, best first. */
  topPopular(limit: number): Promise<{ itemId: string; logScore: number }[]>;
  /** The stored popularity of these items (absent: none). */
  popularityOf(itemIds: readonly string[]): Promise<Map<string, number>>;
  /** Stores a trained model (its item vectors, `factors` float32 each) and makes it current; older models go. */
  saveModel(model: StoredModel, itemIds: readonly string[], vectors: Float32Array): Promise<void>;
  /** The current model, or null before the first training. */
  currentModel(): Promise<StoredModel | null>;
  /** The item vectors of a model, in one matrix (row k is `itemIds[k]`). */
  loadVectors(version: number): Promise<{ itemIds: string[]; vectors: Float32Array }>;
  /** Removes every row of these items (their author was erased). @returns rows removed. */
  eraseItems(itemIds: readonly string[]): Promise<number>;
}
