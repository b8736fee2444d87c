/**
 * DiscoverIndex port: what the discover feed (docs/discover.md) reads — the three phases' candidate streams,
 * item embeddings, and the reader signals its embedding is built from. One implementation,
 * PostgresDiscoverIndex (adapters/postgres-discover-index.ts: SQL on PGlite or a server), over a
 * VectorSearch (vector-search.ts: pgvector, or the in-process usearch index) for phase 2.
 *
 * Contract (test/contracts/discover-index.contract.ts, run by test/discover/discover-index.test.ts against
 * pgvector on PGlite, the in-process index on PGlite and on the PostgreSQL server):
 * - Streams return live items published at or before `untilMs`, in their order, strictly after the
 *   given position, at most `limit`; fewer than `limit` means the stream is exhausted.
 *   - `followed`: authors the reader follows, by (published_at, id) descending;
 *   - `newest`: every author but the reader's followed ones and the reader itself, same order;
 *   - `nearest`: items by exact cosine to the query (int8 codes), descending, ties by id ascending
 *     (byte order), above `minSimilarity` — found by the vector search, which is exact up to its
 *     exact-scan size and approximate above it (recall@20 ≥ 0.95 on the benchmark corpus); the
 *     filters are exact and applied after the search, which over-fetches until `limit` rows pass or
 *     the index is exhausted. Fewer than `limit` rows: nothing more is to be found.
 * - `live` returns the subset of the given ids that are items not deleted.
 * - `putEmbeddings` upserts in one transaction (all or nothing), each row stamped with the item write it
 *   reflects (`itemUpdateMs`, else `nowMs`); `missingEmbeddings` lists live items
 *   with no embedding, or a text embedding older than the item's last write. `writeEmbeddings` writes
 *   the same rows inside a caller's transaction (the items' publish), `embeddingsCommitted` then makes them
 *   searchable; `sweepOrphanEmbeddings` deletes rows whose item does not exist.
 * - `signals` returns the reader's newest signals at or before `untilMs` whose item has an embedding.
 */
import type { Item } from '../kernel/items/item.js';
import type { SqlTx } from '../kernel/sql/sql.js';

/** A candidate from a keyset-ordered stream. */
export interface StreamRow {
  id: string;
  authorId: string;
  /** The sort key: published_at (epoch ms) for phases 1 and 3. */
  key: number;
}

/** A phase-2 candidate: a StreamRow whose key is the exact cosine to the query. */
export type NearRow = StreamRow;

/** A phase-2 search (see {@link DiscoverIndex.nearest}). */
export interface NearestQuery {
  /** The reader's embedding (unit length, the configured dimension). */
  vector: Float32Array;
  /** Only items published at or before this (epoch ms; the session start). */
  untilMs: number;
  /** Whose feed it is: the reader's own items are left out. */
  readerId: string;
  /** Rows wanted. */
  limit: number;
  /** Resume strictly after this (cosine, id) position; null = from the nearest. */
  after: After | null;
  /** Rows already ranked before `after` (sizes the search so it reaches past them); default 0. */
  depth?: number;
  /** Only items whose cosine is above this. */
  minSimilarity: number;
}

/** Where a keyset stream resumes: after (key, id) in its descending order; null = from the top. */
export interface After {
  key: number;
  id: string;
}

/** (cosine desc, id asc in byte order): negative when `a` ranks first. */
export function byNearness(a: { key: number; id: string }, b: { key: number; id: string }): number {
  return b.key - a.key || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Whether `c` ranks strictly after position `after` in {@link byNearness} order. */
export function rankedAfter(c: { key: number; id: string }, after: After | null): boolean {
  return !after || c.key < after.key || (c.key === after.key && c.id > after.id);
}

/** An embedding to store. */
export interface EmbeddingRecord {
  itemId: string;
  /** int8 codes (see embedding.ts `quantize`). */
  vector: Int8Array;
  /** Who made it: the application ('client') or the built-in text embedder ('text'). */
  source: 'client' | 'text';
  /**
   * The item write it was computed from (the item's `update_time`, epoch ms); stored as the
   * embedding's update time. Omitted: the `nowMs` of `putEmbeddings` (the items route writes both
   * at the same `nowMs`).
   */
  itemUpdateMs?: number;
}

/** An item lacking a current embedding: what the text embedder reads, and the write it reflects. */
export type MissingEmbedding = Pick<Item, 'id' | 'title' | 'text' | 'tags' | 'updateTime'>;

/** A reader signal joined with the item's embedding. */
export interface SignalRow {
  vector: Int8Array;
  atMs: number;
  weight: number;
}

export interface DiscoverIndex {
  followed(readerId: string, untilMs: number, after: After | null, limit: number): Promise<StreamRow[]>;
  newest(readerId: string, untilMs: number, after: After | null, limit: number): Promise<StreamRow[]>;
  /**
   * Phase 2's stream (see the contract).
   * @throws FreshetError `INVALID_INPUT` when the query's length is not the index dimension.
   */
  nearest(q: NearestQuery): Promise<NearRow[]>;
  /**
   * Whether {@link nearest} answers now, without first waiting for the vector index to start (a
   * restart without a snapshot reads every embedding; pgvector's set-up builds its index). When not,
   * the start is under way: begun at open, or by this call when it had not begun or had failed.
   */
  nearestReady(): boolean;
  /** Which of `ids` are live items (not deleted): a cached phase-2 pool's re-check, one round trip. */
  live(ids: readonly string[]): Promise<Set<string>>;
  /**
   * Upserts embeddings at `nowMs` (their update time), in one transaction; searchable by this process
   * at once, by others after their next catch-up.
   * @throws FreshetError `INVALID_INPUT` when a vector's length is not the index dimension.
   */
  putEmbeddings(records: readonly EmbeddingRecord[], nowMs: number): Promise<void>;
  /**
   * Upserts embeddings as {@link putEmbeddings} does, inside `tx` — the transaction that writes their
   * items (a refused or failed publish writes no vector). Call {@link embeddingsCommitted}
   * once `tx` committed. @throws FreshetError `INVALID_INPUT` as putEmbeddings (before any statement).
   */
  writeEmbeddings(tx: SqlTx, records: readonly EmbeddingRecord[], nowMs: number): Promise<void>;
  /** Makes embeddings written by a committed {@link writeEmbeddings} searchable in this process at once. */
  embeddingsCommitted(records: readonly EmbeddingRecord[]): Promise<void>;
  /**
   * Deletes up to `limit` embedding rows whose item does not exist (left by a writer that crashed
   * between two transactions, before publishes wrote both in one). @returns how many were deleted.
   */
  sweepOrphanEmbeddings(limit: number): Promise<number>;
  /**
   * Live items lacking a current embedding (see the contract) with id > `afterId` (null: from the
   * first), by id ascending, at most `limit` — a keyset, so a caller walking it always terminates.
   */
  missingEmbeddings(afterId: string | null, limit: number): Promise<MissingEmbedding[]>;
  /** Makes every embedding committed before the call searchable (the in-process index's catch-up). */
  sync(): Promise<void>;
  /** Records reader signals (views, engagements); a repeat of (reader, item, at) is ignored. */
  addSignals(signals: readonly { readerId: string; itemId: string; atMs: number; weight: number }[]): Promise<void>;
  /** The reader's newest `limit` signals at or before `untilMs` with their items' embeddings. */
  signals(readerId: string, untilMs: number, limit: number): Promise<SignalRow[]>;
  /** Deletes a reader's signals and its given embedding (erase). @returns rows removed. */
  forgetReader(readerId: string): Promise<number>;
  /** The embedding the application gave the reader (unit length), or null. */
  readerEmbedding(readerId: string): Promise<Float32Array | null>;
  /** Stores (a vector) or removes (null) the reader's given embedding. @returns whether a row was removed (null). */
  setReaderEmbedding(readerId: string, vector: Float32Array | null, nowMs: number): Promise<boolean>;
  /** Rewrites the vector search's snapshots without deleted items (erase; `VectorSearch.purge`). @returns generations removed. */
  purgeSnapshots(): Promise<number>;
  /** A reader's retained signals (its views, as the discover design weighs them), newest first, at most `limit` (export). */
  signalsOf(readerId: string, limit: number): Promise<{ itemId: string; atMs: number; weight: number }[]>;
}
