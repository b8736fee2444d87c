/**
 * The change feed of `item_embeddings` an in-process index catches up from (migration 7).
 *
 * Every write of an embedding row stamps its `changed` column with the writing transaction's id
 * (`pg_current_xact_id()`, a 64-bit `xid8` that never wraps), and a soft delete of an item stamps its
 * embedding row too (trigger `items_deleted_touch_embedding`). A reader keeps a **watermark**: the
 * snapshot `pg_current_snapshot()` taken *before* its last read (text `xmin:xmax:xip,…`). Every
 * transaction that snapshot saw as committed had committed before the read began, so the read saw its
 * rows; what it did not see — transactions then in progress (`xip`) or begun later (≥ `xmax`) — is the
 * next read's filter: `changed >= xmax OR changed = ANY(xip)`. So nothing committed is ever missed,
 * whatever the clocks say and however long a writer's transaction ran (which a watermark on
 * `update_time`, the item's write time — virtual in replays — cannot promise), and a read re-reads only
 * rows of transactions that were still running at the last one (re-applying a row is idempotent),
 * however old the oldest running transaction of the server is.
 *
 * Rows come in keyset pages of (changed, item_id); each says whether its item is deleted (then the
 * index drops it). An embedding whose item does not exist yet (embeddings are written before their
 * items) is indexed: the search's exact filter decides liveness.
 */
import type { Sql } from '../../kernel/sql/sql.js';

/** One changed embedding. */
export interface EmbeddingChange {
  itemId: string;
  /** Its int8 codes; compare `length` with the index dimension (other dimensions are skipped). */
  vector: Int8Array;
  /** The item was soft-deleted: drop it from the index. */
  deleted: boolean;
}

/** Rows per page of a catch-up read. */
const PAGE = 5000;

const toInt8 = (b: Uint8Array): Int8Array => new Int8Array(b.buffer, b.byteOffset, b.byteLength);

/** Reads `item_embeddings` changes for an in-process index. Does not own the `Sql` handle. */
export class PostgresEmbeddingFeed {
  constructor(private readonly sql: Sql) {}

  /** The watermark to keep after a read started now: the current snapshot, as text. */
  async watermark(): Promise<string> {
    const rows = await this.sql.query<{ w: string }>(`SELECT pg_current_snapshot()::text AS w`);
    return rows[0]!.w;
  }

  /**
   * Which database this is: a random id written by migration 7. A snapshot taken on another
   * database (another server, schema or a recreated one) must not be caught up from: its watermark
   * means nothing here.
   */
  async identity(): Promise<string> {
    const rows = await this.sql.query<{ id: string }>(`SELECT id FROM discover_index_identity`);
    return rows[0]!.id;
  }

  /**
   * Every embedding changed by a transaction the watermark `since` did not see as committed (null:
   * every embedding), page by page through `apply`, each flagged when its item is deleted. Returns
   * the rows read.
   */
  async read(since: string | null, apply: (rows: EmbeddingChange[]) => void | Promise<void>): Promise<number> {
    const [, xmax = null, xip = ''] = since === null ? [] : since.split(':');
    const pending = xip ? xip.split(',') : [];
    let after: { changed: string; id: string } | null = null;
    let total = 0;
    for (;;) {
      const rows: { item_id: string; vec: Uint8Array; deleted: boolean; changed: string }[] = await this.sql.query(
        `SELECT e.item_id, e.vec, e.changed::text AS changed,
                EXISTS (SELECT 1 FROM items i WHERE i.id = e.item_id AND i.deleted_at IS NOT NULL) AS deleted
         FROM item_embeddings e
         WHERE ($1::xid8 IS NULL OR e.changed >= $1::xid8 OR e.changed = ANY($2::xid8[]))
           AND ($3::xid8 IS NULL OR (e.changed, e.item_id COLLATE "C") > ($3::xid8, $4::text COLLATE "C"))
         ORDER BY e.changed, e.item_id COLLATE "C" LIMIT $5::int`,
        [xmax, pending, after?.changed ?? null, after?.id ?? null, PAGE],
      );
      if (rows.length === 0) break;
      total += rows.length;
      await apply(rows.map((r) => ({ itemId: r.item_id, vector: toInt8(r.vec), deleted: r.deleted })));
      const last = rows[rows.length - 1]!;
      after = { changed: last.changed, id: last.item_id };
      if (rows.length < PAGE) break;
    }
    return total;
  }
}
