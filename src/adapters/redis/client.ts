/**
 * The Redis connection and the Lua script runner shared by every Redis adapter.
 *
 * - {@link createRedis} opens a standalone client (`url`) or a Redis Cluster client (`clusterNodes`);
 *   Freshet works on stock Redis ≥ 6.2 and Valkey, no modules.
 * - Scripts follow BullMQ's layout (DESIGN.md "Anchors"): each one has a name, a key count and a
 *   header comment listing KEYS, ARGV and the return value. They are embedded as TypeScript string
 *   constants (under `scripts/`) because `tsc` does not copy `.lua` files into `dist/`.
 * - {@link runScript} sends `EVALSHA` with the SHA-1 computed locally; a node that answers
 *   `NOSCRIPT` (fresh node, `SCRIPT FLUSH`, failover) gets one `EVAL`, which also caches the script
 *   there, so every later call is one `EVALSHA` round trip. In a Cluster, ioredis routes the call by
 *   its first key; every script's keys share one hash tag, hence one slot. {@link runScriptBuffer} is
 *   the same with binary replies (bulk strings as Buffers: the seen filter's bitmaps).
 */
import { createHash } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';

/** A standalone or a Cluster client: both accept the same commands. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: a URL (`redis://host:port/db`) or Cluster seed nodes (these win when both are set). */
export interface RedisOptions {
  url?: string;
  clusterNodes?: { host: string; port: number }[];
}

/**
 * Opens a client (it connects in the background; commands queue until it is ready).
 * @throws Error when neither `url` nor a non-empty `clusterNodes` is given.
 */
export function createRedis(opts: RedisOptions): RedisClient {
  if (opts.clusterNodes && opts.clusterNodes.length > 0) {
    return new Cluster(opts.clusterNodes, {
      scaleReads: 'master',
      redisOptions: { maxRetriesPerRequest: 3 },
    });
  }
  if (opts.url) return new Redis(opts.url, { maxRetriesPerRequest: 3 });
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

/** One Lua script: its name, how many KEYS it takes (`'variable'`: as many as the caller passes). */
export interface LuaScript {
  readonly name: string;
  readonly numKeys: number | 'variable';
  /** The Lua source, header comment included. */
  readonly source: string;
  /** SHA-1 of the source (hex), the `EVALSHA` handle. */
  readonly sha: string;
}

/** Declares a script; the file-name convention of BullMQ becomes `name-<numKeys>` in messages. */
export function defineScript(name: string, numKeys: number | 'variable', source: string): LuaScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return { name, numKeys, source, sha };
}

/** An argument to a script: Buffers travel as raw bytes (used for packed hash pairs). */
export type ScriptArg = string | number | Buffer;

/**
 * Runs `script` with `keys` and `args` in one round trip (`EVALSHA`, or `EVAL` once after `NOSCRIPT`).
 * @returns the script's reply as ioredis decodes it (bulk strings as `string`, arrays as arrays).
 * @throws Error when a fixed key count does not match `keys.length`; Redis errors (connection,
 *   script runtime errors) propagate with the script's name prefixed.
 */
export function runScript(
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<unknown> {
  return run(client, script, keys, args, false);
}

/**
 * {@link runScript} with the reply's bulk strings as `Buffer`s, bytes as Redis sent them (no UTF-8
 * decoding: for binary replies such as bitmaps). The Buffers may share memory that the reply parser
 * reuses later: copy what you keep.
 */
export function runScriptBuffer(
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<unknown> {
  return run(client, script, keys, args, true);
}

async function run(
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly ScriptArg[],
  buffers: boolean,
): Promise<unknown> {
  if (script.numKeys !== 'variable' && keys.length !== script.numKeys) {
    throw new Error(`script ${script.name}-${script.numKeys} called with ${keys.length} keys`);
  }
  try {
    return buffers
      ? await client.callBuffer('EVALSHA', script.sha, keys.length, ...keys, ...args)
      : await client.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw named(script, err);
  }
  try {
    return buffers
      ? await client.callBuffer('EVAL', script.source, keys.length, ...keys, ...args)
      : await client.eval(script.source, keys.length, ...keys, ...args);
  } catch (err) {
    throw named(script, err);
  }
}

function named(script: LuaScript, err: unknown): Error {
  if (err instanceof Error) {
    err.message = `${script.name}-${script.numKeys}: ${err.message}`;
    return err;
  }
  return new Error(`${script.name}-${script.numKeys}: ${String(err)}`);
}
