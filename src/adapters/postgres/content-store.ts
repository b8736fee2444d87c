/**
 * ContentStore and CandidateRecall on PostgreSQL (PGlite or a server, through `Sql`): items with a
 * full-text vector, reader interests, and the for-you recall of note 1 — text relevance ×
 * Gaussian time decay, filled by decay × log popularity.
 *
 * Schema: see migrations.ts (`items`, `reader_interests`). Times are epoch ms (`bigint`).
 */
import type { Item } from '../../domain/item.js';
import { gaussSigma2 } from '../../domain/decay.js';
import type { CandidateRecall, ContentStore, ItemInput, RecallQuery } from '../../ports/content-store.js';
import type { Sql } from './sql.js';
import { itemColumns, rowToItem, type ItemRow } from './item-rows.js';
import { AutoAnalyze } from './auto-analyze.js';
import { normalizeTerms, orQueryText } from '../../domain/terms.js';

/** Rows per INSERT statement in `upsertItems` (8 parameters a row; PostgreSQL allows 65,535). */
export const UPSERT_CHUNK_ROWS = 500;

/**
 * The document vector of an item, weighted so that a title match outranks a tag match, which
 * outranks a body match (`ts_rank` default weights A 1.0, B 0.4, D 0.1). `v` is the row alias.
 */
const TSV = (v: string) =>
  `setweight(to_tsvector('english', ${v}.title), 'A')
   || setweight(to_tsvector('english', array_to_string(${v}.tags, ' ')), 'B')
   || to_tsvector('english', ${v}.text)`;

const COLUMNS = itemColumns();

/**
 * The PostgreSQL content store. Construct it on a migrated `Sql` (see `migrate`). By default it
 * owns the handle and `close()` closes it; pass `{ ownsSql: false }` when the handle is shared.
 *
 * Errors: every method may throw FreshetError `STORE_UNAVAILABLE` (database unreachable);
 * `upsertItems` throws `INVALID_INPUT` when the schema rejects a value (see its doc).
 */
export class PostgresContentStore implements ContentStore, CandidateRecall {
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
   * `update_time = nowMs`. When an id appears twice in the batch, the last one wins and is
   * counted once. A soft-deleted item is left untouched (never un-deleted) and counted in
   * neither `inserted` nor `updated`.
   * @throws FreshetError `INVALID_INPUT` when any row is rejected (missing field, non-integer or
   *   negative `publishedAt`, negative/NaN/infinite `popularity`, id not `[A-Za-z0-9_.-]{1,64}`);
   *   nothing of the batch is written then.
   */
  async upsertItems(items: readonly ItemInput[], nowMs: number): Promise<{ inserted: number; updated: number }> {
    const byId = new Map<string, ItemInput>();
    for (const item of items) byId.set(item.id, item);
    const rows = [...byId.values()];
    if (rows.length === 0) return { inserted: 0, updated: 0 };
    return this.sql.transaction(async (tx) => {
      let inserted = 0;
      let updated = 0;
      for (let start = 0; start < rows.length; start += UPSERT_CHUNK_ROWS) {
        const chunk = rows.slice(start, start + UPSERT_CHUNK_ROWS);
        const params: unknown[] = [Math.floor(nowMs)];
        const tuples = chunk.map((it) => {
          const p = params.length;
          params.push(it.id, it.authorId, it.title, it.text, it.url ?? null, it.tags, it.publishedAt, it.popularity);
          return `($${p + 1}::text, $${p + 2}::text, $${p + 3}::text, $${p + 4}::text, $${p + 5}::text,
                   $${p + 6}::text[], $${p + 7}::bigint, $${p + 8}::float8)`;
        });
        const result = await tx.query<{ inserted: boolean }>(
          `INSERT INTO items AS i (id, author_id, title, text, url, tags, published_at, popularity, update_time, tsv)
           SELECT v.id, v.author_id, v.title, v.text, v.url, v.tags, v.published_at, v.popularity, $1::bigint, ${TSV('v')}
           FROM (VALUES ${tuples.join(',\n')}) AS v (id, author_id, title, text, url, tags, published_at, popularity)
           ON CONFLICT (id) DO UPDATE SET
             author_id = excluded.author_id, title = excluded.title, text = excluded.text, url = excluded.url,
             tags = excluded.tags, published_at = excluded.published_at, popularity = excluded.popularity,
             update_time = excluded.update_time, tsv = excluded.tsv
           WHERE i.deleted_at IS NULL
           RETURNING (i.xmax = 0) AS inserted`,
          params,
        );
        // xmax = 0 ⇔ the row version was created by an INSERT, not by the UPDATE branch.
        for (const r of result) r.inserted ? inserted++ : updated++;
      }
      return { inserted, updated };
    }).then(async (counts) => {
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

  /** Number of live (not deleted) items. */
  async countItems(): Promise<number> {
    const rows = await this.sql.query<{ n: number | string }>(`SELECT count(*) AS n FROM items WHERE deleted_at IS NULL`);
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Top-`limit` candidate ids for a reader (note 1's "engine recall"). Candidates are live items
   * with `published_at` in [now − horizonMs, now] (future items never) and `author_id` ≠ reader.
   *
   * With usable interest words (see `normalizeTerms`; tsquery syntax in terms is dropped), the items
   * matching `to_tsquery('english', 'w1 | w2 | …')` come first, by
   *   score = ts_rank(tsv, query) × G,
   *   G = exp(−max(0, |now − published_at| − offset)² / (2σ²)),  σ² = −scale² / (2 ln decay)
   * (Elasticsearch `gauss` decay, domain/decay.ts; σ² from `gaussSigma2`, all in ms). When they
   * are fewer than `limit` — or with no interests — the rest is filled with the non-matching
   * candidates by G × ln(2 + popularity). Both orders break ties by `published_at` desc, then
   * id asc, so results are deterministic; no id appears twice. The exponent is clamped at −700
   * (PostgreSQL raises on `exp` underflow): items that far out of the decay all score ≈ 0.
   *
   * One statement scores the horizon once (`ORDER BY matched DESC, score DESC`, a top-N sort), where
   * a matches query followed by a fill query would scan it twice for every reader whose words match
   * fewer than `limit` items.
   */
  async recall(q: RecallQuery): Promise<string[]> {
    const limit = Math.floor(q.limit);
    if (!(limit > 0)) return [];
    const now = Math.floor(q.nowMs);
    const from = Math.max(0, Math.ceil(q.nowMs - q.horizonMs));
    if (!Number.isFinite(from) || from > now) return [];
    const invTwoSigma2 = 1 / (2 * gaussSigma2(q.decay));
    // $1 now · $2 from · $3 offset · $4 1/(2σ²) · $5 reader · $6 tsquery text ('' = none) · $7 limit,
    // then, only when present (note 5's exclusions; an empty anti-join still costs as much as the scan):
    // excluded authors, excluded items, down-weighted authors and their weights
    const params: unknown[] = [now, from, q.decay.offsetMs, invTwoSigma2, q.readerId, '', limit];
    const param = (v: unknown) => `$${params.push(v)}`;
    const gauss = `exp(-least(700, power(greatest(0, abs($1::bigint - published_at) - $3::float8), 2) * $4::float8))`;
    const query = orQueryText(q.interests);
    params[5] = query;
    const fromItems = [...new Set(q.interestItemIds ?? [])];
    // The text query: the interest words ($6, English stemming) OR-ed with the stemmed words of the
    // titles and tags of `interestItemIds` (already lexemes: cast, not parsed again; only [a-z0-9]+ so
    // the cast cannot fail). Without either, no row matches: the text match is skipped, so `tsv` (the
    // widest column) is never read. ($6 = '' then, so `$6 <> ''` is false; every parameter must
    // appear for its type to be known.)
    const textQuery = fromItems.length === 0
      ? (query === '' ? null : `to_tsquery('english', $6::text)`)
      : `(SELECT CASE WHEN $6::text = '' THEN d.q ELSE to_tsquery('english', $6::text) || coalesce(d.q, ''::tsquery) END
          FROM (SELECT string_agg(w, ' | ')::tsquery AS q FROM (
                  SELECT w FROM items, unnest(tsvector_to_array(to_tsvector('english',
                           title || ' ' || array_to_string(tags, ' ')))) AS w
                  WHERE id = ANY(${param(fromItems)}::text[]) AND w ~ '^[a-z0-9]+$'
                  GROUP BY w ORDER BY count(*) DESC, w LIMIT 64) l) d)`;
    const withText = textQuery !== null;
    const matched = withText ? `coalesce(tsv @@ tq.q, false)` : `$6::text <> ''`;
    const score = withText
      ? `CASE WHEN matched THEN ts_rank(tsv, q) * ${gauss} ELSE ${gauss} * ln(2 + popularity) END` // c.q: the text query
      : `${gauss} * ln(2 + popularity)`;
    const ex = q.exclusions;
    const authors = [...(ex?.authorIds ?? [])];
    const itemIds = [...(ex?.itemIds ?? [])];
    const weighted = [...(ex?.authorWeights ?? new Map<string, number>())];
    const excluded =
      (authors.length > 0 ? ` AND author_id NOT IN (SELECT unnest(${param(authors)}::text[]))` : '') +
      (itemIds.length > 0 ? ` AND id NOT IN (SELECT unnest(${param(itemIds)}::text[]))` : '');
    const weightJoin = weighted.length > 0
      ? ` LEFT JOIN unnest(${param(weighted.map((w) => w[0]))}::text[], ${param(weighted.map((w) => w[1]))}::float8[]) AS w (author, weight) ON w.author = items.author_id`
      : '';
    const rows = await this.sql.query<{ id: string }>(
      `SELECT id FROM (
         SELECT id, published_at, ${withText ? 'tsv, tq.q, ' : ''}popularity, ${matched} AS matched,
                ${weighted.length > 0 ? 'coalesce(w.weight, 1)' : '1'} AS weight
         FROM items${withText ? `, (SELECT ${textQuery} AS q) tq` : ''}${weightJoin}
         WHERE deleted_at IS NULL AND published_at BETWEEN $2::bigint AND $1::bigint AND author_id <> $5::text${excluded}
       ) c
       ORDER BY matched DESC, weight * ${score} DESC, published_at DESC, id ASC
       LIMIT $7::int`,
      params,
    );
    return rows.map((r) => r.id);
  }

  /** Closes the underlying `Sql` handle, unless constructed with `ownsSql: false`. */
  async close(): Promise<void> {
    if (this.opts.ownsSql !== false) await this.sql.close();
  }
}
