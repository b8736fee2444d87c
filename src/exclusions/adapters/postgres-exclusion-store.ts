/**
 * ExclusionStore on PostgreSQL (PGlite or a server, through `Sql`): the durable part of the exclusions design's
 * exclusions — engagements and "not interested" feedback (migration 4, adapters/schema.ts) and the
 * blocks of the following graph (migration 3). Times are epoch ms (`bigint`).
 */
import { fail } from '../../kernel/errors.js';
import { compareIds } from '../../kernel/ids.js';
import type { DurableExclusions, EngagementKind, FeedbackKind } from '../domain.js';
import { DEFAULT_PREFERENCES, type Preferences } from '../preferences.js';
import type { EngagementRecord, ExclusionStore, ReaderHistory } from '../ports.js';
import type { Sql } from '../../kernel/sql/sql.js';

interface WriteRow {
  found: number | string;
  created: number | string;
  author_id: string | null;
  at: number | string | null;
}

interface LoadRow {
  k: 'e' | 'n' | 's' | 'b' | 'p';
  a: string | null;
  b: string | null;
  t: number | string | null;
  c: string[] | null;
}

/** The store; it shares the caller's `Sql` handle and never closes it. */
export class PostgresExclusionStore implements ExclusionStore {
  constructor(private readonly sql: Sql) {}

  /** One statement: the insert only happens for a live item. */
  async recordEngagement(
    readerId: string,
    itemId: string,
    kind: EngagementKind,
    nowMs: number,
  ): Promise<{ created: boolean }> {
    const rows = await this.sql.query<WriteRow>(
      `WITH it AS (SELECT id, author_id FROM items WHERE id = $2 AND deleted_at IS NULL),
            ins AS (INSERT INTO engagements (reader_id, item_id, kind, created_at)
                    SELECT $1, id, $3, $4::bigint FROM it ON CONFLICT DO NOTHING RETURNING created_at)
       SELECT (SELECT count(*) FROM it) AS found, (SELECT count(*) FROM ins) AS created,
              (SELECT author_id FROM it) AS author_id, NULL AS at`,
      [readerId, itemId, kind, Math.floor(nowMs)],
    );
    const r = rows[0]!;
    if (Number(r.found) === 0) throw fail('NOT_FOUND', `item ${itemId} not found`);
    return { created: Number(r.created) > 0 };
  }

  /**
   * One statement for the whole batch: the first element whose item is not live is found before the
   * insert, which then writes nothing (a data-modifying CTE runs whatever the outer query reads, so the
   * condition sits in the insert's own WHERE). Rows go in in batch order, so a repeat keeps its first time.
   */
  async recordEngagements(batch: readonly EngagementRecord[]): Promise<boolean[]> {
    if (batch.length === 0) return [];
    const rows = await this.sql.query<{ missing: number | string | null; created: [string, string, string][] }>(
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY
           AS x (reader_id, item_id, kind, created_at, ord)),
       missing AS (
         SELECT min(input.ord) AS ord FROM input
         LEFT JOIN items i ON i.id = input.item_id AND i.deleted_at IS NULL WHERE i.id IS NULL),
       ins AS (
         INSERT INTO engagements (reader_id, item_id, kind, created_at)
         SELECT reader_id, item_id, kind, created_at FROM input
         WHERE (SELECT ord FROM missing) IS NULL ORDER BY ord
         ON CONFLICT DO NOTHING RETURNING reader_id, item_id, kind)
       SELECT (SELECT ord FROM missing) AS missing,
              (SELECT coalesce(json_agg(json_build_array(reader_id, item_id, kind)), '[]'::json) FROM ins) AS created`,
      [
        batch.map((e) => e.readerId),
        batch.map((e) => e.itemId),
        batch.map((e) => e.kind),
        batch.map((e) => Math.floor(e.nowMs)),
      ],
    );
    const { missing, created } = rows[0]!;
    if (missing !== null) {
      const i = Number(missing) - 1;
      throw fail('NOT_FOUND', `engagements[${i}]: item ${batch[i]!.itemId} not found; nothing was recorded`);
    }
    const fresh = new Set(created.map(([r, i, k]) => `${r}\n${i}\n${k}`));
    // the first element of each (reader, item, kind) is the one inserted; a repeat in the batch was not
    return batch.map((e) => fresh.delete(`${e.readerId}\n${e.itemId}\n${e.kind}`));
  }

  /** One statement; an existing feedback keeps its first time (the author penalty runs from there). */
  async setFeedback(
    readerId: string,
    itemId: string,
    kind: FeedbackKind,
    nowMs: number,
  ): Promise<{ created: boolean; authorId: string; atMs: number }> {
    const rows = await this.sql.query<WriteRow>(
      `WITH it AS (SELECT id, author_id FROM items WHERE id = $2 AND deleted_at IS NULL),
            ins AS (INSERT INTO feedback (reader_id, item_id, kind, author_id, created_at)
                    SELECT $1, id, $3, author_id, $4::bigint FROM it ON CONFLICT DO NOTHING RETURNING created_at)
       SELECT (SELECT count(*) FROM it) AS found, (SELECT count(*) FROM ins) AS created,
              (SELECT author_id FROM it) AS author_id,
              coalesce((SELECT created_at FROM ins),
                       (SELECT created_at FROM feedback WHERE reader_id = $1 AND item_id = $2 AND kind = $3)) AS at`,
      [readerId, itemId, kind, Math.floor(nowMs)],
    );
    const r = rows[0]!;
    if (Number(r.found) === 0) throw fail('NOT_FOUND', `item ${itemId} not found`);
    return { created: Number(r.created) > 0, authorId: r.author_id!, atMs: Number(r.at) };
  }

  async deleteFeedback(readerId: string, itemId: string, kind: FeedbackKind): Promise<{ removed: boolean }> {
    const rows = await this.sql.query(
      `DELETE FROM feedback WHERE reader_id = $1 AND item_id = $2 AND kind = $3 RETURNING 1`,
      [readerId, itemId, kind],
    );
    return { removed: rows.length > 0 };
  }

  async deleteEngagement(readerId: string, itemId: string, kind: EngagementKind): Promise<{ removed: boolean }> {
    const rows = await this.sql.query(
      `DELETE FROM engagements WHERE reader_id = $1 AND item_id = $2 AND kind = $3 RETURNING 1`,
      [readerId, itemId, kind],
    );
    return { removed: rows.length > 0 };
  }

  /**
   * ONE query (UNION ALL of five index scans): the `cap` most recently engaged items (any kind), the
   * `cap` most recent "not interested" with their authors, the `cap` most recent "show less" with their
   * authors and the item's tags, up to `cap` users blocked either way, and the reader's preferences.
   */
  async load(readerId: string, cap: number): Promise<DurableExclusions> {
    const rows = await this.sql.query<LoadRow>(
      `(SELECT 'e' AS k, item_id AS a, NULL::text AS b, max(created_at) AS t, NULL::text[] AS c FROM engagements
          WHERE reader_id = $1 GROUP BY item_id ORDER BY t DESC LIMIT $2::int)
       UNION ALL
       (SELECT 'n', item_id, author_id, created_at, NULL FROM feedback
          WHERE reader_id = $1 AND kind = 'not_interested' ORDER BY created_at DESC LIMIT $2::int)
       UNION ALL
       (SELECT 's', f.item_id, f.author_id, f.created_at, i.tags FROM feedback f JOIN items i ON i.id = f.item_id
          WHERE f.reader_id = $1 AND f.kind = 'show_less' ORDER BY f.created_at DESC LIMIT $2::int)
       UNION ALL
       (SELECT 'b', u, NULL, NULL, NULL FROM (
          SELECT blocked_id AS u FROM blocks WHERE blocker_id = $1
          UNION SELECT blocker_id FROM blocks WHERE blocked_id = $1) x LIMIT $2::int)
       UNION ALL
       (SELECT 'p', NULL, doc::text, update_time, NULL FROM reader_preferences WHERE reader_id = $1)`,
      [readerId, Math.floor(cap)],
    );
    const out: DurableExclusions = {
      engaged: [],
      notInterested: [],
      blockedAuthors: [],
      showLess: [],
      preferences: null,
    };
    // UNION ALL keeps no order: most recent first, ties by id (deterministic)
    rows.sort((x, y) => Number(y.t ?? 0) - Number(x.t ?? 0) || compareIds(x.a ?? '', y.a ?? ''));
    for (const r of rows) {
      if (r.k === 'e') out.engaged.push(r.a!);
      else if (r.k === 'n') out.notInterested.push({ itemId: r.a!, authorId: r.b!, atMs: Number(r.t) });
      else if (r.k === 's') out.showLess!.push({ itemId: r.a!, authorId: r.b!, atMs: Number(r.t), tags: r.c ?? [] });
      else if (r.k === 'b') out.blockedAuthors.push(r.a!);
      else out.preferences = JSON.parse(r.b!) as Preferences;
    }
    return out;
  }

  /** Replaces the reader's preferences (one statement; `nowMs` is the update time). */
  async forgetUser(
    userId: string,
  ): Promise<{ engagements: number; feedback: number; preferences: number; mutedBy: string[] }> {
    return this.sql.transaction(async (tx) => {
      const engagements = await tx.query('DELETE FROM engagements WHERE reader_id = $1 RETURNING 1', [userId]);
      const feedback = await tx.query('DELETE FROM feedback WHERE reader_id = $1 OR author_id = $1 RETURNING 1', [
        userId,
      ]);
      const preferences = await tx.query('DELETE FROM reader_preferences WHERE reader_id = $1 RETURNING 1', [userId]);
      const muted = await tx.query<{ reader_id: string }>(
        `UPDATE reader_preferences SET doc = jsonb_set(doc, '{mutedAuthors}', (
           SELECT coalesce(jsonb_agg(e), '[]'::jsonb) FROM jsonb_array_elements(doc->'mutedAuthors') e WHERE e->>'authorId' <> $1))
         WHERE doc->'mutedAuthors' @> jsonb_build_array(jsonb_build_object('authorId', $1::text)) RETURNING reader_id`,
        [userId],
      );
      return {
        engagements: engagements.length,
        feedback: feedback.length,
        preferences: preferences.length,
        mutedBy: muted.map((r) => r.reader_id),
      };
    });
  }

  async history(readerId: string, cap: number): Promise<ReaderHistory> {
    const [engagements, feedback] = await Promise.all([
      this.sql.query<{ item_id: string; kind: EngagementKind; created_at: string | number }>(
        'SELECT item_id, kind, created_at FROM engagements WHERE reader_id = $1 ORDER BY created_at DESC LIMIT $2',
        [readerId, cap],
      ),
      this.sql.query<{ item_id: string; kind: FeedbackKind; author_id: string; created_at: string | number }>(
        'SELECT item_id, kind, author_id, created_at FROM feedback WHERE reader_id = $1 ORDER BY created_at DESC LIMIT $2',
        [readerId, cap],
      ),
    ]);
    return {
      engagements: engagements.map((r) => ({ itemId: r.item_id, kind: r.kind, atMs: Number(r.created_at) })),
      feedback: feedback.map((r) => ({
        itemId: r.item_id,
        kind: r.kind,
        authorId: r.author_id,
        atMs: Number(r.created_at),
      })),
    };
  }

  async setPreferences(readerId: string, prefs: Preferences, nowMs: number): Promise<void> {
    await this.sql.query(
      `INSERT INTO reader_preferences (reader_id, doc, update_time) VALUES ($1, $2::jsonb, $3::bigint)
       ON CONFLICT (reader_id) DO UPDATE SET doc = excluded.doc, update_time = excluded.update_time`,
      [readerId, JSON.stringify(prefs), Math.floor(nowMs)],
    );
  }

  /**
   * Applies `update` to the reader's document in one transaction with its row locked (a row of the defaults
   * is inserted first when it has none, so two first edits lock the same row): concurrent edits serialize,
   * none is lost. `update` throwing rolls everything back (nothing stored) and its error is rethrown.
   */
  async updatePreferences(
    readerId: string,
    update: (current: Preferences) => Preferences,
    nowMs: number,
  ): Promise<Preferences> {
    return this.sql.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO reader_preferences (reader_id, doc, update_time) VALUES ($1, $2::jsonb, $3::bigint)
         ON CONFLICT (reader_id) DO NOTHING`,
        [readerId, JSON.stringify(DEFAULT_PREFERENCES), Math.floor(nowMs)],
      );
      const [row] = await tx.query<{ doc: string }>(
        'SELECT doc::text AS doc FROM reader_preferences WHERE reader_id = $1 FOR UPDATE',
        [readerId],
      );
      const next = update(JSON.parse(row!.doc) as Preferences);
      await tx.query('UPDATE reader_preferences SET doc = $2::jsonb, update_time = $3::bigint WHERE reader_id = $1', [
        readerId,
        JSON.stringify(next),
        Math.floor(nowMs),
      ]);
      return next;
    });
  }

  async close(): Promise<void> {}
}
