/**
 * The DiscoverIndex contract (test/contracts/discover-index.contract.ts) adopted on every vector search
 * behind it: pgvector on PGlite (`@electric-sql/pglite-pgvector` on a copy of the migrated template,
 * test/support/pgvector.ts), the in-process index on PGlite (the same copy, the extension dropped)
 * and on the PostgreSQL server (test/support/contract.ts engines). The in-process index runs with an exact-scan limit of 500, so the contract's 400-vector
 * suite is served by its exact scan and its 2,000-vector suite by its HNSW graph. pgvector is set up
 * after the fixture is written, so its HNSW index is built in bulk; the fresh-insert case still goes
 * through its trigger and an incremental insert. Also which search `auto` and `memory` choose on PGlite
 * with pgvector (the PostgreSQL server's side is in test/discover/discover-vector-index.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresDiscoverIndex } from '../../src/discover/adapters/postgres-discover-index.js';
import { InProcessSearch, type InProcessSettings } from '../../src/discover/adapters/in-process-search.js';
import { PgvectorSearch } from '../../src/discover/adapters/pgvector-search.js';
import { CONTRACT_DIM, discoverIndexContract } from '../contracts/discover-index.contract.js';
import { adopt, postgres, type Engine, type SqlPlace } from '../support/contract.js';
import { describe, expect, it } from 'vitest';
import { resolveVectorSearch, type VectorSearchSettings } from '../../src/discover/adapters/choose-search.js';
import { normalize, quantize } from '../../src/discover/embedding.js';
import { pgvectorEngine } from '../support/pgvector.js';

const memorySettings = (dataDir: string | null): InProcessSettings => ({
  exactMax: 500,
  connectivity: 16,
  expansionAdd: 64,
  expansionSearch: 200,
  syncMs: 3_600_000, // the contract calls sync() itself: no timed catch-up
  syncWaitMs: 0,
  dataDir,
  snapshotMin: 1_000_000,
  snapshotEveryMs: 600_000,
  shared: 'graph',
});
/** Small graphs build fast in WebAssembly (m 16 / ef_construction 64 cost 3× the build CPU at 2,000 vectors). */
const pgvectorSettings = { m: 8, efConstruction: 32, efSearch: 200 };

const vectorEngine = pgvectorEngine();
adopt(discoverIndexContract, vectorEngine, ({ sql }) => {
  const mine = new PgvectorSearch(sql, CONTRACT_DIM, pgvectorSettings);
  const theirs = new PgvectorSearch(sql, CONTRACT_DIM, pgvectorSettings);
  return {
    sql,
    index: new PostgresDiscoverIndex(sql, mine),
    other: new PostgresDiscoverIndex(sql, theirs),
    settle: async () => {
      await mine.setup(); // builds the HNSW index over the rows already written
      await theirs.setup(); // another process starting: finds everything set up
    },
    cleanup: async () => {},
  };
});

describe('which vector search a deployment gets on PGlite with pgvector', () => {
  const choose = (choice: VectorSearchSettings['choice']): VectorSearchSettings => ({
    choice,
    memory: memorySettings(null),
    pgvector: pgvectorSettings,
  });

  it('auto: pgvector (0.8), set up over what was written before and answering; memory: the in-process index', async () => {
    const { sql } = await vectorEngine.place();
    const v = normalize(Array.from({ length: CONTRACT_DIM }, (_, i) => Math.sin(i + 1)));
    const writer = new PostgresDiscoverIndex(sql, new PgvectorSearch(sql, CONTRACT_DIM, pgvectorSettings));
    await writer.putEmbeddings([{ itemId: 'pv', vector: quantize(v), source: 'client' }], 0);
    const auto = await resolveVectorSearch(sql, CONTRACT_DIM, choose('auto'));
    expect(auto).toBeInstanceOf(PgvectorSearch);
    expect(auto.isReady()).toBe(true);
    expect(auto.stats()).toMatchObject({ kind: 'pgvector', size: 1 }); // backfilled
    expect((await auto.search(v, 5)).map((h) => h.itemId)).toEqual(['pv']);
    const memory = await resolveVectorSearch(sql, CONTRACT_DIM, choose('memory'));
    expect(memory).toBeInstanceOf(InProcessSearch);
    await memory.close();
  });
});

/**
 * PGlite as the embedded default has it: the file's copy of the template (the pgvector engine's, one
 * PGlite start saved) with the extension dropped — the in-process index needs none.
 */
const plainPglite: Engine<SqlPlace> = {
  name: 'PGlite',
  async place() {
    const place = await vectorEngine.place();
    await place.sql.exec('DROP EXTENSION IF EXISTS vector CASCADE');
    return place;
  },
};

for (const engine of [plainPglite, postgres()]) {
  adopt(
    discoverIndexContract,
    engine,
    ({ sql }) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'freshet-vindex-'));
      const mine = new InProcessSearch(sql, CONTRACT_DIM, memorySettings(dataDir));
      const theirs = new InProcessSearch(sql, CONTRACT_DIM, memorySettings(null));
      return {
        sql,
        index: new PostgresDiscoverIndex(sql, mine),
        other: new PostgresDiscoverIndex(sql, theirs),
        settle: async () => {
          for (const search of [mine, theirs]) {
            await search.sync();
            await search.ready();
          }
        },
        cleanup: async () => {
          await mine.close();
          await theirs.close();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
    `in-process (usearch) on ${engine.name}`,
  );
}
