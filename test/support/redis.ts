/**
 * Redis helpers for tests: count the commands a client sends (to check "one round trip"), and
 * delete every key under a test's prefix (SCAN + UNLINK on every master, so it works on a Cluster).
 */
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from '../../src/adapters/redis/client.js';

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
