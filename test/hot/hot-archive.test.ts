/**
 * The HotArchive contract on both SQL engines: PGlite in memory and the PostgreSQL server
 * (TEST_DATABASE_URL, in a schema of the file's own, dropped afterwards).
 */
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import { PostgresHotArchive } from '../../src/hot/adapters/postgres-hot-archive.js';
import { adopt, sqlEngines } from '../support/contract.js';
import { hotArchiveContract } from '../contracts/hot-archive.contract.js';

for (const engine of sqlEngines()) {
  adopt(hotArchiveContract, engine, ({ sql }) => ({
    archive: new PostgresHotArchive(sql),
    content: new PostgresContentStore(sql, { ownsSql: false }),
  }));
}
