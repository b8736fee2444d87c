/**
 * Redis helpers for tests: count the commands a client sends (to check "one round trip"), delete
 * every key under a test's prefix (SCAN + UNLINK on every master, so it works on a Cluster), and
 * a test file's own connection and prefixes (`fileRedis`).
 */
import { Cluster, type Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { closeRedis, createRedis, type RedisClient } from '../../src/adapters/redis/client.js';
import { TEST_REDIS_URL, uniquePrefix } from './env.js';

/**
 * Wraps `client.sendCommand` so every command sent through it is counted.
 * @returns a function reading the count so far.
 */
export function countCommands(client: RedisClient): () => number {
  let n = 0;
  const target = client as unknown as { sendCommand: (...args: unknown[]) => unknown };
  const original = target.sendCommand.bind(client);
  target.sendCommand = (...args: unknown[]) => {
    n++;
    return original(...args);
  };
  return () => n;
}

/** Deletes every key starting with `prefix` (which must hold no glob characters). @returns how many. */
export async function deleteByPrefix(client: RedisClient, prefix: string): Promise<number> {
  const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client as Redis];
  let deleted = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      // one key per UNLINK: keys of different slots can't share a command on a Cluster node
      for (const key of keys) deleted += await node.unlink(key);
    } while (cursor !== '0');
  }
  return deleted;
}

/**
 * The standalone Redis connection of one test file (TEST_REDIS_URL), under a key prefix of its own.
 * `nextPrefix()` gives each test a fresh sub-prefix (`<file prefix><n>:`); after the file's tests
 * every key under the file's prefix is deleted and the connection closed (vitest `afterAll`).
 * Call it once, at the top level of a test file.
 */
export function fileRedis(): { redis: RedisClient; commands: () => number; nextPrefix: () => string } {
  const redis = createRedis({ url: TEST_REDIS_URL });
  const commands = countCommands(redis);
  const filePrefix = uniquePrefix();
  let n = 0;
  afterAll(async () => {
    await deleteByPrefix(redis, filePrefix);
    await closeRedis(redis);
  });
  return { redis, commands, nextPrefix: () => `${filePrefix}${n++}:` };
}
