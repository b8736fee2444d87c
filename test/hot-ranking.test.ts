/**
 * The hot ranking's service-level contract on both store pairs: in-process counters + PGlite, and
 * Redis (1 and 3 shards) + a PostgreSQL server (one schema per run). Plus the archive's own contract.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHotCounters } from '../src/adapters/memory/hot-counters.js';
import { RedisHotCounters } from '../src/adapters/redis/hot-counters.js';
import { Keys } from '../src/adapters/redis/keys.js';
import { openPglite, openPostgres, type Sql } from '../src/adapters/postgres/sql.js';
import { migrate } from '../src/adapters/postgres/migrations.js';
import { PostgresHotArchive } from '../src/adapters/postgres/hot-archive.js';
import { PostgresContentStore } from '../src/adapters/postgres/content-store.js';
import { HyperLogLog } from '../src/domain/hll.js';
import { TEST_DATABASE_URL, uniqueSchema } from './support/env.js';
import { deleteByPrefix, fileRedis } from './support/redis.js';
import { hotRankingContract } from './contracts/hot-ranking.contract.js';
import { T0 } from './contracts/hot-counters.contract.js';

const { redis, nextPrefix } = fileRedis();
const schema = uniqueSchema();
let pglite: Sql;
let postgres: Sql;

beforeAll(async () => {
  pglite = await openPglite('memory://');
  await migrate(pglite);
  postgres = await openPostgres(TEST_DATABASE_URL, { schema });
  await migrate(postgres);
});

afterAll(async () => {
  await pglite?.close();
  await postgres?.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await postgres?.close();
});

const empty = (sql: Sql) => sql.exec('TRUNCATE items, hot_counters CASCADE');

hotRankingContract('memory + PGlite', async (rules) => {
  await empty(pglite);
  return { counters: new MemoryHotCounters(rules), sql: pglite, lose: async () => new MemoryHotCounters(rules), cleanup: async () => {} };
});

for (const shards of [1, 3]) {
  hotRankingContract(`redis (${shards} shard${shards > 1 ? 's' : ''}) + PostgreSQL`, async (rules) => {
    await empty(postgres);
    const prefix = nextPrefix();
    const counters = new RedisHotCounters(redis, new Keys(prefix, 1, shards), rules);
    return {
      counters,
      sql: postgres,
      lose: async () => {
        await deleteByPrefix(redis, prefix);
        return counters;
      },
      cleanup: async () => void (await deleteByPrefix(redis, prefix)),
    };
  });
}

describe.each([
  ['PGlite', () => pglite],
  ['PostgreSQL', () => postgres],
] as const)('HotArchive contract: %s', (_name, sqlOf) => {
  it('upserts the latest snapshot, pages live rows of live items, lists expired ids, archives', async () => {
    const sql = sqlOf();
    await empty(sql);
    const content = new PostgresContentStore(sql, { ownsSql: false });
    const archive = new PostgresHotArchive(sql);
    await content.upsertItems(['a', 'b', 'c', 'd'].map((id, i) => ({ id, authorId: 'x', title: id, text: '', url: null, tags: [], publishedAt: T0 - i * 1000, popularity: 0 })), T0);
    const hll = new HyperLogLog();
    hll.add('v1');
    const snap = (itemId: string, pv: number, i: number) => ({ itemId, publishedAtMs: T0 - i * 1000, pv, uv: 1, hll: hll.toRedis(), suspicious: { repeat: i, budget: 0, flagged: 1 } });
    await archive.save([snap('a', 1, 0), snap('b', 2, 1), snap('c', 3, 2), snap('d', 4, 3)], T0);
    await archive.save([snap('a', 10, 0)], T0 + 5);
    const [a] = await archive.get(['a']);
    expect(a).toMatchObject({ pv: 10, checkpointedAtMs: T0 + 5, archivedAtMs: null, suspicious: { repeat: 0, budget: 0, flagged: 1 } });
    expect(HyperLogLog.fromRedis(a!.hll).count()).toBe(1);
    await content.deleteItem('c', T0);
    expect((await archive.live(null, 2)).map((s) => s.itemId)).toEqual(['a', 'b']);
    expect((await archive.live('b', 10)).map((s) => s.itemId)).toEqual(['d']); // c's item is deleted
    expect(await archive.expired(T0 - 1500, 10)).toEqual(['d', 'c']);
    await archive.save([snap('d', 4, 3)], T0 + 9, { archive: true });
    expect(await archive.expired(T0 - 1500, 10)).toEqual(['c']);
    expect((await archive.get(['d', 'zz']))).toMatchObject([{ itemId: 'd', archivedAtMs: T0 + 9 }]);
    expect((await archive.live(null, 10)).map((s) => s.itemId)).toEqual(['a', 'b']);
  });
});
