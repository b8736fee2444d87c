/**
 * Random embeddings for the discover index tests (seeded, so a failing test fails the same way again),
 * and a database holding some, written as another process would.
 */
import { rmSync } from 'node:fs';
import { InProcessSearch, type InProcessSettings } from '../../src/discover/adapters/in-process-search.js';
import type { MemoryIndexSettings } from '../../src/discover/adapters/memory-vector-index.js';
import { PostgresDiscoverIndex } from '../../src/discover/adapters/postgres-discover-index.js';
import type { EmbeddingRecord } from '../../src/discover/discover-index.js';
import { normalize, quantize } from '../../src/discover/embedding.js';
import { prng } from '../../src/kernel/prng.js';
import type { Sql } from '../../src/kernel/sql/sql.js';
import { openTestPglite } from './pglite.js';

/** Seeded random numbers and vectors; one stream, so a file's draws come in the order it makes them. */
export interface RandomVectors {
  /** Uniform in [0, 1). */
  rnd(): number;
  /** Standard normal (Box–Muller). */
  gauss(): number;
  /** A random unit vector of `dim` dimensions (the generator's by default): uniform on the sphere. */
  unit(dim?: number): Float32Array;
}

/** {@link RandomVectors} from `seed` ({@link prng}), unit vectors of `dim` dimensions by default. */
export function randomVectors(seed: number, dim: number): RandomVectors {
  const rnd = prng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd());
  return { rnd, gauss, unit: (d = dim) => normalize(Array.from({ length: d }, gauss)) };
}

/** What a client sends for `itemId` with direction `v`: its int8 codes, `source` `client`. */
export function clientEmbedding(itemId: string, v: Float32Array): EmbeddingRecord {
  return { itemId, vector: quantize(v), source: 'client' };
}

/** A test database with embeddings in it, and the index that wrote them. */
export interface WriterFixture {
  sql: Sql;
  /** Writes embeddings as another process would: its own in-process search is never started. */
  writer: PostgresDiscoverIndex;
  /** Closes the database and removes `dataDir` (the searches' snapshots). */
  close(): Promise<void>;
}

/**
 * Opens a PGlite test database (a copy of the migrated template) and writes `records` into it at `nowMs`
 * through a {@link PostgresDiscoverIndex} whose search keeps no snapshot (`dataDir: null`), so what the
 * searches under test find in `dataDir` is theirs alone.
 */
export async function openWriterFixture(
  dim: number,
  settings: InProcessSettings,
  records: readonly EmbeddingRecord[],
  nowMs: number,
  dataDir: string,
): Promise<WriterFixture> {
  const sql = await openTestPglite();
  const writer = new PostgresDiscoverIndex(sql, new InProcessSearch(sql, dim, { ...settings, dataDir: null }));
  await writer.putEmbeddings(records, nowMs);
  return {
    sql,
    writer,
    close: async () => {
      await sql.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * In-process search settings for tests: the graph's `graph`, snapshots in `dataDir` written at every chance
 * (`snapshotMin` 1, `snapshotEveryMs` 0), a catch-up only when a test asks (`syncMs` 1 h), the graph
 * shared through its snapshot (`graph`); `over` replaces any of them.
 */
export function searchSettings(
  graph: MemoryIndexSettings,
  dataDir: string | null,
  over: Partial<InProcessSettings> = {},
): InProcessSettings {
  return {
    ...graph,
    syncMs: 3_600_000,
    syncWaitMs: 60_000,
    dataDir,
    snapshotMin: 1,
    snapshotEveryMs: 0,
    shared: 'graph',
    ...over,
  };
}
