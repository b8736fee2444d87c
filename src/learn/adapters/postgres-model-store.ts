/**
 * {@link ModelStore} on PostgreSQL or PGlite: tables `item_neighbours`, `item_popularity`, `learn_models`
 * and `item_factors` (migration 15, ./schema.ts). Neighbour rows are arrays (one row per item: a page's
 * recall reads a few hundred rows by primary key); vectors are float32 little-endian `bytea`.
 */
import type { Sql } from '../../kernel/sql/sql.js';
import type { ModelStore, StoredModel } from '../model-store.js';
import type { Neighbour } from '../neighbours.js';

/** Rows per write statement. */
const BATCH = 500;

/** The stores of the learning room's outputs. Does not own the `Sql` handle. */
export class PostgresModelStore implements ModelStore {
  constructor(private readonly sql: Sql) {}

  async writeNeighbours(
    rows: readonly { itemId: string; neighbours: readonly Neighbour[] }[],
    builtAtMs: number,
  ): Promise<void> {
    const gone = rows.filter((r) => r.neighbours.length === 0).map((r) => r.itemId);
    const kept = rows.filter((r) => r.neighbours.length > 0);
    if (gone.length > 0) await this.sql.query(`DELETE FROM item_neighbours WHERE item_id = ANY($1::text[])`, [gone]);
    for (let at = 0; at < kept.length; at += BATCH) {
      const batch = kept.slice(at, at + BATCH);
      await this.sql.query(
        `INSERT INTO item_neighbours AS n (item_id, neighbours, scores, shared, built_at)
         SELECT *, $5::bigint FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bytea[])
         ON CONFLICT (item_id) DO UPDATE
           SET neighbours = excluded.neighbours, scores = excluded.scores, shared = excluded.shared, built_at = excluded.built_at`,
        [
          batch.map((r) => r.itemId),
          batch.map((r) => r.neighbours.map((n) => n.itemId).join('\n')),
          batch.map((r) => packed(Float32Array.from(r.neighbours, (n) => n.score))),
          batch.map((r) => packed(Int32Array.from(r.neighbours, (n) => n.shared))),
          builtAtMs,
        ],
      );
    }
  }

  async neighbours(itemIds: readonly string[]): Promise<Map<string, Neighbour[]>> {
    const out = new Map<string, Neighbour[]>();
    if (itemIds.length === 0) return out;
    const rows = await this.sql.query<{ item_id: string; neighbours: string; scores: Uint8Array; shared: Uint8Array }>(
      `SELECT item_id, neighbours, scores, shared FROM item_neighbours WHERE item_id = ANY($1::text[])`,
      [itemIds],
    );
    for (const r of rows) {
      const ids = r.neighbours.split('\n');
      const scores = unpacked(r.scores, Float32Array);
      const shared = unpacked(r.shared, Int32Array);
      out.set(
        r.item_id,
        ids.map((itemId, k) => ({ itemId, score: scores[k]!, shared: shared[k]! })),
      );
    }
    return out;
  }

  async neighbourItems(): Promise<string[]> {
    const rows = await this.sql.query<{ item_id: string }>(`SELECT item_id FROM item_neighbours`);
    return rows.map((r) => r.item_id);
  }

  async writePopularity(rows: readonly { itemId: string; logScore: number | null }[]): Promise<void> {
    const gone = rows.filter((r) => r.logScore === null).map((r) => r.itemId);
    const kept = rows.filter((r) => r.logScore !== null);
    if (gone.length > 0) await this.sql.query(`DELETE FROM item_popularity WHERE item_id = ANY($1::text[])`, [gone]);
    for (let at = 0; at < kept.length; at += BATCH * 10) {
      const batch = kept.slice(at, at + BATCH * 10);
      await this.sql.query(
        `INSERT INTO item_popularity AS p (item_id, log_score)
         SELECT * FROM unnest($1::text[], $2::double precision[])
         ON CONFLICT (item_id) DO UPDATE SET log_score = excluded.log_score`,
        [batch.map((r) => r.itemId), batch.map((r) => r.logScore)],
      );
    }
  }

  async topPopular(limit: number): Promise<{ itemId: string; logScore: number }[]> {
    const rows = await this.sql.query<{ item_id: string; log_score: number }>(
      `SELECT item_id, log_score FROM item_popularity ORDER BY log_score DESC, item_id LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({ itemId: r.item_id, logScore: Number(r.log_score) }));
  }

  async popularityOf(itemIds: readonly string[]): Promise<Map<string, number>> {
    if (itemIds.length === 0) return new Map();
    const rows = await this.sql.query<{ item_id: string; log_score: number }>(
      `SELECT item_id, log_score FROM item_popularity WHERE item_id = ANY($1::text[])`,
      [itemIds],
    );
    return new Map(rows.map((r) => [r.item_id, Number(r.log_score)]));
  }

  async saveModel(model: StoredModel, itemIds: readonly string[], vectors: Float32Array): Promise<void> {
    const f = model.factors;
    const bytes = Buffer.from(vectors.buffer, vectors.byteOffset, vectors.byteLength);
    await this.sql.transaction(async (tx) => {
      await tx.query(`INSERT INTO learn_models (version, factors, trained_at, settings) VALUES ($1, $2, $3, $4)`, [
        model.version,
        f,
        model.trainedAtMs,
        JSON.stringify(model.settings),
      ]);
      for (let at = 0; at < itemIds.length; at += BATCH * 4) {
        const ids = itemIds.slice(at, at + BATCH * 4);
        const vecs = ids.map((_, k) => bytes.subarray((at + k) * f * 4, (at + k + 1) * f * 4));
        await tx.query(
          `INSERT INTO item_factors (version, item_id, vec) SELECT $1::bigint, * FROM unnest($2::text[], $3::bytea[])`,
          [model.version, ids, vecs],
        );
      }
      await tx.query(`DELETE FROM learn_models WHERE version < $1`, [model.version]);
    });
  }

  async currentModel(): Promise<StoredModel | null> {
    const rows = await this.sql.query<{
      version: number | string;
      factors: number;
      trained_at: number | string;
      settings: Record<string, number | string>;
    }>(`SELECT version, factors, trained_at, settings FROM learn_models ORDER BY version DESC LIMIT 1`);
    const r = rows[0];
    if (!r) return null;
    return { version: Number(r.version), factors: r.factors, trainedAtMs: Number(r.trained_at), settings: r.settings };
  }

  async loadVectors(version: number): Promise<{ itemIds: string[]; vectors: Float32Array }> {
    const rows = await this.sql.query<{ item_id: string; vec: Uint8Array }>(
      `SELECT item_id, vec FROM item_factors WHERE version = $1 ORDER BY item_id`,
      [version],
    );
    const bytes = rows.reduce((n, r) => n + r.vec.byteLength, 0);
    const buf = new Uint8Array(bytes);
    let o = 0;
    for (const r of rows) {
      buf.set(r.vec, o);
      o += r.vec.byteLength;
    }
    return { itemIds: rows.map((r) => r.item_id), vectors: new Float32Array(buf.buffer, 0, bytes / 4) };
  }

  async eraseItems(itemIds: readonly string[]): Promise<number> {
    if (itemIds.length === 0) return 0;
    let n = 0;
    for (const table of ['item_neighbours', 'item_popularity', 'item_factors'])
      n += (await this.sql.query(`DELETE FROM ${table} WHERE item_id = ANY($1::text[]) RETURNING 1`, [itemIds])).length;
    return n;
  }
}

/** The bytes of a typed array (little-endian on every platform Node runs on). */
function packed(a: Float32Array | Int32Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** A typed array over a copy of `bytes` (aligned: the driver's buffers may not be). */
function unpacked<T extends Float32Array | Int32Array>(bytes: Uint8Array, kind: { new (b: ArrayBuffer): T }): T {
  return new kind(Uint8Array.from(bytes).buffer);
}
