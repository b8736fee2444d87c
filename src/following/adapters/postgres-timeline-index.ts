/**
 * TimelineIndex on PostgreSQL (PGlite or a server): timeline ids of published items, the pending
 * fan-outs (visibility watermark, crash sweep) and the SQL definition of a reader's timeline.
 * Schema: migration 3 (adapters/schema.ts).
 *
 * `publish` takes the one `timeline_clock` row lock inside its transaction: tids are therefore handed out
 * in commit order (domain.ts explains why the late-arrival guard needs that).
 */
import { MAX_TID, nextTids } from '../domain.js';
import type {
  PendingFanout,
  Published,
  ReaderView,
  TimelineIndex,
  TimelineItem,
  VisibleResult,
} from '../timeline-index.js';
import type { Sql } from '../../kernel/sql/sql.js';
import { moveMarker, readMarker, type ReadMarker } from '../../kernel/sql/read-markers.js';
import { itemColumns, rowToItem, type ItemRow } from '../../kernel/items/item-rows.js';

const COLUMNS = `${itemColumns('i')}, i.tid`;

/** An item row with its timeline id. */
interface Row extends ItemRow {
  tid: number | string;
}

function toTimelineItem(r: Row): TimelineItem {
  return { tid: Number(r.tid), item: rowToItem(r) };
}

/** An exclusive upper bound that SQL can hold (Infinity → 2^53). */
function upper(hi: number): number {
  return Math.min(hi, MAX_TID + 1);
}

/** The reader's timeline as a WHERE clause: $1 reader, $2 hi, $3 lo. */
const ON_TIMELINE = `
  i.author_id IN (SELECT followee_id FROM follows WHERE follower_id = $1)
  AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = $1 AND b.blocked_id = i.author_id)
  AND i.deleted_at IS NULL AND i.tid < $2::bigint AND i.tid > $3::bigint`;

/** {@link TimelineIndex} over `Sql`. Does not own the handle. */
export class PostgresTimelineIndex implements TimelineIndex {
  /** @param wallClock the wall clock of `recorded_at` (ms), injectable for tests of the sweep. */
  constructor(
    private readonly sql: Sql,
    private readonly wallClock: () => number = Date.now,
  ) {}

  /**
   * Assigns tids in one transaction (see the port's contract).
   * `nowMs` beyond the accepted time range is clamped to it (src/following/domain.ts `nextTids`).
   */
  async publish(itemIds: readonly string[], nowMs: number): Promise<Published[]> {
    const ids = [...new Set(itemIds)];
    if (ids.length === 0) return [];
    const recordedAt = Math.floor(this.wallClock());
    return this.sql.transaction(async (tx) => {
      const rows = await tx.query<{ id: string; author_id: string }>(
        `SELECT id, author_id FROM items WHERE id = ANY($1::text[]) AND tid IS NULL AND deleted_at IS NULL
         ORDER BY published_at, id FOR UPDATE`,
        [ids],
      );
      if (rows.length === 0) return [];
      const [clock] = await tx.query<{ last_tid: number | string }>(
        `SELECT last_tid FROM timeline_clock WHERE id = 1 FOR UPDATE`,
      );
      const first = nextTids(Number(clock!.last_tid), nowMs, rows.length);
      const out = rows.map((r, k) => ({ itemId: r.id, authorId: r.author_id, tid: first + k }));
      await tx.query(`UPDATE timeline_clock SET last_tid = $1::bigint WHERE id = 1`, [first + rows.length - 1]);
      const tids = out.map((p) => p.tid);
      await tx.query(
        `UPDATE items i SET tid = v.tid FROM unnest($1::text[], $2::bigint[]) AS v (id, tid) WHERE i.id = v.id`,
        [out.map((p) => p.itemId), tids],
      );
      await tx.query(
        `INSERT INTO users (id, created_at) SELECT DISTINCT a, $2::bigint FROM unnest($1::text[]) AS a ON CONFLICT (id) DO NOTHING`,
        [out.map((p) => p.authorId), Math.floor(nowMs)],
      );
      await tx.query(
        `INSERT INTO fanout_pending (tid, item_id, author_id, now_ms, recorded_at)
         SELECT v.tid, v.id, v.author, $4::bigint, $5::bigint FROM unnest($1::bigint[], $2::text[], $3::text[]) AS v (tid, id, author)`,
        [tids, out.map((p) => p.itemId), out.map((p) => p.authorId), Math.floor(nowMs), recordedAt],
      );
      return out;
    });
  }

  /**
   * `min(smallest pending tid, last assigned tid + 1)`, read in one statement (one snapshot): a tid
   * committed after this read is above the last assigned one, so it stays out of the read that asked.
   */
  async watermark(): Promise<number> {
    const [row] = await this.sql.query<{ p: number | string | null; l: number | string | null }>(
      `SELECT (SELECT min(tid) FROM fanout_pending) AS p, (SELECT last_tid FROM timeline_clock WHERE id = 1) AS l`,
    );
    const pending = row?.p == null ? Infinity : Number(row.p);
    return Math.min(pending, Number(row?.l ?? 0) + 1);
  }

  /** One UNION ALL statement (one snapshot): `k` = 'u' the reader's row, 'p' a pulled author, 'w' the watermark. */
  async readView(readerId: string): Promise<ReaderView> {
    const rows = await this.sql.query<{ k: string; author: string | null; v: number | string | null }>(
      `SELECT 'u' AS k, NULL::text AS author, last_active_at AS v FROM users WHERE id = $1
       UNION ALL
       SELECT 'p', f.followee_id, a.pull_tid FROM follows f JOIN users a ON a.id = f.followee_id
       WHERE f.follower_id = $1 AND a.pull_tid IS NOT NULL
       UNION ALL
       SELECT 'w', NULL, least((SELECT min(tid) FROM fanout_pending), (SELECT last_tid + 1 FROM timeline_clock WHERE id = 1))`,
      [readerId],
    );
    const view: ReaderView = { lastActiveAt: null, pulled: [], watermark: 1 };
    for (const r of rows) {
      if (r.k === 'u') view.lastActiveAt = r.v === null ? null : Number(r.v);
      else if (r.k === 'p') view.pulled.push({ authorId: r.author!, pullTid: Number(r.v) });
      else view.watermark = Number(r.v ?? 1);
    }
    return view;
  }

  async completeFanout(tid: number): Promise<void> {
    await this.sql.query(`DELETE FROM fanout_pending WHERE tid = $1::bigint`, [tid]);
  }

  async isPending(tid: number): Promise<boolean> {
    return (await this.sql.query(`SELECT 1 FROM fanout_pending WHERE tid = $1::bigint`, [tid])).length > 0;
  }

  async pendingOf(authorId: string): Promise<number[]> {
    const rows = await this.sql.query<{ tid: string | number }>(
      `SELECT tid FROM fanout_pending WHERE author_id = $1 ORDER BY tid`,
      [authorId],
    );
    return rows.map((r) => Number(r.tid));
  }

  async forgetPending(authorId: string): Promise<number> {
    return (await this.sql.query(`DELETE FROM fanout_pending WHERE author_id = $1 RETURNING 1`, [authorId])).length;
  }

  async unpublished(limit: number): Promise<{ itemId: string; updateTimeMs: number }[]> {
    const rows = await this.sql.query<{ id: string; update_time: string | number }>(
      `SELECT id, update_time FROM items WHERE tid IS NULL AND deleted_at IS NULL ORDER BY update_time, id LIMIT $1::int`,
      [limit],
    );
    return rows.map((r) => ({ itemId: r.id, updateTimeMs: Number(r.update_time) }));
  }

  async pendingBefore(wallBeforeMs: number, limit: number): Promise<PendingFanout[]> {
    const rows = await this.sql.query<{
      tid: string | number;
      item_id: string;
      author_id: string;
      now_ms: string | number;
      recorded_at: string | number;
    }>(
      `SELECT tid, item_id, author_id, now_ms, recorded_at FROM fanout_pending WHERE recorded_at < $1::bigint ORDER BY tid LIMIT $2::int`,
      [Math.floor(wallBeforeMs), limit],
    );
    return rows.map((r) => ({
      tid: Number(r.tid),
      itemId: r.item_id,
      authorId: r.author_id,
      nowMs: Number(r.now_ms),
      recordedAtMs: Number(r.recorded_at),
    }));
  }

  async timeline(readerId: string, hi: number, lo: number, limit: number): Promise<TimelineItem[]> {
    const rows = await this.sql.query<Row>(
      `SELECT ${COLUMNS} FROM items i WHERE ${ON_TIMELINE} ORDER BY i.tid DESC LIMIT $4::int`,
      [readerId, upper(hi), lo, limit],
    );
    return rows.map(toTimelineItem);
  }

  async timelineTids(readerId: string, hi: number, lo: number, limit: number): Promise<number[]> {
    const rows = await this.sql.query<{ tid: number | string }>(
      `SELECT i.tid FROM items i WHERE ${ON_TIMELINE} ORDER BY i.tid DESC LIMIT $4::int`,
      [readerId, upper(hi), lo, limit],
    );
    return rows.map((r) => Number(r.tid));
  }

  async timelineAfter(readerId: string, lo: number, hi: number, limit: number): Promise<TimelineItem[]> {
    const rows = await this.sql.query<Row>(
      `SELECT ${COLUMNS} FROM items i WHERE ${ON_TIMELINE} ORDER BY i.tid ASC LIMIT $4::int`,
      [readerId, upper(hi), lo, limit],
    );
    return rows.map(toTimelineItem);
  }

  async forgetMarker(readerId: string): Promise<number> {
    return (await this.sql.query('DELETE FROM timeline_markers WHERE reader_id = $1 RETURNING 1', [readerId])).length;
  }

  async marker(readerId: string): Promise<ReadMarker> {
    return readMarker(this.sql, 'timeline_markers', readerId);
  }

  async setMarker(readerId: string, lastReadId: number, nowMs: number, force: boolean) {
    return moveMarker(this.sql, 'timeline_markers', readerId, lastReadId, nowMs, force);
  }

  async visible(readerId: string, tids: readonly number[]): Promise<VisibleResult> {
    if (tids.length === 0) return { items: [], deleted: [], unfollowed: [] };
    const rows = await this.sql.query<Row & { deleted: boolean; shown: boolean }>(
      `SELECT ${COLUMNS}, i.deleted_at IS NOT NULL AS deleted,
              (EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = $1 AND f.followee_id = i.author_id)
               AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = $1 AND b.blocked_id = i.author_id)) AS shown
       FROM items i WHERE i.tid = ANY($2::bigint[])`,
      [readerId, tids],
    );
    const byTid = new Map(rows.map((r) => [Number(r.tid), r]));
    const out: VisibleResult = { items: [], deleted: [], unfollowed: [] };
    for (const t of tids) {
      const r = byTid.get(t);
      if (!r || r.deleted) out.deleted.push(t);
      else if (!r.shown) out.unfollowed.push(t);
      else out.items.push(toTimelineItem(r));
    }
    return out;
  }

  async authorTids(authorId: string, hi: number, limit: number): Promise<number[]> {
    const rows = await this.sql.query<{ tid: number | string }>(
      `SELECT tid FROM items WHERE author_id = $1 AND deleted_at IS NULL AND tid IS NOT NULL AND tid < $2::bigint
       ORDER BY tid DESC LIMIT $3::int`,
      [authorId, upper(hi), limit],
    );
    return rows.map((r) => Number(r.tid));
  }

  async tidsOf(itemIds: readonly string[]): Promise<(number | null)[]> {
    const rows = await this.sql.query<{ id: string; tid: number | string | null }>(
      `SELECT id, tid FROM items WHERE id = ANY($1::text[])`,
      [itemIds],
    );
    const byId = new Map(rows.map((r) => [r.id, r.tid == null ? null : Number(r.tid)]));
    return itemIds.map((id) => byId.get(id) ?? null);
  }
}
