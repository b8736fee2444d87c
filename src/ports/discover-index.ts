/**
 * DiscoverIndex port: what the discover feed (note 3) reads from PostgreSQL — the three phases'
 * candidate streams, item embeddings with their sketches, and the reader signals its embedding is
 * built from. One SQL code path on PGlite and a PostgreSQL server (src/adapters/postgres/discover-index.ts).
 *
 * Contract (test/discover-index.test.ts, against PGlite and PostgreSQL):
 * - Streams return live items published at or before `untilMs`, in their order, strictly after the
 *   given position, at most `limit`; fewer than `limit` means the stream is exhausted.
 *   - `followed`: authors the reader follows, by (published_at, id) descending;
 *   - `newest`: every author but the reader's followed ones and the reader itself, same order;
 *   - `nearest`: items whose sketch falls in one of the probed bucket ranges, the `pool` closest by
 *     sketch Hamming distance, returned with their int8 vectors (the caller ranks them by cosine).
 * - `live` returns the subset of the given ids that are items not deleted.
 * - `putEmbeddings` upserts in one transaction (all or nothing), each row stamped with the item write it
 *   reflects (`itemUpdateMs`, else `nowMs`); `missingEmbeddings` lists live items
 *   with no embedding, or a text embedding older than the item's last write.
 * - `signals` returns the reader's newest signals at or before `untilMs` whose item has an embedding.
 */
import type { BucketRange } from '../domain/embedding.js';
import type { Item } from '../domain/item.js';

/** A candidate from a keyset-ordered stream. */
export interface StreamRow {
  id: string;
  authorId: string;
  /** The sort key: published_at (epoch ms) for phases 1 and 3. */
  key: number;
}

/** A candidate of the vector stream. */
export interface VectorRow {
  id: string;
  authorId: string;
  /** Its int8 embedding codes. */
  vector: Int8Array;
}

/** Where a keyset stream resumes: after (key, id) in its descending order; null = from the top. */
export interface After {
  key: number;
  id: string;
}

/** An embedding to store. */
export interface EmbeddingRecord {
  itemId: string;
  /** int8 codes (see domain/embedding.ts `quantize`). */
  vector: Int8Array;
  /** `bit(256)` sketch as a '0'/'1' string, and its 16-bit bucket. */
  sketch: string;
  bucket: number;
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
  nearest(q: { sketch: string; ranges: readonly BucketRange[]; untilMs: number; pool: number; readerId: string }): Promise<VectorRow[]>;
  /** Which of `ids` are live items (not deleted): a cached phase-2 pool's re-check, one round trip. */
  live(ids: readonly string[]): Promise<Set<string>>;
  /** Upserts embeddings at `nowMs` (their update time), in one transaction. */
  putEmbeddings(records: readonly EmbeddingRecord[], nowMs: number): Promise<void>;
  /**
   * Live items lacking a current embedding (see the contract) with id > `afterId` (null: from the
   * first), by id ascending, at most `limit` — a keyset, so a caller walking it always terminates.
   */
  missingEmbeddings(afterId: string | null, limit: number): Promise<MissingEmbedding[]>;
  /** Number of stored embeddings (sizes the probe prefix). */
  countEmbeddings(): Promise<number>;
  /** Records reader signals (views, engagements); a repeat of (reader, item, at) is ignored. */
  addSignals(signals: readonly { readerId: string; itemId: string; atMs: number; weight: number }[]): Promise<void>;
  /** The reader's newest `limit` signals at or before `untilMs` with their items' embeddings. */
  signals(readerId: string, untilMs: number, limit: number): Promise<SignalRow[]>;
}
