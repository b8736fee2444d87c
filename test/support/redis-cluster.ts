/**
 * A real 3-master Redis Cluster on loopback for tests (started by cluster-process.ts):
 * `fileCluster()` gives a test file its cluster, client and key prefixes.
 */
import { startRedisCluster, type TestCluster } from './cluster-process.js';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { closeRedis, createRedis } from '../../src/kernel/redis/client.js';
import { uniquePrefix } from './env.js';
import { countCommands, deleteByPrefix } from './redis.js';

/** A test file's Redis Cluster: its client (after `beforeAll`), command counter and key prefixes. */
export interface FileCluster {
  /** The ioredis Cluster client; usable from the first test on (created in `beforeAll`). */
  readonly redis: Cluster;
  /** Commands sent through `redis` so far (see `countCommands`). */
  commands(): number;
  /** A fresh key prefix for one test (`<file prefix><n>:`). */
  nextPrefix(): string;
}

/**
 * Starts a 3-master test cluster for one test file (vitest `beforeAll`) and, after the file's tests,
 * deletes every key under the file's prefix, closes the client and stops the cluster (`afterAll`).
 * Call it once, at the top level of a test file.
 */
export function fileCluster(): FileCluster {
  let cluster: TestCluster | undefined;
  let redis: Cluster | undefined;
  let commands: () => number = () => 0;
  const filePrefix = uniquePrefix();
  let n = 0;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    redis = createRedis({ clusterNodes: cluster.nodes }) as Cluster;
    commands = countCommands(redis);
    await redis.ping();
  });
  afterAll(async () => {
    if (redis) {
      await deleteByPrefix(redis, filePrefix);
      await closeRedis(redis);
    }
    await cluster?.stop();
  });
  return {
    get redis(): Cluster {
      if (!redis) throw new Error('the test cluster is not started yet (use it inside tests or hooks)');
      return redis;
    },
    commands: () => commands(),
    nextPrefix: () => `${filePrefix}${n++}:`,
  };
}
