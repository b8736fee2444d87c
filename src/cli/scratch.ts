/**
 * Scratch stores for the in-process simulations: `freshet simulate following` and
 * `simulate discover` publish, delete, follow, unfollow and block, so by default they run apart from the
 * user's data and say where:
 * - SQL: an in-memory PGlite on the embedded default; with `FRESHET_DATABASE_URL`, a schema of its own
 *   (`freshet_sim_<name>_<random>`) on that server, dropped after;
 * - the data folder (seen-filter snapshots of the in-process stores): a temporary folder, removed after;
 * - Redis (when configured): a key prefix of its own (`fsim<random>:`), every key under it deleted after.
 * `--in-place` runs on the configured stores instead (the old behaviour, for a database kept for it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, type Redis } from 'ioredis';
import type { Config } from '../compose/config.js';
import { migrate } from '../compose/migrations.js';
import { openPglite, openPostgres, type Sql } from '../kernel/sql/sql.js';
import { createRedis, closeRedis, type RedisClient } from '../kernel/redis/client.js';
import { redactUrl } from './import.js';

/** A scratch place to run a simulation in. */
export interface Scratch {
  /** The configuration pointing at the scratch data folder and key prefix. */
  config: Config;
  /** The scratch SQL store, migrated (the caller closes it, before {@link Scratch.remove}). */
  sql: Sql;
  /** One line saying where the scratch data lives, for the report's preamble. */
  where: string;
  /** Deletes the scratch schema, data folder and Redis keys (idempotent). */
  remove(): Promise<void>;
}

/**
 * Opens scratch stores beside the configured ones (see the module doc).
 * @param name short name of the simulation, e.g. `following` (lower-case letters).
 * @throws FreshetError `STORE_UNAVAILABLE` when the configured PostgreSQL server cannot be reached.
 */
export async function openScratch(base: Config, name: string): Promise<Scratch> {
  const tag = randomBytes(4).toString('hex');
  const dataDir = mkdtempSync(join(tmpdir(), `freshet-sim-${name}-`));
  const schema = `freshet_sim_${name}_${tag}`;
  const redisOn = Boolean(base.redisUrl || base.redisClusterNodes?.length);
  const keyPrefix = redisOn ? `fsim${tag}:` : base.keyPrefix;
  let sql: Sql | undefined;
  try {
    sql = base.databaseUrl ? await openPostgres(base.databaseUrl, { schema }) : await openPglite('memory://');
    await migrate(sql);
  } catch (err) {
    await sql?.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const parts = [
    base.databaseUrl ? `PostgreSQL schema ${schema} on ${redactUrl(base.databaseUrl)}` : 'PGlite in memory',
    `data folder ${dataDir}`,
    ...(redisOn ? [`Redis key prefix ${keyPrefix}`] : []),
  ];
  let removed: Promise<void> | undefined;
  return {
    config: { ...base, dataDir, keyPrefix },
    sql,
    where: `scratch stores (removed at the end): ${parts.join(', ')}`,
    remove: () =>
      (removed ??= (async () => {
        rmSync(dataDir, { recursive: true, force: true });
        if (base.databaseUrl) {
          const admin = await openPostgres(base.databaseUrl);
          await admin.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => admin.close());
        }
        if (redisOn) await deleteByPrefix(base, keyPrefix);
      })()),
  };
}

/** Deletes every Redis key under `prefix` (SCAN on every master, one UNLINK per key: Cluster-safe). */
async function deleteByPrefix(config: Config, prefix: string): Promise<void> {
  const client: RedisClient = createRedis({ url: config.redisUrl, clusterNodes: config.redisClusterNodes });
  client.on('error', () => undefined); // a failure surfaces as the command's rejection
  try {
    if (client instanceof Cluster) await new Promise((resolve) => client.once('ready', resolve));
    const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client as Redis];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) await node.unlink(key);
      } while (cursor !== '0');
    }
  } finally {
    await closeRedis(client);
  }
}
