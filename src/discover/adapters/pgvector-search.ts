/**
 * PgvectorSearch: the VectorSearch of a PostgreSQL that has the `vector` extension, version 0.8 or
 * later (managed PostgreSQL services ship it; on PGlite it is `@electric-sql/pglite-pgvector`, 0.8.7).
 * 0.8 is required for iterative index scans: without them a search returns at most `ef_search`
 * (≤ 1,000) rows, which `PostgresDiscoverIndex.nearest` would take for an exhausted index.
 *
 * Set up at start ({@link PgvectorSearch.setup}, idempotent, under an advisory lock so several
 * processes starting together do it once): the extension; an `embedding halfvec(dim)` column on
 * `item_embeddings` (dropped and re-added when the dimension changed); a trigger that fills it from
 * the int8 codes on every write (`freshet_int8_halfvec`; `halfvec` holds −128…127 exactly, so its
 * cosine is the codes' cosine, whoever writes the row); a backfill of rows written before (not the empty rows
 * of deleted items: migration 17); and the HNSW index
 * `item_embeddings_hnsw_idx` (`halfvec_cosine_ops`, m / ef_construction configured). The table stays
 * the truth — the column and index are derived from `vec`, and the server keeps them current itself,
 * so `sync` has nothing to do.
 *
 * A search of k is one transaction, `ORDER BY embedding <=> q LIMIT k` with (pgvector README,
 * "Iterative Index Scans", 0.8):
 * - `hnsw.ef_search` = the configured breadth, or k when larger, at most pgvector's 1,000;
 * - `hnsw.iterative_scan = relaxed_order`: the scan goes on past ef_search until k rows are found or
 *   it reaches `hnsw.max_scan_tuples` tuples visited or `work_mem × hnsw.scan_mem_multiplier` bytes;
 * - `hnsw.max_scan_tuples` = max(20,000 (pgvector's default), {@link SCAN_TUPLES_PER_ROW} × k) and a
 *   memory multiplier sized for that many tuples (at most pgvector's 1,000), so the caps do not cut a
 *   search short of k while the index holds more.
 * Should the HNSW scan still come back short of k (a graph region it cannot reach within the caps), an
 * exact scan (`enable_indexscan = off`: every row, top k by distance) answers instead, so fewer than
 * k rows always means every indexed embedding was returned — the port's promise. That costs a scan of
 * the table, and happens when the index holds fewer than k embeddings or a search goes very deep.
 */
import { fail } from '../../kernel/errors.js';
import type { Sql } from '../../kernel/sql/sql.js';
import type { VectorHit, VectorSearch, VectorSearchStats } from '../vector-search.js';

/** Tunables (config `FRESHET_DISCOVER_HNSW_*`). */
export interface PgvectorSettings {
  /** HNSW links per node (`m`). */
  m: number;
  /** Candidate list while building (`ef_construction`). */
  efConstruction: number;
  /** Candidate list while searching (`hnsw.ef_search`). */
  efSearch: number;
}

/** Largest dimension pgvector's HNSW indexes for `halfvec`. */
const MAX_HALFVEC_DIM = 4000;
/** Oldest pgvector with iterative index scans (see the module doc). */
export const MIN_PGVECTOR = [0, 8] as const;
/** pgvector's largest `hnsw.ef_search`. */
const MAX_EF_SEARCH = 1000;
/** pgvector's default `hnsw.max_scan_tuples`: the floor of ours. */
const MIN_SCAN_TUPLES = 20_000;
/** Tuples a search of k may visit per row wanted (an HNSW scan visits several neighbours per row it returns). */
export const SCAN_TUPLES_PER_ROW = 10;
/** pgvector's largest `hnsw.scan_mem_multiplier`. */
const MAX_MEM_MULTIPLIER = 1000;
/** Rows per backfill statement. */
const BACKFILL = 10_000;

const toInt8 = (b: Uint8Array): Int8Array => new Int8Array(b.buffer, b.byteOffset, b.byteLength);
const literal = (v: Float32Array): string => `[${Array.from(v, (x) => Math.fround(x)).join(',')}]`;

/** Whether `version` (e.g. `0.8.7`) is at least {@link MIN_PGVECTOR}. */
export function pgvectorSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > MIN_PGVECTOR[0] || (major === MIN_PGVECTOR[0] && minor >= MIN_PGVECTOR[1]);
}

/** pgvector behind the VectorSearch port. Does not own the `Sql` handle. */
export class PgvectorSearch implements VectorSearch {
  private size = 0;
  private setUp = false;
  /** The server's `work_mem` in bytes (read at set-up; PostgreSQL's default until then). */
  private workMemBytes = 4 * 1024 * 1024;

  constructor(
    private readonly sql: Sql,
    readonly dim: number,
    readonly settings: PgvectorSettings,
  ) {}

  /**
   * The pgvector version this server has, or else can install; null when neither. Whether it can be
   * used is {@link unusable}'s business; a role that may not create the extension fails {@link setup}.
   */
  static async detect(sql: Sql): Promise<string | null> {
    const rows = await sql.query<{ v: string | null }>(
      `SELECT COALESCE((SELECT extversion FROM pg_extension WHERE extname = 'vector'),
                       (SELECT default_version FROM pg_available_extensions WHERE name = 'vector')) AS v`,
    );
    return rows[0]?.v ?? null;
  }

  /** Why pgvector `version` (null: none) cannot serve embeddings of `dim`, or null when it can. */
  static unusable(version: string | null, dim: number): string | null {
    if (!version) return 'the database has no vector extension (pgvector)';
    if (!pgvectorSupported(version))
      return `the database has pgvector ${version}; ${MIN_PGVECTOR.join('.')} or later is needed (iterative index scans)`;
    if (dim > MAX_HALFVEC_DIM)
      return `pgvector indexes at most ${MAX_HALFVEC_DIM} dimensions, FRESHET_EMBEDDING_DIM is ${dim}`;
    return null;
  }

  /** Creates what the search needs (see the module doc). Building the HNSW index over a large table takes minutes. */
  async setup(): Promise<void> {
    const dim = this.dim;
    await this.sql.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('freshet.discover.pgvector'))`);
      await tx.exec(`CREATE EXTENSION IF NOT EXISTS vector`);
      const col = await tx.query<{ t: string }>(
        `SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute
         WHERE attrelid = 'item_embeddings'::regclass AND attname = 'embedding' AND NOT attisdropped`,
      );
      if (col[0] && col[0].t !== `halfvec(${dim})`)
        await tx.exec(
          `DROP INDEX IF EXISTS item_embeddings_hnsw_idx; ALTER TABLE item_embeddings DROP COLUMN embedding`,
        );
      await tx.exec(`
        ALTER TABLE item_embeddings ADD COLUMN IF NOT EXISTS embedding halfvec(${dim});
        CREATE OR REPLACE FUNCTION freshet_int8_halfvec(v bytea) RETURNS halfvec LANGUAGE sql IMMUTABLE STRICT AS $fn$
          SELECT array_agg(((get_byte(v, i) # 128) - 128)::real ORDER BY i)::halfvec FROM generate_series(0, length(v) - 1) i
        $fn$;
        CREATE OR REPLACE FUNCTION freshet_embedding_halfvec() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          NEW.embedding := CASE WHEN NEW.dim = ${dim} THEN freshet_int8_halfvec(NEW.vec) END;
          RETURN NEW;
        END $fn$;
        CREATE OR REPLACE TRIGGER item_embeddings_halfvec BEFORE INSERT OR UPDATE OF vec, dim ON item_embeddings
          FOR EACH ROW EXECUTE FUNCTION freshet_embedding_halfvec();`);
    });
    // the backfill sets the column itself (the trigger fires on writes of vec and dim only): a
    // set-based UPDATE, ~4× cheaper than firing the PL/pgSQL trigger per row
    for (;;) {
      const rows = await this.sql.query(
        `UPDATE item_embeddings SET embedding = freshet_int8_halfvec(vec) WHERE item_id IN (
           SELECT item_id FROM item_embeddings
           WHERE embedding IS NULL AND dim = $1::int AND octet_length(vec) > 0 ORDER BY item_id LIMIT $2::int)
         RETURNING 1`,
        [dim, BACKFILL],
      );
      if (rows.length < BACKFILL) break;
    }
    const { m, efConstruction } = this.settings;
    await this.sql.exec(
      `CREATE INDEX IF NOT EXISTS item_embeddings_hnsw_idx ON item_embeddings USING hnsw (embedding halfvec_cosine_ops) WITH (m = ${m}, ef_construction = ${efConstruction})`,
    );
    const [n, mem] = await Promise.all([
      this.sql.query<{ n: number | string }>(`SELECT count(*) AS n FROM item_embeddings WHERE embedding IS NOT NULL`),
      this.sql.query<{ b: number | string }>(
        `SELECT setting::bigint * 1024 AS b FROM pg_settings WHERE name = 'work_mem' AND unit = 'kB'`,
      ),
    ]);
    this.size = Number(n[0]?.n ?? 0);
    if (mem[0]) this.workMemBytes = Number(mem[0].b);
    this.setUp = true;
  }

  /** Whether {@link setup} completed in this process. */
  isReady(): boolean {
    return this.setUp;
  }

  /** Nothing to warm: the set-up runs when the search is chosen (adapters/choose-search.ts). */
  warm(): void {}

  async search(query: Float32Array, k: number): Promise<VectorHit[]> {
    if (query.length !== this.dim)
      throw fail('INVALID_INPUT', `query has ${query.length} components, the index ${this.dim}`);
    if (k <= 0) return [];
    const limit = Math.floor(k);
    const q = literal(query);
    const ef = Math.min(MAX_EF_SEARCH, Math.max(this.settings.efSearch, limit));
    const tuples = Math.min(2 ** 31 - 1, Math.max(MIN_SCAN_TUPLES, SCAN_TUPLES_PER_ROW * limit));
    // bytes a visited tuple holds in the scan's memory: its halfvec (2 B a component) and ~256 B of bookkeeping
    const mem = Math.min(
      MAX_MEM_MULTIPLIER,
      Math.max(1, Math.ceil((tuples * (2 * this.dim + 256)) / this.workMemBytes)),
    );
    let rows = await this.nearest(
      `SET LOCAL hnsw.ef_search = ${ef}; SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.max_scan_tuples = ${tuples}; SET LOCAL hnsw.scan_mem_multiplier = ${mem}`,
      q,
      limit,
    );
    if (rows.length < limit) rows = await this.nearest('SET LOCAL enable_indexscan = off', q, limit);
    return rows.map((r) => ({ itemId: r.item_id, vector: toInt8(r.vec) }));
  }

  /** `ORDER BY embedding <=> q LIMIT k` in a transaction under `settings`. */
  private nearest(settings: string, q: string, k: number): Promise<{ item_id: string; vec: Uint8Array }[]> {
    return this.sql.transaction(async (tx) => {
      await tx.exec(settings);
      return tx.query<{ item_id: string; vec: Uint8Array }>(
        `SELECT item_id, vec FROM item_embeddings WHERE embedding IS NOT NULL ORDER BY embedding <=> $1::halfvec LIMIT $2::int`,
        [q, k],
      );
    });
  }

  async sync(): Promise<void> {}

  wrote(): void {}

  /** Nothing on disk of its own: PostgreSQL holds the index (an emptied row leaves it with its update). */
  async purge(): Promise<number> {
    return 0;
  }

  stats(): VectorSearchStats {
    return { kind: 'pgvector', size: this.size, bytes: 0 };
  }

  async close(): Promise<void> {}
}
