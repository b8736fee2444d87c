/**
 * VectorSearch port: the nearest-neighbour search behind the discover feed's phase 2 (docs/discover.md) — given
 * a query direction, the stored item embeddings closest to it by cosine. PostgreSQL's
 * `item_embeddings` table is the truth; an implementation is an index over it:
 * - `PgvectorSearch` (adapters/pgvector-search.ts): HNSW inside PostgreSQL when the server has the
 *   `vector` extension;
 * - `InProcessSearch` (adapters/in-process-search.ts): usearch in the serving process (exact int8
 *   scan up to a size, HNSW above it), kept current from the table.
 *
 * The search knows embeddings only: whether an item is live, published by the session start or the
 * reader's own is decided after it, exactly, by PostgresDiscoverIndex.nearest (which over-fetches).
 */

/** A stored embedding the search found. */
export interface VectorHit {
  itemId: string;
  /** Its int8 codes (the exact cosine to the query is computed from them). */
  vector: Int8Array;
}

/** What an index is and holds, for logs, `/metrics`-style reports and the benchmarks. */
export interface VectorSearchStats {
  /** Which index answers: `pgvector`, or the in-process one in its `exact` or `hnsw` mode. */
  kind: 'pgvector' | 'exact' | 'hnsw';
  /** Embeddings indexed (pgvector: an estimate from the planner's statistics). */
  size: number;
  /** Estimated bytes the index holds privately in this process (0 for pgvector: the server holds it). */
  bytes: number;
  /**
   * In-process, shared (`FRESHET_DISCOVER_SHARED_INDEX`): bytes of the snapshot files the index views
   * memory-mapped — one copy in the host's page cache for every process viewing the same generation.
   */
  sharedBytes?: number;
  /** In-process, shared: the snapshot generation viewed (the same in every process once caught up). */
  generation?: string;
  /** In-process: an HNSW graph being built in the background — slots added so far of the slots to add. */
  building?: { done: number; total: number };
}

export interface VectorSearch {
  /** Embedding dimension the index holds; queries of another length are rejected. */
  readonly dim: number;
  /**
   * Whether a search answers now, without first waiting for the index to start (in-process: the
   * snapshot loaded or every embedding read; pgvector: set up). Once true, stays true.
   */
  isReady(): boolean;
  /** Starts the index in the background when it has not started, or its start failed; otherwise a no-op. */
  warm(): void;
  /**
   * At most `k` stored embeddings nearest to `query` by cosine, about best first (exactly so in the
   * exact mode; an approximate index may miss some and mis-order close ones — the caller re-ranks by
   * exact cosine). Fewer than `k`: every indexed embedding was returned. Before {@link isReady}, waits
   * for the index to start.
   * @param query length {@link dim}, not all zeros.
   * @throws FreshetError `INVALID_INPUT` when `query` has another length.
   */
  search(query: Float32Array, k: number): Promise<VectorHit[]>;
  /**
   * Brings the index up to date with the table (what other processes wrote, items deleted since);
   * resolves when what was committed before the call is searchable. A no-op for pgvector; the
   * in-process index also catches up by itself every `FRESHET_DISCOVER_SYNC_MS`.
   */
  sync(): Promise<void>;
  /** Tells the index about embeddings this process just committed (searchable at once). */
  wrote(records: readonly { itemId: string; vector: Int8Array }[]): void;
  stats(): VectorSearchStats;
  /**
   * Rewrites what the index keeps on disk without the embeddings deleted so far (an erase): the in-process
   * index's snapshots (InProcessSearch.purge). Nothing for pgvector (PostgreSQL holds it). @returns snapshot
   * generations removed.
   */
  purge(): Promise<number>;
  /** Stops background work and writes what a restart should not rebuild. Idempotent. */
  close(): Promise<void>;
}
