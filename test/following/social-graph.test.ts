/**
 * The SocialGraph contract on both SQL engines: PGlite in memory and the PostgreSQL server
 * (TEST_DATABASE_URL, in a schema of the file's own, dropped afterwards).
 */
import { PostgresSocialGraph } from '../../src/following/adapters/postgres-social-graph.js';
import { adopt, sqlEngines } from '../support/contract.js';
import { socialGraphContract } from '../contracts/social-graph.contract.js';

for (const engine of sqlEngines())
  adopt(socialGraphContract, engine, ({ sql }) => ({ graph: new PostgresSocialGraph(sql) }));
