/**
 * {@link InteractionStore} on PostgreSQL or PGlite (table `interactions`, migration 15).
 *
 * Writes are upserts that OR the new kinds into the pair's and keep the later time; each stamps the
 * row's `changed` with the writing transaction's id. The change feed reads by watermark exactly as the
 * discover index's does (src/discover/adapters/postgres-embedding-feed.ts): the watermark is the snapshot
 * taken before a read, and the next read takes `changed >= xmax OR changed = ANY(xip)`, so nothing
 * committed is ever missed whatever the clocks say. Signal writes use `relaxedQuery` (asynchronous
 * commit: a crash may lose the last few hundred ms of signals, never half of a batch), like the discover
 * feed's reader signals.
 */
import type { Sql } from '../../kernel/sql/sql.js';
import { AutoAnalyze } from '../../kernel/sql/auto-analyze.js';
import { CoalescedWrites } from '../../kernel/sql/coalesced-writes.js';
import { kindBit, type InteractionRow, type InteractionStore, type Signal } from '../interactions.js';

/** Rows per page of a change-feed read. */
const PAGE = 5000;
/** Pairs per upsert statement. */
const BATCH = 1000;

interface Row {
  reader_id: string;
  item_id: string;
  kinds: number;
  at: number | string;
}

const toRow = (r: Row): InteractionRow => ({
  readerId: r.reader_id,
  itemId: r.item_id,
  kinds: Number(r.kinds),
  atMs: Number(r.at),
});

/** The interactions of the learning room on PostgreSQL or PGlite. Does not own the `Sql` handle. */
export class PostgresInteractionStore implements InteractionStore {
  private readonly analyze: AutoAnalyze;
  /**
   * The signals of concurrent requests (a view each), upserted together (group commit,
   * kernel/sql/coalesced-writes.ts): one statement for many views instead of a pool connection each.
   */
  private readonly writes = new CoalescedWrites<Signal>((rows) => this.upsert(rows), BATCH);

  constructor(private readonly sql: Sql) {
    this.analyze = new AutoAnalyze(sql);
  }

  add(signals: readonly Signal[]): Promise<void> {
    return this.writes.write(signals);
  }

  /**
   * One row per (reader, item) of `signals` (a statement may not touch a row twice), upserted in batches:
   * kinds or-ed in, the latest time kept — the same rows written again change nothing.
   */
  private async upsert(signals: readonly Signal[]): Promise<void> {
    const pairs = new Map<string, { readerId: string; itemId: string; kinds: number; atMs: number }>();
    for (const s of signals) {
      const key = `${s.readerId}\n${s.itemId}`;
      const p = pairs.get(key) ?? { readerId: s.readerId, itemId: s.itemId, kinds: 0, atMs: s.atMs };
      p.kinds |= kindBit(s.kind);
      p.atMs = Math.max(p.atMs, s.atMs);
      pairs.set(key, p);
    }
    const all = [...pairs.values()];
    for (let at = 0; at < all.length; at += BATCH) {
      const batch = all.slice(at, at + BATCH);
      await this.sql.relaxedQuery(
        `INSERT INTO interactions AS i (reader_id, item_id, kinds, at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::smallint[], $4::bigint[])
         ON CONFLICT (reader_id, item_id) DO UPDATE
           SET kinds = i.kinds | excluded.kinds, at = greatest(i.at, excluded.at), changed = pg_current_xact_id()
           WHERE i.kinds | excluded.kinds <> i.kinds OR excluded.at > i.at`,
        [batch.map((p) => p.readerId), batch.map((p) => p.itemId), batch.map((p) => p.kinds), batch.map((p) => p.atMs)],
      );
    }
    await this.analyze.wrote('interactions', all.length, 'VACUUM ANALYZE');
  }

  async remove(readerId: string, itemId: string, kinds: number): Promise<number> {
    const rows = await this.sql.query(
      `UPDATE interactions SET kinds = kinds & ~$3::smallint, changed = pg_current_xact_id()
       WHERE reader_id = $1 AND item_id = $2 AND kinds & $3::smallint <> 0 RETURNING 1`,
      [readerId, itemId, kinds],
    );
    return rows.length;
  }

  async history(readerId: string, limit: number): Promise<InteractionRow[]> {
    const rows = await this.sql.query<Row>(
      `SELECT reader_id, item_id, kinds, at FROM interactions
       WHERE reader_id = $1 AND kinds <> 0 ORDER BY at DESC, item_id COLLATE "C" LIMIT $2`,
      [readerId, limit],
    );
    return rows.map(toRow);
  }

  async watermark(): Promise<string> {
    const rows = await this.sql.query<{ w: string }>(`SELECT pg_current_snapshot()::text AS w`);
    return rows[0]!.w;
  }

  async changes(since: string | null, apply: (rows: InteractionRow[]) => void | Promise<void>): Promise<number> {
    const [, xmax = null, xip = ''] = since === null ? [] : since.split(':');
    const pending = xip ? xip.split(',') : [];
    let after: { changed: string; reader: string; item: string } | null = null;
    let total = 0;
    for (;;) {
      const rows: (Row & { changed: string })[] = await this.sql.query(
        `SELECT reader_id, item_id, kinds, at, changed::text AS changed FROM interactions
         WHERE ($1::xid8 IS NULL OR changed >= $1::xid8 OR changed = ANY($2::xid8[]))
           AND ($3::xid8 IS NULL OR (changed, reader_id COLLATE "C", item_id COLLATE "C") > ($3::xid8, $4::text COLLATE "C", $5::text COLLATE "C"))
         ORDER BY changed, reader_id COLLATE "C", item_id COLLATE "C" LIMIT $6::int`,
        [xmax, pending, after?.changed ?? null, after?.reader ?? null, after?.item ?? null, PAGE],
      );
      if (rows.length === 0) break;
      total += rows.length;
      await apply(rows.map(toRow));
      const last = rows[rows.length - 1]!;
      after = { changed: last.changed, reader: last.reader_id, item: last.item_id };
      if (rows.length < PAGE) break;
    }
    return total;
  }

  async erasures(): Promise<number> {
    const rows = await this.sql.query<{ n: number | string }>(`SELECT erasures AS n FROM learn_state`);
    return Number(rows[0]?.n ?? 0);
  }

  async eraseReader(readerId: string): Promise<number> {
    return this.sql.transaction(async (tx) => {
      const rows = await tx.query(`DELETE FROM interactions WHERE reader_id = $1 RETURNING 1`, [readerId]);
      if (rows.length > 0) await tx.query(`UPDATE learn_state SET erasures = erasures + 1`);
      return rows.length;
    });
  }

  async exportReader(readerId: string, limit: number): Promise<InteractionRow[]> {
    const rows = await this.sql.query<Row>(
      `SELECT reader_id, item_id, kinds, at FROM interactions WHERE reader_id = $1
       ORDER BY at DESC, item_id COLLATE "C" LIMIT $2`,
      [readerId, limit],
    );
    return rows.map(toRow);
  }

  async expire(beforeMs: number, tombstonesBeforeMs: number, limit = 5000): Promise<[number, number]> {
    const tombstoned = await this.sql.query(
      `UPDATE interactions SET kinds = 0, changed = pg_current_xact_id()
       WHERE ctid = ANY(ARRAY(SELECT ctid FROM interactions WHERE at < $1 AND kinds <> 0 LIMIT $2)) RETURNING 1`,
      [beforeMs, limit],
    );
    const deleted = await this.sql.query(
      `DELETE FROM interactions
       WHERE ctid = ANY(ARRAY(SELECT ctid FROM interactions WHERE kinds = 0 AND at < $1 LIMIT $2)) RETURNING 1`,
      [tombstonesBeforeMs, limit],
    );
    return [tombstoned.length, deleted.length];
  }
}
