/**
 * What one Freshet instance opened and hands to every capability's wiring (`src/<capability>/wire.ts`): the SQL store (PGlite or
 * a PostgreSQL server), the Redis handle when Redis is configured (null → in-process stores, the
 * embedded default), the data folder, the logger and the metrics registry. One Redis handle, one name.
 */
import type { Logger as Pino } from 'pino';
import type { Registry } from 'prom-client';
import type { Sql } from './sql/sql.js';
import type { RedisClient } from './redis/client.js';
import type { Keys } from './redis/keys.js';
import type { Clock } from './clock.js';

/** The configured Redis (standalone or Cluster) and the one key builder. */
export interface RedisHandle {
  /** The request-path client: every command has the request deadline (`FRESHET_REDIS_TIMEOUT_MS`). */
  redis: RedisClient;
  /**
   * A second client for background and long work (checkpoints, restores, hot maintenance), with the
   * job deadline (`FRESHET_JOB_TIMEOUT_MS`): a 1.7 MB bitmap restore must not be cut at 1 s, and a
   * checkpoint's queue must not delay requests. Absent: `redis` serves both.
   */
  jobs?: RedisClient;
  keys: Keys;
  /**
   * Opens a second connection to the same Redis with `maxRetriesPerRequest: null` (BullMQ's blocking
   * commands need it). The caller closes it.
   */
  connectBlocking(): RedisClient;
  /**
   * Opens a second connection with the request deadline (BullMQ's queue, which enqueues on the
   * request path and never blocks). Absent: {@link connectBlocking}.
   */
  connectProducer?(): RedisClient;
}

/** The stores and process-wide services a capability is wired over. */
export interface Stores {
  /** The request-path SQL store: every statement has the request deadline (`FRESHET_SQL_TIMEOUT_MS`). */
  sql: Sql;
  /**
   * The SQL store of background and long work (checkpoints, hot archive, the vector index) with the
   * job deadline (`FRESHET_JOB_TIMEOUT_MS`). Absent: `sql` serves both (PGlite, tests).
   */
  sqlJobs?: Sql;
  /** Null: no Redis configured, the capability uses its in-process adapters. */
  redis: RedisHandle | null;
  /** Absolute path of the embedded data folder (in-process snapshots live there). */
  dataDir: string;
  log: Pino;
  registry: Registry;
  clock: Clock;
}
