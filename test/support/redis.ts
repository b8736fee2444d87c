/**
 * Redis helpers for tests: count the commands a client sends (to check "one round trip"), delete
 * every key under a test's prefix or let time pass for them (SCAN on every master, so it works on a
 * Cluster), and a test file's own connection and prefixes (`fileRedis`).
 */
import { Cluster, type Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { closeRedis, createRedis, type RedisClient } from '../../src/kernel/redis/client.js';
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

/** Every key starting with `prefix` (no glob characters), with the node holding it (every master of a Cluster). */
async function keysByPrefix(client: RedisClient, prefix: string): Promise<{ node: Redis; key: string }[]> {
  const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client as Redis];
  const found: { node: Redis; key: string }[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) found.push({ node, key });
    } while (cursor !== '0');
  }
  return found;
}

/** Deletes every key starting with `prefix` (which must hold no glob characters). @returns how many. */
export async function deleteByPrefix(client: RedisClient, prefix: string): Promise<number> {
  let deleted = 0;
  // one key per UNLINK: keys of different slots can't share a command on a Cluster node
  for (const { node, key } of await keysByPrefix(client, prefix)) deleted += await node.unlink(key);
  return deleted;
}

/**
 * Lets `ms` pass for the keys under `prefix` as the server's clock would, without waiting: each time
 * to live shrinks by `ms` (PEXPIRE to PTTL − ms, and a non-positive PEXPIRE deletes the key, as its
 * expiry would); keys without a time to live are left alone.
 */
export async function elapseByPrefix(client: RedisClient, prefix: string, ms: number): Promise<void> {
  for (const { node, key } of await keysByPrefix(client, prefix)) {
    const ttl = await node.pttl(key);
    if (ttl >= 0) await node.pexpire(key, ttl - ms);
  }
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
