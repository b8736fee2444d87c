/**
 * The SocialGraph + TimelineIndex contract on both SQL engines: PGlite in memory and the PostgreSQL
 * server (TEST_DATABASE_URL, in a schema of its own, dropped afterwards).
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { PostgresContentStore } from '../src/adapters/postgres/content-store.js';
import { PostgresSocialGraph } from '../src/adapters/postgres/social-graph.js';
import { PostgresTimelineIndex } from '../src/adapters/postgres/timeline-index.js';
import { migrate } from '../src/adapters/postgres/migrations.js';
import { openPglite, openPostgres, type Sql } from '../src/adapters/postgres/sql.js';
import { socialGraphContract } from './contracts/social-graph.contract.js';
import { TEST_DATABASE_URL, uniqueSchema } from './support/env.js';

const schema = uniqueSchema();
const engines: { name: string; open: () => Promise<Sql>; drop?: (sql: Sql) => Promise<void> }[] = [
  { name: 'PGlite (memory)', open: () => openPglite('memory://') },
  { name: `PostgreSQL server (schema ${schema})`, open: () => openPostgres(TEST_DATABASE_URL, { schema }), drop: (sql) => sql.exec(`DROP SCHEMA ${schema} CASCADE`) },
];

for (const engine of engines) {
  describe(engine.name, () => {
    let sql: Sql;
    beforeAll(async () => {
      sql = await engine.open();
      await migrate(sql);
    });
    afterAll(async () => {
      await engine.drop?.(sql);
      await sql.close();
    });
    socialGraphContract(engine.name, async () => {
      await sql.exec('TRUNCATE follows, blocks, fanout_pending, items, users CASCADE; UPDATE timeline_clock SET last_tid = 0');
      return {
        graph: new PostgresSocialGraph(sql),
        index: new PostgresTimelineIndex(sql),
        content: new PostgresContentStore(sql, { ownsSql: false }),
        cleanup: async () => {},
      };
    });
  });
}
