/**
 * The hot ranking's service-level contract on both store pairs: in-process counters + PGlite, and
 * Redis (1 and 3 shards) + a PostgreSQL server (a schema of the file's own). The archive's own
 * contract is in hot-archive.test.ts.
 */
import { adopt, memory, pair, pglite, postgres, redisEngine } from '../support/contract.js';
import { memoryHotCounters, redisHotCounters, shardsLabel } from '../support/adapters.js';
import { hotRankingContract } from '../contracts/hot-ranking.contract.js';

adopt(hotRankingContract, pair(memory, pglite()), (place, rules) => ({
  ...memoryHotCounters(place, rules),
  sql: place.sql,
}));

const redisAndPostgres = pair(redisEngine(), postgres());
for (const shards of [1, 3]) {
  adopt(
    hotRankingContract,
    redisAndPostgres,
    (place, rules) => ({ ...redisHotCounters(shards)(place, rules), sql: place.sql }),
    `redis (${shardsLabel(shards)}) + PostgreSQL`,
  );
}
