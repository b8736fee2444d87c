/**
 * The Redis connection shared by every Redis adapter: {@link createRedis} opens a standalone client
 * (`url`) or a Redis Cluster client (`clusterNodes`); Freshet works on stock Redis >= 6.2 and Valkey,
 * no modules. Lua scripts are `.lua` files run through ./lua.ts; failures are classified by
 * ./errors.ts; readiness (a write probe) is src/observe/store-health.ts.
 */
import { Cluster, Redis } from 'ioredis';

/** A standalone or a Cluster client: both accept the same commands. */
export type RedisClient = Redis | Cluster;

/**
 * Where Redis is: a URL (`redis://host:port/db`) or Cluster seed nodes (these win when both are set),
 * and the deadline of one command.
 */
export interface RedisOptions {
  url?: string;
  clusterNodes?: { host: string; port: number }[];
  /**
   * ioredis `commandTimeout`, ms: a command without a reply by then (a stalled server, a command
   * waiting in the offline queue while the client reconnects) rejects with `Command timed out`,
   * which ./errors.ts answers as STORE_UNAVAILABLE. Absent: no deadline (tests, tools).
   */
  commandTimeoutMs?: number;
}

/** Reconnect delay after the n-th failed attempt, ms: 50, 100, … capped at 1 s (a returning server is found within ~1 s). */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(attempt * 50, 1_000);
}

/**
 * Opens a client (it connects in the background; commands queue until it is ready, each for at most
 * `commandTimeoutMs`). `maxRetriesPerRequest: 3`: a command queued on a dropped connection fails after
 * three reconnect attempts instead of waiting for the server; `enableOfflineQueue` stays on so a
 * command sent during a short reconnect is not refused at once.
 * Not for BullMQ workers: blocking commands need `maxRetriesPerRequest: null` and no command timeout
 * (`RedisHandle.connectBlocking`).
 * @throws Error when neither `url` nor a non-empty `clusterNodes` is given.
 */
export function createRedis(opts: RedisOptions): RedisClient {
  const deadline = opts.commandTimeoutMs ? { commandTimeout: opts.commandTimeoutMs } : {};
  if (opts.clusterNodes && opts.clusterNodes.length > 0) {
    return new Cluster(opts.clusterNodes, {
      scaleReads: 'master',
      redisOptions: { maxRetriesPerRequest: 3, ...deadline },
    });
  }
  if (opts.url) return new Redis(opts.url, { maxRetriesPerRequest: 3, retryStrategy: reconnectDelayMs, ...deadline });
  throw new Error('createRedis needs a url or cluster nodes');
}

/** Closes a client politely (`QUIT`), falling back to dropping the connection. */
export async function closeRedis(client: RedisClient): Promise<void> {
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}

/**
 * Deletes every key matching `pattern` (a SCAN glob) on every master (one server, or each master of a
 * Cluster), a SCAN page at a time, each key with its own DEL (keys of many slots). For rare, deliberate
 * work only — an erase — never a request path: a SCAN visits the whole keyspace.
 * @returns how many keys were deleted.
 */
export async function deleteMatching(redis: RedisClient, pattern: string): Promise<number> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  let deleted = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) deleted += await node.del(key);
    } while (cursor !== '0');
  }
  return deleted;
}
