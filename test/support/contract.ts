/**
 * The one harness every contract suite runs through (the idea of Keyv's `@keyv/test-suite`): an
 * engine opens its store once per test file and gives each test a fresh, empty place in it, and a
 * port's suite is adopted on an engine in one call that builds the adapter from the place:
 *
 *     const engine = redisEngine();
 *     adopt(timelineStoreContract, memory, () => ({ store: new MemoryTimelineStore() }));
 *     adopt(timelineStoreContract, engine, ({ redis, keys }) => ({ store: new RedisTimelineStore(redis, keys) }));
 *
 * A contract (test/contracts/*.contract.ts) is a function `(name, open)` that registers its tests and
 * calls `open(...args)` once per test for its subject over an empty store; closing the subject is the
 * contract's business, emptying the store the engine's.
 *
 * Engines: {@link memory} (in process: nothing to open), {@link pglite} (PGlite, test/support/pglite.ts),
 * {@link postgres} (the PostgreSQL server, in a schema of the file's own, dropped after the file),
 * {@link redisEngine} (standalone Redis, a key prefix per test), {@link redisClusterEngine} (a
 * 3-master cluster started for the file, a key prefix per test) and {@link pair} (two at once).
 * Call the engine factories once, at the top level of a test file (they register `afterAll` hooks).
 */
import { afterAll, onTestFinished } from 'vitest';
import { migrate } from '../../src/compose/migrations.js';
import type { RedisClient } from '../../src/kernel/redis/client.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { TEST_DATABASE_URL, uniqueSchema } from './env.js';
import { deleteByPrefix, elapseByPrefix, fileRedis } from './redis.js';
import { fileCluster } from './redis-cluster.js';
import { openTestPglite } from './pglite.js';

/** Where a contract runs: a store opened once per file, and a fresh, empty place in it per test. */
export interface Engine<P> {
  /** Shown in the test names ("redis", "PGlite", …). */
  readonly name: string;
  /**
   * A fresh, empty place for the running test (call it inside a test or a `beforeEach`): the store
   * is opened on first use and whatever the test writes there is removed (or emptied before reuse).
   */
  place(): Promise<P>;
}

/** A port's suite: registers its tests under `name`; `open(...args)` gives one test its subject. */
export type Contract<A extends unknown[], H> = (name: string, open: (...args: A) => Promise<H>) => void;

/**
 * Adopts `contract` on `engine`: each test's subject is `build(place, ...args)` over a fresh place.
 * @param name the name in the test titles (default: the engine's).
 */
export function adopt<P, A extends unknown[], H>(
  contract: Contract<A, H>,
  engine: Engine<P>,
  build: (place: P, ...args: A) => H | Promise<H>,
  name: string = engine.name,
): void {
  contract(name, async (...args: A) => build(await engine.place(), ...args));
}

/** Nothing to open: in-process adapters keep their state in the subject itself. */
export type MemoryPlace = Record<string, never>;

/** The in-process engine. */
export const memory: Engine<MemoryPlace> = { name: 'memory', place: async () => ({}) };

/** Two engines at once (a service over two stores): `name` is "a + b", the place both places merged. */
export function pair<A extends object, B extends object>(a: Engine<A>, b: Engine<B>): Engine<A & B> {
  return { name: `${a.name} + ${b.name}`, place: async () => ({ ...(await a.place()), ...(await b.place()) }) };
}

/** A migrated SQL database whose tables hold only what the migrations put there. */
export interface SqlPlace {
  sql: Sql;
}

/** PGlite (the embedded default's engine), a copy of the migrated template opened once per file. */
export function pglite(): Engine<SqlPlace> {
  return sqlEngine('PGlite', openTestPglite, async () => {});
}

/** The PostgreSQL server (TEST_DATABASE_URL) in a schema of the file's own, dropped after the file. */
export function postgres(): Engine<SqlPlace> {
  const schema = uniqueSchema();
  return sqlEngine(
    'PostgreSQL',
    () => openPostgres(TEST_DATABASE_URL, { schema }),
    (sql) => sql.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`),
  );
}

/** Both SQL engines: PGlite and the PostgreSQL server. */
export function sqlEngines(): Engine<SqlPlace>[] {
  return [pglite(), postgres()];
}

/**
 * One handle per file; each place empties every table and puts back the rows the migrations seeded.
 * Exported for engines over another opener (test/support/pgvector.ts: PGlite with an extension).
 */
export function sqlEngine(name: string, open: () => Promise<Sql>, drop: (sql: Sql) => Promise<void>): Engine<SqlPlace> {
  let opened: Promise<{ sql: Sql; reset: () => Promise<void> }> | undefined;
  afterAll(async () => {
    const db = await opened?.catch(() => undefined);
    if (!db) return;
    try {
      await drop(db.sql);
    } finally {
      await db.sql.close();
    }
  });
  return {
    name,
    async place() {
      opened ??= (async () => {
        const sql = await open();
        await migrate(sql);
        return { sql, reset: await resetter(sql) };
      })();
      const db = await opened;
      await db.reset();
      return { sql: db.sql };
    },
  };
}

/**
 * Reads what the migrations left in the schema's tables (e.g. the `timeline_clock` row) and returns
 * a function that empties every table (`freshet_migrations` excepted) and puts those rows back, so
 * a place is as good as a freshly migrated database. It DELETEs, children before the tables their
 * foreign keys point to: on a PostgreSQL server a TRUNCATE of every table costs ~100× more (new
 * files for each), and no table has a sequence that TRUNCATE … RESTART IDENTITY would reset.
 */
async function resetter(sql: Sql): Promise<() => Promise<void>> {
  const tables = (
    await sql.query<{ t: string }>(
      `SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'freshet_migrations' ORDER BY 1`,
    )
  ).map((r) => r.t);
  const references = await sql.query<{ child: string; parent: string }>(
    `SELECT ch.relname AS child, pa.relname AS parent
     FROM pg_constraint c JOIN pg_class ch ON ch.oid = c.conrelid JOIN pg_class pa ON pa.oid = c.confrelid
     JOIN pg_namespace n ON n.oid = ch.relnamespace
     WHERE c.contype = 'f' AND n.nspname = current_schema() AND ch.oid <> pa.oid`,
  );
  const seeds: { table: string; rows: string[] }[] = [];
  for (const table of tables) {
    const rows = (await sql.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM ${table} t`)).map((r) => r.j);
    if (rows.length > 0) seeds.push({ table, rows });
  }
  const emptyAll = childrenFirst(tables, references)
    .map((t) => `DELETE FROM ${t};`)
    .join('\n');
  return async () => {
    await sql.exec(emptyAll);
    for (const { table, rows } of seeds) {
      await sql.query(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::json)`, [
        `[${rows.join(',')}]`,
      ]);
    }
  };
}

/** `tables` ordered so every table comes before the tables it references (a depth-first topological sort). */
function childrenFirst(tables: string[], references: { child: string; parent: string }[]): string[] {
  const order: string[] = [];
  const placed = new Set<string>();
  const place = (table: string, path: Set<string>) => {
    if (placed.has(table) || path.has(table)) return;
    path.add(table);
    for (const r of references) if (r.parent === table) place(r.child, path);
    placed.add(table);
    order.push(table);
  };
  for (const table of tables) place(table, new Set());
  return order;
}

/** A key prefix of its own on a Redis connection shared by the file. */
export interface RedisPlace {
  /** The file's connection (standalone or Cluster). */
  redis: RedisClient;
  /** This test's prefix (`<file prefix><n>:`); its keys are deleted when the test finishes. */
  prefix: string;
  /** `new Keys(prefix)`: one seen shard and one hot shard (build your own from `prefix` for more). */
  keys: Keys;
  /** Commands sent through `redis` so far (the whole file's: compare differences). */
  commands(): number;
  /** Deletes every key under `prefix` now (a store that lost its state). */
  flush(): Promise<void>;
  /** Lets `ms` of the server's clock pass for the keys under `prefix` (see `elapseByPrefix`). */
  elapse(ms: number): Promise<void>;
}

/** What {@link fileRedis} and {@link fileCluster} give a test file. */
interface RedisFile {
  readonly redis: RedisClient;
  commands(): number;
  nextPrefix(): string;
}

/** Standalone Redis (TEST_REDIS_URL): pass the file's `fileRedis()` to share its connection. */
export function redisEngine(file: RedisFile = fileRedis()): Engine<RedisPlace> {
  return redisOn('redis', file);
}

/** A 3-master Redis Cluster started for the file: pass the file's `fileCluster()` to share it. */
export function redisClusterEngine(file: RedisFile = fileCluster()): Engine<RedisPlace> {
  return redisOn('redis cluster', file);
}

function redisOn(name: string, file: RedisFile): Engine<RedisPlace> {
  return {
    name,
    async place() {
      const { redis } = file;
      const prefix = file.nextPrefix();
      const flush = async () => void (await deleteByPrefix(redis, prefix));
      onTestFinished(flush);
      const elapse = (ms: number) => elapseByPrefix(redis, prefix, ms);
      return { redis, prefix, keys: new Keys(prefix), commands: () => file.commands(), flush, elapse };
    },
  };
}
