/**
 * Opening the stores a Freshet runs on: the SQL store (PostgreSQL, or PGlite under the data folder's
 * lock) with its migrations, the request-path and job pools, the Redis handle (standalone or Cluster,
 * outages logged at most every {@link REDIS_OUTAGE_LOG_MS}), and the start-up probe of each. open.ts
 * composes them with the capabilities.
 */
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import type { Logger as Pino } from 'pino';
import type { Config } from './config.js';
import { openPglite, openPostgres, type Sql } from '../kernel/sql/sql.js';
import { lockDataDir, type DataDirLock } from './data-dir-lock.js';
import { createRedis, type RedisClient } from '../kernel/redis/client.js';
import { Keys } from '../kernel/redis/keys.js';
import { probeRedis } from '../observe/store-health.js';
import type { RedisHandle } from '../kernel/stores.js';
import { privateDir, restrictModes } from '../kernel/data-dir-modes.js';
import { migrate } from './migrations.js';

/**
 * Opens the SQL store the configuration names and runs pending migrations. The embedded PGlite
 * database is opened only under the data folder's lock (src/compose/data-dir-lock.ts), released when
 * the returned store closes: a second process opening the same folder fails at once.
 * A PostgreSQL server's calls get `timeoutMs` (default: the job deadline, so migrations are never cut;
 * {@link openFreshet} opens the request-path pool beside it with the request deadline). PGlite runs in
 * this process: no network to wait on, no deadline.
 * @throws DataDirLockedError when another process (or an earlier open in this one) holds the embedded
 *   data folder; FreshetError `STORE_UNAVAILABLE` when the database cannot be opened.
 */
export async function openSql(config: Config, timeoutMs = config.deadlines.jobMs): Promise<Sql> {
  let sql: Sql;
  if (config.databaseUrl) sql = await openPostgres(config.databaseUrl, { timeoutMs });
  else {
    privateDir(config.dataDir); // 0700: the data folder is the running user's only
    const lock = lockDataDir(config.dataDir);
    try {
      sql = releasingOnClose(await openPglite(join(config.dataDir, 'pgdata')), lock, config.dataDir);
      restrictModes(config.dataDir); // PGlite writes its files 0666: 0600 / 0700 once it is open
    } catch (err) {
      lock.release();
      throw err;
    }
  }
  try {
    await migrate(sql);
  } catch (err) {
    await sql.close().catch(() => undefined);
    throw err;
  }
  return sql;
}

/**
 * The two SQL stores of an instance: the job store (migrated, job deadline; {@link openSql}) and, on a
 * PostgreSQL server whose request deadline is shorter, a second pool with the request deadline.
 */
export async function openSqlPair(config: Config): Promise<{ sql: Sql; sqlJobs: Sql }> {
  const sqlJobs = await openSql(config);
  const { sqlMs, jobMs } = config.deadlines;
  if (!config.databaseUrl || sqlMs >= jobMs) return { sql: sqlJobs, sqlJobs };
  try {
    return { sql: await openPostgres(config.databaseUrl, { timeoutMs: sqlMs }), sqlJobs };
  } catch (err) {
    await sqlJobs.close().catch(() => undefined);
    throw err;
  }
}

/**
 * `sql` whose (idempotent) close also narrows the modes of what the database wrote meanwhile and
 * releases `lock`, after the database has flushed.
 */
export function releasingOnClose(sql: Sql, lock: DataDirLock, dataDir: string): Sql {
  let closing: Promise<void> | undefined;
  const narrow = () => {
    restrictModes(dataDir);
    lock.release();
  };
  return { ...sql, close: () => (closing ??= sql.close().finally(narrow)) };
}

/** How often a Redis outage is logged at most (ioredis reconnects by itself meanwhile), ms. */
export const REDIS_OUTAGE_LOG_MS = 10_000;

/**
 * Opens the configured Redis (null when none is configured), logging outages at most every 10 s:
 * the request-path client (`FRESHET_REDIS_TIMEOUT_MS` per command), the job client (`FRESHET_JOB_TIMEOUT_MS`)
 * and, on demand, BullMQ's connections (no command deadline: blocking reads wait by design).
 */
export function openRedis(config: Config, log: Pino): RedisHandle | null {
  if (!config.redisUrl && !config.redisClusterNodes) return null;
  const where = { url: config.redisUrl, clusterNodes: config.redisClusterNodes };
  const { redisMs, jobMs } = config.deadlines;
  const redis = createRedis({ ...where, commandTimeoutMs: redisMs });
  const jobs = redisMs >= jobMs ? redis : createRedis({ ...where, commandTimeoutMs: jobMs });
  let lastLogged = 0;
  const onError = (err: Error) => {
    if (Date.now() - lastLogged < REDIS_OUTAGE_LOG_MS) return;
    lastLogged = Date.now();
    log.error({ err: err.message }, 'redis connection error (retrying)');
  };
  redis.on('error', onError);
  if (jobs !== redis) jobs.on('error', onError);
  const connectBlocking = (): RedisClient =>
    config.redisClusterNodes?.length
      ? new Cluster(config.redisClusterNodes, { redisOptions: { maxRetriesPerRequest: null } })
      : new Redis(config.redisUrl!, { maxRetriesPerRequest: null });
  const connectProducer = (): RedisClient => createRedis({ ...where, commandTimeoutMs: redisMs });
  return {
    redis,
    jobs,
    keys: new Keys(config.keyPrefix, config.seen.shards, config.hot.shards),
    connectBlocking,
    connectProducer,
  };
}

/**
 * Whether each store answers, within the request deadlines: both probes run at once, so `/readyz`
 * answers within max(`FRESHET_SQL_TIMEOUT_MS` + 200 ms slack, `FRESHET_REDIS_TIMEOUT_MS`).
 */
export async function probeStores(
  sql: Sql,
  redis: RedisHandle | null,
  redisMs: number,
): Promise<Record<string, boolean>> {
  const [postgres, redisUp] = await Promise.all([
    sql.query('SELECT 1').then(
      () => true,
      () => false,
    ),
    // a write probe, not PING: an out-of-memory Redis answers PING but refuses every write
    redis ? probeRedis(redis.redis, redis.keys, redisMs).then((r) => r.ready) : Promise.resolve(undefined),
  ]);
  return { postgres, ...(redisUp === undefined ? {} : { redis: redisUp }) };
}
