/**
 * DiscoverIndex on PostgreSQL (PGlite or a server, through `Sql`): the discover feed's keyset streams,
 * embeddings and reader signals (schema: adapters/schema.ts, migrations 5 and 7), with phase 2's
 * nearest-neighbour search delegated to a VectorSearch (pgvector or the in-process usearch index).
 *
 * `nearest` = search + exact ranking + exact filters, over-fetching:
 * 1. ask the search for k = max(64, depth + 2 × limit) embeddings nearest to the query;
 * 2. rank them by exact cosine of the float query to their int8 codes (desc, then id in byte order)
 *    and keep those strictly after the position and above `minSimilarity`;
 * 3. keep the live ones (not deleted, published by `untilMs`, not the reader's own) — one
 *    primary-key lookup of the best few;
 * 4. short of `limit` while the search returned k (more may exist): k × 4, again. Fewer than k means
 *    the index is exhausted, and so is the stream.
 *
 * Statistics: PGlite has no autovacuum, so after bulk writes this adapter runs `VACUUM ANALYZE` on its
 * tables itself (AutoAnalyze, autovacuum's own trigger).
 */
import type { Sql, SqlTx } from '../../kernel/sql/sql.js';
import { fail } from '../../kernel/errors.js';
import { cosine } from '../embedding.js';
import {
  byNearness,
  rankedAfter,
  type After,
  type DiscoverIndex,
  type EmbeddingRecord,
  type MissingEmbedding,
  type NearestQuery,
  type NearRow,
  type SignalRow,
  type StreamRow,
} from '../discover-index.js';
import type { VectorSearch } from '../vector-search.js';
import { AutoAnalyze } from '../../kernel/sql/auto-analyze.js';
import { CoalescedWrites } from '../../kernel/sql/coalesced-writes.js';

/** Rows per INSERT in `putEmbeddings` / `addSignals` (5 parameters a row; PostgreSQL allows 65,535). */
const CHUNK = 1000;

/** A reader signal as written (`atMs` epoch ms). */
type Signal = { readerId: string; itemId: string; atMs: number; weight: number };

interface StreamSqlRow {
  id: string;
  author_id: string;
  published_at: number | string;
}

const toStream = (r: StreamSqlRow): StreamRow => ({ id: r.id, authorId: r.author_id, key: Number(r.published_at) });

/** bytea arrives as a Buffer from `pg` and a Uint8Array from PGlite; both view the same bytes as int8. */
const toInt8 = (b: Uint8Array): Int8Array => new Int8Array(b.buffer, b.byteOffset, b.byteLength);
const toBytes = (v: Int8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** One record per item id (the last one wins), in first-seen order. */
const unique = (records: readonly EmbeddingRecord[]): EmbeddingRecord[] => [
  ...new Map(records.map((r) => [r.itemId, r])).values(),
];

/** `(published_at, id) < (key, id)` in the descending keyset order, or no bound. Params from `$n`. */
function afterClause(after: After | null, n: number): { sql: string; params: unknown[] } {
  if (!after) return { sql: '', params: [] };
  return {
    sql: `AND (i.published_at, i.id) < ($${n}::bigint, $${n + 1}::text)`,
    params: [Math.floor(after.key), after.id],
  };
}

/** The most rounds of `nearest` (k grows ×4 a round, so 8 rounds reach 4^7 × the first k). */
const MAX_ROUNDS = 8;

/** The PostgreSQL discover index. Does not own the `Sql` handle. */
export class PostgresDiscoverIndex implements DiscoverIndex {
  /** `VACUUM ANALYZE` of this adapter's tables after bulk writes, on PGlite (no autovacuum there). */
  private readonly analyze: AutoAnalyze;
  /** Reader signals of concurrent requests, written together (group commit, kernel/sql/coalesced-writes.ts). */
  private readonly signalWrites = new CoalescedWrites<Signal>((rows) => this.insertSignals(rows), CHUNK);

  /**
   * @param vectors the phase-2 search; its dimension is the one every embedding and query must have.
   */
  constructor(
    private readonly sql: Sql,
    readonly vectors: VectorSearch,
  ) {
    this.analyze = new AutoAnalyze(sql);
  }

  /** Items of followed authors, newest first (index `items_author_newest_idx` per author). */
  async followed(readerId: string, untilMs: number, after: After | null, limit: number): Promise<StreamRow[]> {
    const a = afterClause(after, 4);
    const rows = await this.sql.query<StreamSqlRow>(
      `SELECT i.id, i.author_id, i.published_at FROM items i
       WHERE i.author_id IN (SELECT followee_id FROM follows WHERE follower_id = $1::text)
         AND i.deleted_at IS NULL AND i.published_at <= $2::bigint ${a.sql}
       ORDER BY i.published_at DESC, i.id DESC LIMIT $3::int`,
      [readerId, Math.floor(untilMs), limit, ...a.params],
    );
    return rows.map(toStream);
  }

  /** Newest items overall, without followed authors and the reader's own (index `items_live_newest_idx`). */
  async newest(readerId: string, untilMs: number, after: After | null, limit: number): Promise<StreamRow[]> {
    const a = afterClause(after, 4);
    const rows = await this.sql.query<StreamSqlRow>(
      `SELECT i.id, i.author_id, i.published_at FROM items i
       WHERE i.deleted_at IS NULL AND i.published_at <= $2::bigint AND i.author_id <> $1::text ${a.sql}
         AND NOT EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = $1::text AND f.followee_id = i.author_id)
       ORDER BY i.published_at DESC, i.id DESC LIMIT $3::int`,
      [readerId, Math.floor(untilMs), limit, ...a.params],
    );
    return rows.map(toStream);
  }

  /** Whether the vector search answers without waiting for its start; warms it when not (see the port). */
  nearestReady(): boolean {
    if (this.vectors.isReady()) return true;
    this.vectors.warm();
    return false;
  }

  /** Phase 2's stream: see the module doc and the port's contract. */
  async nearest(q: NearestQuery): Promise<NearRow[]> {
    const dim = this.vectors.dim;
    if (q.vector.length !== dim)
      throw fail('INVALID_INPUT', `the reader embedding has ${q.vector.length} components, the index ${dim}`);
    if (q.limit <= 0) return [];
    const out: NearRow[] = [];
    const checked = new Set<string>();
    let k = Math.max(64, (q.depth ?? 0) + 2 * q.limit);
    for (let round = 0; round < MAX_ROUNDS; round++, k *= 4) {
      const hits = await this.vectors.search(q.vector, k);
      const scored = hits.map((h) => ({ id: h.itemId, key: cosine(q.vector, h.vector) }));
      const ranked = scored
        .filter((c) => c.key > q.minSimilarity && rankedAfter(c, q.after) && !checked.has(c.id))
        .sort(byNearness);
      // the best unchecked first, a little more than still needed per lookup
      for (let at = 0; at < ranked.length && out.length < q.limit; ) {
        const chunk = ranked.slice(at, at + Math.ceil((q.limit - out.length) * 1.5) + 8);
        at += chunk.length;
        for (const c of chunk) checked.add(c.id);
        const live = await this.eligible(
          chunk.map((c) => c.id),
          q.untilMs,
          q.readerId,
        );
        for (const c of chunk) {
          const author = live.get(c.id);
          if (author !== undefined) out.push({ id: c.id, authorId: author, key: c.key });
        }
      }
      // enough; the index is exhausted; or what a deeper search adds is no longer similar enough
      if (out.length >= q.limit || hits.length < k || scored.every((c) => c.key <= q.minSimilarity)) break;
    }
    return out.sort(byNearness).slice(0, q.limit);
  }

  /** Author of each of `ids` that is live, published by `untilMs` and not by `readerId`. */
  private async eligible(ids: readonly string[], untilMs: number, readerId: string): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.sql.query<{ id: string; author_id: string }>(
      `SELECT id, author_id FROM items
       WHERE id = ANY($1::text[]) AND deleted_at IS NULL AND published_at <= $2::bigint AND author_id <> $3::text`,
      [ids, Math.floor(untilMs), readerId],
    );
    return new Map(rows.map((r) => [r.id, r.author_id]));
  }

  /** The ids among `ids` of items that exist and are not deleted (primary-key lookups). */
  async live(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.sql.query<{ id: string }>(
      `SELECT id FROM items WHERE id = ANY($1::text[]) AND deleted_at IS NULL`,
      [[...new Set(ids)]],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Upserts embeddings in one transaction, {@link CHUNK} rows per statement, each stamped with the
   * writing transaction (`changed`: the in-process indexes' catch-up); then tells the search.
   */
  async putEmbeddings(records: readonly EmbeddingRecord[], nowMs: number): Promise<void> {
    if (records.length === 0) return;
    this.checkDims(records);
    await this.sql.transaction((tx) => this.writeEmbeddings(tx, records, nowMs));
    await this.embeddingsCommitted(records);
  }

  /** The upsert of {@link putEmbeddings} inside the caller's transaction (the port's contract). */
  async writeEmbeddings(tx: SqlTx, records: readonly EmbeddingRecord[], nowMs: number): Promise<void> {
    if (records.length === 0) return;
    this.checkDims(records);
    const all = unique(records);
    for (let start = 0; start < all.length; start += CHUNK) {
      const chunk = all.slice(start, start + CHUNK);
      const params: unknown[] = [];
      const tuples = chunk.map((r) => {
        const p = params.length;
        params.push(r.itemId, r.vector.length, toBytes(r.vector), r.source, Math.floor(r.itemUpdateMs ?? nowMs));
        return `($${p + 1}::text, $${p + 2}::int, $${p + 3}::bytea, $${p + 4}::text, $${p + 5}::bigint, pg_current_xact_id())`;
      });
      await tx.query(
        `INSERT INTO item_embeddings (item_id, dim, vec, source, update_time, changed) VALUES ${tuples.join(',')}
         ON CONFLICT (item_id) DO UPDATE SET dim = excluded.dim, vec = excluded.vec, source = excluded.source,
           update_time = excluded.update_time, changed = excluded.changed`,
        params,
      );
    }
  }

  /** Tells the search about committed embeddings; `VACUUM ANALYZE` when due (PGlite). */
  async embeddingsCommitted(records: readonly EmbeddingRecord[]): Promise<void> {
    if (records.length === 0) return;
    const all = unique(records);
    this.vectors.wrote(all);
    await this.analyze.wrote('item_embeddings', all.length, 'VACUUM ANALYZE');
  }

  /** Deletes embedding rows without an item (the port's contract); one statement, `limit` rows at most. */
  async sweepOrphanEmbeddings(limit: number): Promise<number> {
    const rows = await this.sql.query<{ item_id: string }>(
      `DELETE FROM item_embeddings WHERE item_id IN (
         SELECT e.item_id FROM item_embeddings e
         WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = e.item_id) LIMIT $1::int)
       RETURNING item_id`,
      [limit],
    );
    return rows.length;
  }

  /** @throws FreshetError INVALID_INPUT naming the first record whose length is not the index dimension. */
  private checkDims(records: readonly EmbeddingRecord[]): void {
    const dim = this.vectors.dim;
    const wrong = records.findIndex((r) => r.vector.length !== dim);
    if (wrong >= 0)
      throw fail(
        'INVALID_INPUT',
        `embedding of ${records[wrong]!.itemId} has ${records[wrong]!.vector.length} components, the index ${dim}`,
      );
  }

  /** Live items with no embedding, or whose text embedding predates their last write; id > `afterId`. */
  async missingEmbeddings(afterId: string | null, limit: number): Promise<MissingEmbedding[]> {
    const rows = await this.sql.query<{
      id: string;
      title: string;
      text: string;
      tags: string[];
      update_time: number | string;
    }>(
      `SELECT i.id, i.title, i.text, i.tags, i.update_time FROM items i LEFT JOIN item_embeddings e ON e.item_id = i.id
       WHERE i.deleted_at IS NULL AND ($1::text IS NULL OR i.id > $1::text)
         AND (e.item_id IS NULL OR (e.source = 'text' AND e.update_time < i.update_time))
       ORDER BY i.id LIMIT $2::int`,
      [afterId, limit],
    );
    return rows.map((r) => ({
      id: r.id,
      title: r.title,
      text: r.text,
      tags: r.tags,
      updateTime: Number(r.update_time),
    }));
  }

  async sync(): Promise<void> {
    await this.vectors.sync();
  }

  /**
   * Inserts signals, ignoring repeats of (reader, at, item). Concurrent calls share statements (at
   * most {@link CHUNK} rows each); resolves once this call's signals are written.
   */
  async addSignals(signals: readonly Signal[]): Promise<void> {
    for (let start = 0; start < signals.length; start += CHUNK)
      await this.signalWrites.write(signals.slice(start, start + CHUNK));
    await this.analyze.wrote('reader_signals', signals.length, 'VACUUM ANALYZE');
  }

  /**
   * One `INSERT … ON CONFLICT DO NOTHING` of at most {@link CHUNK} signals, committed asynchronously
   * (`synchronous_commit = off`): views are the hottest write path, and a WAL flush per statement queued
   * them behind the disk until the pool's connect timeout under load. A server crash can lose the last
   * ~0.6 s of signals (3 × `wal_writer_delay`, PostgreSQL manual "Asynchronous Commit") — soft evidence
   * of taste, never an item, a follow or a seen mark. One round trip (`Sql.relaxedQuery`: sessions set
   * up for it), where a transaction with `SET LOCAL` took four.
   */
  private async insertSignals(chunk: readonly Signal[]): Promise<void> {
    const params: unknown[] = [];
    const tuples = chunk.map((s) => {
      const p = params.length;
      params.push(s.readerId, Math.floor(s.atMs), s.itemId, s.weight);
      return `($${p + 1}::text, $${p + 2}::bigint, $${p + 3}::text, $${p + 4}::real)`;
    });
    await this.sql.relaxedQuery(
      `INSERT INTO reader_signals (reader_id, at, item_id, weight) VALUES ${tuples.join(',')} ON CONFLICT DO NOTHING`,
      params,
    );
  }

  /**
   * The reader's newest `limit` signals and newest `limit` engagements (the exclusions design's `engagements` table,
   * weight `engagementWeight`) at or before `untilMs`, joined with their items' embeddings.
   */
  async signals(readerId: string, untilMs: number, limit: number, engagementWeight = 3): Promise<SignalRow[]> {
    const rows = await this.sql.query<{ vec: Uint8Array; at: number | string; weight: number }>(
      `SELECT e.vec, s.at, s.weight FROM (
         (SELECT item_id, at, weight FROM reader_signals
          WHERE reader_id = $1::text AND at <= $2::bigint ORDER BY at DESC LIMIT $3::int)
         UNION ALL
         (SELECT item_id, created_at AS at, $4::real AS weight FROM engagements
          WHERE reader_id = $1::text AND created_at <= $2::bigint ORDER BY created_at DESC LIMIT $3::int)
       ) s JOIN item_embeddings e ON e.item_id = s.item_id`,
      [readerId, Math.floor(untilMs), limit, engagementWeight],
    );
    return rows.map((r) => ({ vector: toInt8(r.vec), atMs: Number(r.at), weight: Number(r.weight) }));
  }

  purgeSnapshots(): Promise<number> {
    return this.vectors.purge();
  }

  async forgetReader(readerId: string): Promise<number> {
    const signals = await this.sql.query('DELETE FROM reader_signals WHERE reader_id = $1 RETURNING 1', [readerId]);
    const given = await this.sql.query('DELETE FROM reader_embeddings WHERE reader_id = $1 RETURNING 1', [readerId]);
    return signals.length + given.length;
  }

  async readerEmbedding(readerId: string): Promise<Float32Array | null> {
    const rows = await this.sql.query<{ vec: Uint8Array }>('SELECT vec FROM reader_embeddings WHERE reader_id = $1', [
      readerId,
    ]);
    const b = rows[0]?.vec;
    return b ? new Float32Array(Uint8Array.from(b).buffer) : null;
  }

  async setReaderEmbedding(readerId: string, vector: Float32Array | null, nowMs: number): Promise<boolean> {
    if (vector === null)
      return (
        (await this.sql.query('DELETE FROM reader_embeddings WHERE reader_id = $1 RETURNING 1', [readerId])).length > 0
      );
    await this.sql.query(
      `INSERT INTO reader_embeddings (reader_id, vec, update_time) VALUES ($1, $2, $3)
       ON CONFLICT (reader_id) DO UPDATE SET vec = excluded.vec, update_time = excluded.update_time`,
      [readerId, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength), nowMs],
    );
    return false;
  }

  async signalsOf(readerId: string, limit: number): Promise<{ itemId: string; atMs: number; weight: number }[]> {
    const rows = await this.sql.query<{ item_id: string; at: number | string; weight: number }>(
      'SELECT item_id, at, weight FROM reader_signals WHERE reader_id = $1 ORDER BY at DESC LIMIT $2',
      [readerId, limit],
    );
    return rows.map((r) => ({ itemId: r.item_id, atMs: Number(r.at), weight: Number(r.weight) }));
  }
}
