/**
 * ContentStore on PostgreSQL (PGlite or a server, through `Sql`): items with a full-text vector and
 * reader interests. The for-you recall over the same table is src/for-you/adapters/postgres-recall.ts.
 *
 * Schema: see src/kernel/sql/migrations.ts (`items`, `reader_interests`). Times are epoch ms (`bigint`).
 */
import type { Item } from '../kernel/items/item.js';
import { ERASED_AUTHOR, type ContentStore, type ItemInput, type UpsertOptions } from '../kernel/items/content-store.js';
import type { Sql, SqlTx } from '../kernel/sql/sql.js';
import { fail } from '../kernel/errors.js';
import { itemColumns, rowToItem, type ItemRow } from '../kernel/items/item-rows.js';
import { AutoAnalyze } from '../kernel/sql/auto-analyze.js';
import { normalizeTerms } from '../kernel/items/terms.js';
import { assertUniqueIds } from '../kernel/items/validate.js';

/** Rows per INSERT statement in `upsertItems` (9 parameters a row; PostgreSQL allows 65,535). */
export const UPSERT_CHUNK_ROWS = 500;

/**
 * The document vector of an item, weighted so that a title match outranks a tag match, which
 * outranks a body match (`ts_rank` default weights A 1.0, B 0.4, D 0.1), in the text search
 * configuration of the item's language (`freshet_ts_config`, migration 12: `simple` for languages stock
 * PostgreSQL has none for). `v` is the row alias.
 */
const TSV = (v: string) =>
  `setweight(to_tsvector(freshet_ts_config(${v}.lang), ${v}.title), 'A')
   || setweight(to_tsvector(freshet_ts_config(${v}.lang), array_to_string(${v}.tags, ' ')), 'B')
   || to_tsvector(freshet_ts_config(${v}.lang), ${v}.text)`;

const COLUMNS = itemColumns();

/** Throws ITEM_DELETED naming the soft-deleted ids among `ids` (the transaction then rolls back). */
async function refuseDeleted(tx: SqlTx, ids: readonly string[]): Promise<void> {
  const rows = await tx.query<{ id: string }>(
    `SELECT id FROM items WHERE id = ANY($1::text[]) AND deleted_at IS NOT NULL ORDER BY id`,
    [ids],
  );
  if (rows.length === 0) return;
  const shown =
    rows
      .slice(0, 5)
      .map((r) => r.id)
      .join(', ') + (rows.length > 5 ? ` (+${rows.length - 5} more)` : '');
  throw fail(
    'ITEM_DELETED',
    `item ${shown} was deleted; a deleted id is never reused: publish it under a new id (nothing of this batch was written)`,
  );
}

/**
 * The PostgreSQL content store. Construct it on a migrated `Sql` (see `migrate`). By default it
 * owns the handle and `close()` closes it; pass `{ ownsSql: false }` when the handle is shared.
 *
 * Errors: every method may throw FreshetError `STORE_UNAVAILABLE` (database unreachable);
 * `upsertItems` throws `INVALID_INPUT` when the schema rejects a value (see its doc).
 */
export class PostgresContentStore implements ContentStore {
  /**
   * PGlite has no autovacuum, and without statistics on `items` its planner ANDs the primary key with
   * the partial index of live items, so hydration scans every live row (bench/README.md: 2.3 ms instead
   * of 0.7 ms for 20 ids): `upsertItems` reports its writes here, which runs `ANALYZE items` when due.
   */
  private readonly analyze: AutoAnalyze;

  constructor(
    private readonly sql: Sql,
    private readonly opts: { ownsSql?: boolean } = {},
  ) {
    this.analyze = new AutoAnalyze(sql);
  }

  /**
   * Inserts or updates items by id in one transaction (multi-row `INSERT … ON CONFLICT (id) DO
   * UPDATE`, {@link UPSERT_CHUNK_ROWS} rows per statement); every written row gets
   * `update_time = nowMs`. A batch naming an id twice is refused (the one batch rule of
   * src/kernel/items/validate.ts, which the use case has applied already). A soft-deleted id is never reused: the batch is refused (restoring would
   * bring back an item its readers saw removed, with counters and feed entries already dropped).
   * `opts.alongside` runs in the same transaction once every row is written (see {@link UpsertOptions}).
   * @throws FreshetError `ITEM_DELETED` naming the deleted ids, `INVALID_INPUT` when any row is
   *   rejected (missing field, non-integer or negative `publishedAt`, negative/NaN/infinite
   *   `popularity`, id not `[A-Za-z0-9_.-]{1,64}`), or what `alongside` throws; nothing of the batch is written then.
   */
  async upsertItems(
    items: readonly ItemInput[],
    nowMs: number,
    opts: UpsertOptions = {},
  ): Promise<{ inserted: number; updated: number }> {
    assertUniqueIds(items);
    const rows = items;
    if (rows.length === 0) return { inserted: 0, updated: 0 };
    return this.sql
      .transaction(async (tx) => {
        let inserted = 0;
        let updated = 0;
        for (let start = 0; start < rows.length; start += UPSERT_CHUNK_ROWS) {
          const chunk = rows.slice(start, start + UPSERT_CHUNK_ROWS);
          const params: unknown[] = [Math.floor(nowMs)];
          const tuples = chunk.map((it) => {
            const p = params.length;
            params.push(
              it.id,
              it.authorId,
              it.title,
              it.text,
              it.url ?? null,
              it.tags,
              it.publishedAt,
              it.popularity,
              it.lang ?? 'und',
            );
            return `($${p + 1}::text, $${p + 2}::text, $${p + 3}::text, $${p + 4}::text, $${p + 5}::text,
                   $${p + 6}::text[], $${p + 7}::bigint, $${p + 8}::float8, $${p + 9}::text)`;
          });
          const result = await tx.query<{ inserted: boolean }>(
            `INSERT INTO items AS i (id, author_id, title, text, url, tags, published_at, popularity, lang, update_time, tsv)
           SELECT v.id, v.author_id, v.title, v.text, v.url, v.tags, v.published_at, v.popularity, v.lang, $1::bigint, ${TSV('v')}
           FROM (VALUES ${tuples.join(',\n')}) AS v (id, author_id, title, text, url, tags, published_at, popularity, lang)
           ON CONFLICT (id) DO UPDATE SET
             author_id = excluded.author_id, title = excluded.title, text = excluded.text, url = excluded.url,
             tags = excluded.tags, published_at = excluded.published_at, popularity = excluded.popularity,
             lang = excluded.lang, update_time = excluded.update_time, tsv = excluded.tsv
           WHERE i.deleted_at IS NULL
           RETURNING (i.xmax = 0) AS inserted`,
            params,
          );
          // xmax = 0 ⇔ the row version was created by an INSERT, not by the UPDATE branch.
          for (const r of result) r.inserted ? inserted++ : updated++;
          // a row not returned hit the WHERE of the UPDATE branch: a soft-deleted id (checked under its row lock)
          if (result.length < chunk.length)
            await refuseDeleted(
              tx,
              chunk.map((it) => it.id),
            );
        }
        await opts.alongside?.(tx); // e.g. The batch's embeddings: committed with the items or not at all
        return { inserted, updated };
      })
      .then(async (counts) => {
        await this.analyze.wrote('items', counts.inserted + counts.updated, 'ANALYZE');
        return counts;
      });
  }

  /** Soft-deletes (sets `deleted_at = nowMs`); false when the id is unknown or already deleted. */
  async deleteItem(id: string, nowMs: number): Promise<boolean> {
    const rows = await this.sql.query(
      `UPDATE items SET deleted_at = $2::bigint, update_time = $2::bigint
       WHERE id = $1 AND deleted_at IS NULL RETURNING id`,
      [id, Math.floor(nowMs)],
    );
    return rows.length === 1;
  }

  /** One item, live or deleted (see the port); one indexed read. */
  async getItemRecord(id: string): Promise<(Item & { deleted: boolean }) | null> {
    const rows = await this.sql.query<ItemRow & { deleted_at: string | number | null }>(
      `SELECT ${COLUMNS}, deleted_at FROM items WHERE id = $1`,
      [id],
    );
    const r = rows[0];
    return r ? { ...rowToItem(r), deleted: r.deleted_at !== null } : null;
  }

  /**
   * Live items for `ids`, in the order of `ids`; unknown and deleted ids are skipped and a
   * repeated id is returned once (at its first position).
   */
  async getItems(ids: readonly string[]): Promise<Item[]> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return [];
    const rows = await this.sql.query<ItemRow>(
      `SELECT ${COLUMNS} FROM items WHERE id = ANY($1::text[]) AND deleted_at IS NULL`,
      [unique],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const out: Item[] = [];
    for (const id of unique) {
      const row = byId.get(id);
      if (row) out.push(rowToItem(row));
    }
    return out;
  }

  /** Replaces a reader's terms with `normalizeTerms(terms)` (lower-case `[a-z0-9]+`, ≤ 100). */
  async setInterests(readerId: string, terms: readonly string[], nowMs: number): Promise<void> {
    await this.sql.query(
      `INSERT INTO reader_interests (reader_id, terms, update_time) VALUES ($1, $2::text[], $3::bigint)
       ON CONFLICT (reader_id) DO UPDATE SET terms = excluded.terms, update_time = excluded.update_time`,
      [readerId, normalizeTerms(terms), Math.floor(nowMs)],
    );
  }

  /** The reader's stored terms, in stored order; [] when none were set. */
  async getInterests(readerId: string): Promise<string[]> {
    const rows = await this.sql.query<{ terms: string[] }>(`SELECT terms FROM reader_interests WHERE reader_id = $1`, [
      readerId,
    ]);
    return rows[0]?.terms ?? [];
  }

  async forgetReader(readerId: string): Promise<number> {
    return (await this.sql.query('DELETE FROM reader_interests WHERE reader_id = $1 RETURNING 1', [readerId])).length;
  }

  /** Tombstones up to `limit` of the author's items in one statement (see the port). */
  async eraseAuthor(authorId: string, ids: readonly string[], nowMs: number): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.sql.query<{ id: string }>(
      `UPDATE items SET author_id = $2, title = '', text = '', url = NULL, tags = '{}', tsv = ''::tsvector,
              deleted_at = COALESCE(deleted_at, $3::bigint), update_time = $3::bigint
       WHERE author_id = $1 AND id = ANY($4::text[]) RETURNING id`,
      [authorId, ERASED_AUTHOR, Math.floor(nowMs), ids],
    );
    return rows.map((r) => r.id);
  }

  async itemsOf(
    authorId: string,
    limit: number,
    after?: { publishedAt: number; id: string },
  ): Promise<(Item & { deleted: boolean })[]> {
    const rows = await this.sql.query<ItemRow & { deleted_at: string | number | null }>(
      `SELECT ${COLUMNS}, deleted_at FROM items WHERE author_id = $1
         AND ($3::bigint IS NULL OR (published_at, id) < ($3::bigint, $4::text))
       ORDER BY published_at DESC, id DESC LIMIT $2`,
      [authorId, limit, after ? Math.floor(after.publishedAt) : null, after?.id ?? null],
    );
    return rows.map((r) => ({ ...rowToItem(r), deleted: r.deleted_at !== null }));
  }

  /** Number of live (not deleted) items. */
  async countItems(): Promise<number> {
    const rows = await this.sql.query<{ n: number | string }>(
      `SELECT count(*) AS n FROM items WHERE deleted_at IS NULL`,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Closes the underlying `Sql` handle, unless constructed with `ownsSql: false`. */
  async close(): Promise<void> {
    if (this.opts.ownsSql !== false) await this.sql.close();
  }
}
