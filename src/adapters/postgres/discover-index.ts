/**
 * DiscoverIndex on PostgreSQL (PGlite or a server, through `Sql`): the discover feed's three candidate
 * streams, embeddings and reader signals (schema: discover-schema.ts, migration 5).
 *
 * Vector search without pgvector (neither PGlite 0.5 nor the PostgreSQL 15 server here ships it): the
 * coarse step runs in PostgreSQL — each probed bucket range (adjacent ranges merged) is one index-only
 * range scan of the covering index `item_embeddings_bucket_idx (bucket) INCLUDE (sketch, item_id)`,
 * glued by `UNION ALL`; the rows found are ordered by the Hamming distance of their 256-bit sketches to
 * the query's (`bit_count(sketch # q)`, C code, PostgreSQL ≥ 14; ties by id in byte order); only the
 * best ones are then looked up by primary key (item liveness, author, int8 vector) for the exact cosine
 * ranking in the service. See README "Vector search".
 *
 * Plan shape matters (EXPLAIN ANALYZE, 20k rows, PostgreSQL 15): a join on `unnest(lo[], hi[])` let
 * the planner sort the whole table by distance, and a plain join to `items` became a hash join over a
 * sequential scan of every item (9 ms of a 25 ms query); range scans glued by UNION ALL and a LATERAL
 * lookup fenced with `OFFSET 0` (never flattened, so always index probes) took it to ~5 ms.
 *
 * Statistics: PGlite has no autovacuum, so after bulk writes this adapter runs `VACUUM ANALYZE` on its
 * tables itself (same trigger as the content store's `ANALYZE items`); VACUUM also sets the visibility
 * map, without which an index-only scan still visits the table.
 */
import type { Sql } from './sql.js';
import type { BucketRange } from '../../domain/embedding.js';
import type { After, DiscoverIndex, EmbeddingRecord, MissingEmbedding, SignalRow, StreamRow, VectorRow } from '../../ports/discover-index.js';
import { AutoAnalyze } from './auto-analyze.js';

/** Rows per INSERT in `putEmbeddings` / `addSignals` (7 parameters a row; PostgreSQL allows 65,535). */
const CHUNK = 1000;

interface StreamSqlRow {
  id: string;
  author_id: string;
  published_at: number | string;
}

const toStream = (r: StreamSqlRow): StreamRow => ({ id: r.id, authorId: r.author_id, key: Number(r.published_at) });

/** bytea arrives as a Buffer from `pg` and a Uint8Array from PGlite; both view the same bytes as int8. */
const toInt8 = (b: Uint8Array): Int8Array => new Int8Array(b.buffer, b.byteOffset, b.byteLength);
const toBytes = (v: Int8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** `(published_at, id) < (key, id)` in the descending keyset order, or no bound. Params from `$n`. */
function afterClause(after: After | null, n: number): { sql: string; params: unknown[] } {
  if (!after) return { sql: '', params: [] };
  return { sql: `AND (i.published_at, i.id) < ($${n}::bigint, $${n + 1}::text)`, params: [Math.floor(after.key), after.id] };
}

/** Sorted, with touching or overlapping ranges merged (fewer index scans). */
export function mergeRanges(ranges: readonly BucketRange[]): BucketRange[] {
  const sorted = [...ranges].sort((a, b) => a.lo - b.lo);
  const out: BucketRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.lo <= last.hi) last.hi = Math.max(last.hi, r.hi);
    else out.push({ ...r });
  }
  return out;
}

/** The PostgreSQL discover index. Does not own the `Sql` handle. */
export class PostgresDiscoverIndex implements DiscoverIndex {
  /** `VACUUM ANALYZE` of this adapter's tables after bulk writes, on PGlite (no autovacuum there). */
  private readonly analyze: AutoAnalyze;

  constructor(private readonly sql: Sql) {
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

  /**
   * The `pool` items closest by sketch Hamming distance among the probed buckets, live, published by
   * `untilMs`, not the reader's own. The inner query ranks embeddings alone (a top-N heap sort over
   * the probed rows); the outer join drops dead or future items from a slightly larger pool.
   */
  async nearest(q: { sketch: string; ranges: readonly BucketRange[]; untilMs: number; pool: number; readerId: string }): Promise<VectorRow[]> {
    if (q.ranges.length === 0 || q.pool <= 0) return [];
    const ranges = mergeRanges(q.ranges);
    const params: unknown[] = [q.sketch, Math.ceil(q.pool * 1.25) + 8, Math.floor(q.untilMs), q.readerId, q.pool];
    const scans = ranges.map((r) => {
      params.push(r.lo, r.hi);
      const n = params.length;
      return `(SELECT item_id, sketch FROM item_embeddings WHERE bucket >= $${n - 1}::int AND bucket < $${n}::int)`;
    });
    const rows = await this.sql.query<{ id: string; author_id: string; vec: Uint8Array }>(
      `SELECT c.item_id AS id, x.author_id, x.vec FROM (
         SELECT e.item_id, bit_count(e.sketch # $1::bit(256)) AS d
         FROM (${scans.join(' UNION ALL ')}) e
         ORDER BY d, e.item_id COLLATE "C" LIMIT $2::int
       ) c CROSS JOIN LATERAL (
         SELECT i.author_id, v.vec FROM items i JOIN item_embeddings v ON v.item_id = i.id
         WHERE i.id = c.item_id AND i.deleted_at IS NULL AND i.published_at <= $3::bigint AND i.author_id <> $4::text
         OFFSET 0
       ) x
       ORDER BY c.d, c.item_id COLLATE "C" LIMIT $5::int`,
      params,
    );
    return rows.map((r) => ({ id: r.id, authorId: r.author_id, vector: toInt8(r.vec) }));
  }

  /** The ids among `ids` of items that exist and are not deleted (primary-key lookups). */
  async live(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.sql.query<{ id: string }>(`SELECT id FROM items WHERE id = ANY($1::text[]) AND deleted_at IS NULL`, [[...new Set(ids)]]);
    return new Set(rows.map((r) => r.id));
  }

  /** Upserts embeddings in one transaction, {@link CHUNK} rows per statement. */
  async putEmbeddings(records: readonly EmbeddingRecord[], nowMs: number): Promise<void> {
    if (records.length === 0) return;
    const byId = new Map(records.map((r) => [r.itemId, r]));
    const all = [...byId.values()];
    await this.sql.transaction(async (tx) => {
      for (let start = 0; start < all.length; start += CHUNK) {
        const chunk = all.slice(start, start + CHUNK);
        const params: unknown[] = [];
        const tuples = chunk.map((r) => {
          const p = params.length;
          params.push(r.itemId, r.vector.length, toBytes(r.vector), r.sketch, r.bucket, r.source, Math.floor(r.itemUpdateMs ?? nowMs));
          return `($${p + 1}::text, $${p + 2}::int, $${p + 3}::bytea, $${p + 4}::bit(256), $${p + 5}::int, $${p + 6}::text, $${p + 7}::bigint)`;
        });
        await tx.query(
          `INSERT INTO item_embeddings (item_id, dim, vec, sketch, bucket, source, update_time) VALUES ${tuples.join(',')}
           ON CONFLICT (item_id) DO UPDATE SET dim = excluded.dim, vec = excluded.vec, sketch = excluded.sketch,
             bucket = excluded.bucket, source = excluded.source, update_time = excluded.update_time`,
          params,
        );
      }
    });
    await this.analyze.wrote('item_embeddings', all.length, 'VACUUM ANALYZE');
  }

  /** Live items with no embedding, or whose text embedding predates their last write; id > `afterId`. */
  async missingEmbeddings(afterId: string | null, limit: number): Promise<MissingEmbedding[]> {
    const rows = await this.sql.query<{ id: string; title: string; text: string; tags: string[]; update_time: number | string }>(
      `SELECT i.id, i.title, i.text, i.tags, i.update_time FROM items i LEFT JOIN item_embeddings e ON e.item_id = i.id
       WHERE i.deleted_at IS NULL AND ($1::text IS NULL OR i.id > $1::text)
         AND (e.item_id IS NULL OR (e.source = 'text' AND e.update_time < i.update_time))
       ORDER BY i.id LIMIT $2::int`,
      [afterId, limit],
    );
    return rows.map((r) => ({ id: r.id, title: r.title, text: r.text, tags: r.tags, updateTime: Number(r.update_time) }));
  }

  async countEmbeddings(): Promise<number> {
    const rows = await this.sql.query<{ n: number | string }>(`SELECT count(*) AS n FROM item_embeddings`);
    return Number(rows[0]?.n ?? 0);
  }

  /** Inserts signals, ignoring repeats of (reader, at, item); one statement per {@link CHUNK}. */
  async addSignals(signals: readonly { readerId: string; itemId: string; atMs: number; weight: number }[]): Promise<void> {
    for (let start = 0; start < signals.length; start += CHUNK) {
      const chunk = signals.slice(start, start + CHUNK);
      const params: unknown[] = [];
      const tuples = chunk.map((s) => {
        const p = params.length;
        params.push(s.readerId, Math.floor(s.atMs), s.itemId, s.weight);
        return `($${p + 1}::text, $${p + 2}::bigint, $${p + 3}::text, $${p + 4}::real)`;
      });
      await this.sql.query(
        `INSERT INTO reader_signals (reader_id, at, item_id, weight) VALUES ${tuples.join(',')} ON CONFLICT DO NOTHING`,
        params,
      );
    }
    await this.analyze.wrote('reader_signals', signals.length, 'VACUUM ANALYZE');
  }

  /**
   * The reader's newest `limit` signals and newest `limit` engagements (note 5's `engagements` table,
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
}
