/**
 * HotArchive on PostgreSQL (PGlite or a server, through `Sql`): the checkpoints of the hot counters
 * (the hot-ranking design's "转存到持久存储") in table `hot_counters` (migration 2) — one row per item holding its PV,
 * UV, the visitors' HyperLogLog as a Redis HLL string (bytea), the suspicious counts, when it was
 * checkpointed and, once its counters left the hot store, when it was archived. Times are epoch ms.
 */
import type { ArchivedCounters, HotArchive } from '../hot-archive.js';
import type { CounterSnapshot } from '../hot-counters.js';
import type { Sql } from '../../kernel/sql/sql.js';

/** Rows per INSERT statement (9 parameters a row). */
const CHUNK_ROWS = 500;

interface Row {
  item_id: string;
  published_at: number | string;
  pv: number | string;
  uv: number | string;
  uv_hll: Uint8Array;
  sus_repeat: number | string;
  sus_budget: number | string;
  sus_flagged: number | string;
  checkpointed_at: number | string;
  archived_at: number | string | null;
}

const COLUMNS =
  'h.item_id, h.published_at, h.pv, h.uv, h.uv_hll, h.sus_repeat, h.sus_budget, h.sus_flagged, h.checkpointed_at, h.archived_at';

function toSnapshot(r: Row): CounterSnapshot {
  return {
    itemId: r.item_id,
    publishedAtMs: Number(r.published_at),
    pv: Number(r.pv),
    uv: Number(r.uv),
    hll: Buffer.from(r.uv_hll),
    suspicious: { repeat: Number(r.sus_repeat), budget: Number(r.sus_budget), flagged: Number(r.sus_flagged) },
  };
}

/**
 * The PostgreSQL hot archive, on a migrated `Sql` it does not own (the container closes it).
 * Every method may throw FreshetError `STORE_UNAVAILABLE` (database unreachable).
 */
export class PostgresHotArchive implements HotArchive {
  constructor(private readonly sql: Sql) {}

  /**
   * Upserts in one transaction, {@link CHUNK_ROWS} rows per statement; the last snapshot of an id wins.
   * `keepNewer`: a stored row with a count above the snapshot's, or archived, is left as it is.
   */
  async save(
    snapshots: readonly CounterSnapshot[],
    nowMs: number,
    opts: { archive?: boolean; keepNewer?: boolean } = {},
  ): Promise<void> {
    const rows = [...new Map(snapshots.map((s) => [s.itemId, s])).values()];
    if (rows.length === 0) return;
    const archive = opts.archive === true;
    const guard = opts.keepNewer
      ? `WHERE h.archived_at IS NULL AND h.pv <= excluded.pv AND h.sus_repeat <= excluded.sus_repeat
           AND h.sus_budget <= excluded.sus_budget AND h.sus_flagged <= excluded.sus_flagged`
      : '';
    await this.sql.transaction(async (tx) => {
      for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
        const params: unknown[] = [Math.floor(nowMs)];
        const tuples = rows.slice(start, start + CHUNK_ROWS).map((s) => {
          const p = params.length;
          params.push(
            s.itemId,
            Math.floor(s.publishedAtMs),
            s.pv,
            s.uv,
            s.hll,
            s.suspicious.repeat,
            s.suspicious.budget,
            s.suspicious.flagged,
          );
          return `($${p + 1}::text, $${p + 2}::bigint, $${p + 3}::bigint, $${p + 4}::bigint, $${p + 5}::bytea,
                   $${p + 6}::bigint, $${p + 7}::bigint, $${p + 8}::bigint)`;
        });
        await tx.query(
          `INSERT INTO hot_counters AS h (item_id, published_at, pv, uv, uv_hll, sus_repeat, sus_budget, sus_flagged, checkpointed_at, archived_at)
           SELECT v.*, $1::bigint, ${archive ? '$1::bigint' : 'NULL::bigint'}
           FROM (VALUES ${tuples.join(',\n')}) AS v (item_id, published_at, pv, uv, uv_hll, sus_repeat, sus_budget, sus_flagged)
           ON CONFLICT (item_id) DO UPDATE SET
             published_at = excluded.published_at, pv = excluded.pv, uv = excluded.uv, uv_hll = excluded.uv_hll,
             sus_repeat = excluded.sus_repeat, sus_budget = excluded.sus_budget, sus_flagged = excluded.sus_flagged,
             checkpointed_at = excluded.checkpointed_at,
             archived_at = ${archive ? 'excluded.archived_at' : 'NULL'}
           ${guard}`,
          params,
        );
      }
    });
  }

  /** Up to `limit` rows not archived whose item exists and is not deleted, by id, after `afterId`. */
  async live(afterId: string | null, limit: number): Promise<CounterSnapshot[]> {
    const rows = await this.sql.query<Row>(
      `SELECT ${COLUMNS} FROM hot_counters h JOIN items i ON i.id = h.item_id
       WHERE h.archived_at IS NULL AND i.deleted_at IS NULL AND ($1::text IS NULL OR h.item_id > $1::text)
       ORDER BY h.item_id LIMIT $2::int`,
      [afterId, Math.max(0, Math.floor(limit))],
    );
    return rows.map(toSnapshot);
  }

  /** Ids of rows not archived published before `cutoffMs`, oldest first (ties by id). */
  async expired(cutoffMs: number, limit: number): Promise<string[]> {
    const rows = await this.sql.query<{ item_id: string }>(
      `SELECT item_id FROM hot_counters WHERE archived_at IS NULL AND published_at < $1::bigint
       ORDER BY published_at, item_id LIMIT $2::int`,
      [Math.floor(cutoffMs), Math.max(0, Math.floor(limit))],
    );
    return rows.map((r) => r.item_id);
  }

  /** Stored rows of `itemIds`, in the order asked; unknown ids skipped. */
  async get(itemIds: readonly string[]): Promise<ArchivedCounters[]> {
    const unique = [...new Set(itemIds)];
    if (unique.length === 0) return [];
    const rows = await this.sql.query<Row>(`SELECT ${COLUMNS} FROM hot_counters h WHERE h.item_id = ANY($1::text[])`, [
      unique,
    ]);
    const byId = new Map(rows.map((r) => [r.item_id, r]));
    return unique.flatMap((id) => {
      const r = byId.get(id);
      if (!r) return [];
      return [
        {
          ...toSnapshot(r),
          checkpointedAtMs: Number(r.checkpointed_at),
          archivedAtMs: r.archived_at === null ? null : Number(r.archived_at),
        },
      ];
    });
  }
}
