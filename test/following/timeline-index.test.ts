/**
 * The TimelineIndex contract on both SQL engines: PGlite in memory and the PostgreSQL server
 * (TEST_DATABASE_URL, in a schema of the file's own, dropped afterwards).
 */
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import { PostgresSocialGraph } from '../../src/following/adapters/postgres-social-graph.js';
import { PostgresTimelineIndex } from '../../src/following/adapters/postgres-timeline-index.js';
import { adopt, sqlEngines } from '../support/contract.js';
import { timelineIndexContract } from '../contracts/timeline-index.contract.js';

for (const engine of sqlEngines()) {
  adopt(timelineIndexContract, engine, ({ sql }, wall) => ({
    index: new PostgresTimelineIndex(sql, () => wall.now()),
    graph: new PostgresSocialGraph(sql),
    content: new PostgresContentStore(sql, { ownsSql: false }),
  }));
}
