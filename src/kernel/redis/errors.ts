/**
 * Redis failures classified where they happen (and answered in one place, the HTTP edge): the one
 * module that decides whether a Redis error means "the store cannot serve us now" or "our code is wrong". Every Redis adapter's calls go through it — script
 * runs through the Lua runner (lua.ts), plain commands through {@link redisCall} — so the HTTP edge
 * only maps FreshetError codes and never reads a store's message.
 *
 * Store outages → `FreshetError` STORE_UNAVAILABLE (HTTP 503, code 50301), message
 * `Redis unavailable: <reason>` (the reason is ours: no host, port or key reaches the client; the
 * original error is the `cause` and its message is in `details`):
 * - replies whose RESP error code (the first word of the reply, Redis protocol spec "Simple errors")
 *   says the server cannot serve now: OOM (maxmemory reached under `noeviction`), LOADING,
 *   MASTERDOWN, CLUSTERDOWN, TRYAGAIN, READONLY (a replica after a failover), BUSY (a script or
 *   function blocks the server), NOREPLICAS, MISCONF (writes refused after a failed save), NOAUTH
 *   and WRONGPASS (the server refuses our credentials: an operator's fix, not the client's);
 *   inside a script Redis 7 keeps the code first (`OOM command not allowed … script: …`), Redis 6.2
 *   wraps it (`ERR Error running script … -OOM …`), both are read;
 * - socket errors (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPIPE, host lookup and routing errors);
 * - ioredis giving up: MaxRetriesPerRequestError, ClusterAllFailedError, AbortError (commands
 *   aborted by a closed connection), and its fixed messages for a closed, not-writable or timed-out
 *   connection (`Connection is closed.`, `Command timed out`, …: ioredis gives these no code), and
 *   `ERR max number of clients reached` (the server refuses one more connection).
 *
 * Anything else is a bug of ours (a Lua runtime error, WRONGTYPE on a key we built, CROSSSLOT, a
 * syntax error): a script's error becomes a {@link LuaScriptError} naming the script, a plain
 * command's error is left as it is; both answer 500/50001. Errors are never modified: ioredis
 * rejects every command queued on a dropped connection with one shared error object, so a new error
 * wraps it each time (a shared error object would be renamed by every script that threw it).
 */
import { FreshetError, fail } from '../errors.js';

/** RESP error codes meaning the server is there but cannot serve us now, with the reason we give. */
const UNAVAILABLE_REPLIES: ReadonlyMap<string, string> = new Map([
  ['OOM', 'out of memory (OOM)'],
  ['LOADING', 'loading its dataset (LOADING)'],
  ['MASTERDOWN', 'the link to its master is down (MASTERDOWN)'],
  ['CLUSTERDOWN', 'the cluster is down (CLUSTERDOWN)'],
  ['TRYAGAIN', 'a slot is being moved (TRYAGAIN)'],
  ['READONLY', 'a read-only replica answered (READONLY)'],
  ['BUSY', 'busy running a script (BUSY)'],
  ['NOREPLICAS', 'not enough replicas (NOREPLICAS)'],
  ['MISCONF', 'writes refused after a failed save (MISCONF)'],
  ['NOAUTH', 'authentication required (NOAUTH)'],
  ['WRONGPASS', 'credentials refused (WRONGPASS)'],
]);

/** Socket error codes (Node `err.code`) of a server that is down or unreachable. */
const UNAVAILABLE_ERRNOS: ReadonlyMap<string, string> = new Map([
  ['ECONNREFUSED', 'connection refused'],
  ['ECONNRESET', 'connection reset'],
  ['ECONNABORTED', 'connection aborted'],
  ['ETIMEDOUT', 'connection timed out'],
  ['EPIPE', 'connection broken'],
  ['ENOTFOUND', 'host not found'],
  ['EAI_AGAIN', 'host lookup failed'],
  ['EHOSTUNREACH', 'host unreachable'],
  ['ENETUNREACH', 'network unreachable'],
]);

/** ioredis error classes (by `name`) meaning it gave up reaching the server. */
const UNAVAILABLE_CLIENT_ERRORS: ReadonlyMap<string, string> = new Map([
  ['MaxRetriesPerRequestError', 'no connection (retries exhausted)'],
  ['ClusterAllFailedError', 'no cluster node answers'],
  ['AbortError', 'connection closed'],
]);

/**
 * Messages (not codes) of a connection that cannot be used: ioredis's own (it gives these errors no
 * code), and the one server refusal that comes with the generic ERR code (`maxclients` reached).
 */
const UNAVAILABLE_CLIENT_MESSAGES: readonly (readonly [string, string])[] = [
  ['ERR max number of clients reached', 'too many clients (maxclients)'],
  ['Connection is closed.', 'connection closed'],
  ["Stream isn't writeable", 'no connection'],
  ['Command timed out', 'command timed out'],
  ['Socket timeout', 'connection timed out'],
  ['Ready check failed', 'not ready'],
  ['None of startup nodes is available', 'no cluster node answers'],
  ['Cluster is disconnect', 'connection closed'],
  ["Cluster isn't ready", 'no cluster node answers'],
  ['Cluster is ended.', 'connection closed'],
];

/** A script run that failed for a reason of ours (see the module doc); answered as INTERNAL. */
export class LuaScriptError extends Error {
  constructor(
    /** The script's id, `hotView-9`. */
    readonly script: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${script}: ${message}`, options);
    this.name = 'LuaScriptError';
  }
}

/** The RESP error code of a reply error (`OOM`, `WRONGTYPE`, …), looking inside Redis 6.2's script wrapper. */
export function replyCode(message: string): string {
  const first = /^[A-Z][A-Z_-]*/.exec(message)?.[0] ?? '';
  if (first !== 'ERR' || !message.startsWith('ERR Error running script')) return first;
  return /: -([A-Z][A-Z_-]*) /.exec(message)?.[1] ?? first;
}

/**
 * Why Redis cannot serve this call, or null when the error is not an outage (a bug of ours).
 * @returns a short reason for clients (`out of memory (OOM)`, `connection refused`).
 */
export function outageReason(err: unknown): string | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as { name?: unknown; code?: unknown; message?: unknown; lastNodeError?: unknown };
  const name = typeof e.name === 'string' ? e.name : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (typeof e.code === 'string' && UNAVAILABLE_ERRNOS.has(e.code)) return UNAVAILABLE_ERRNOS.get(e.code)!;
  const fromClient = UNAVAILABLE_CLIENT_ERRORS.get(name);
  if (fromClient) return fromClient;
  const reply = UNAVAILABLE_REPLIES.get(replyCode(message));
  if (reply) return reply;
  for (const [prefix, reason] of UNAVAILABLE_CLIENT_MESSAGES) if (message.startsWith(prefix)) return reason;
  return null;
}

/**
 * Classifies a Redis failure (see the module doc).
 * @param script the id of the script that failed (`hotView-9`), when it was a script run.
 * @returns FreshetError STORE_UNAVAILABLE for an outage; for anything else a LuaScriptError when
 *   `script` is given, else `err` itself. A FreshetError or LuaScriptError passes through unchanged.
 */
export function redisFailure(err: unknown, script?: string): unknown {
  if (err instanceof FreshetError || err instanceof LuaScriptError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const reason = outageReason(err);
  if (reason !== null) {
    const out = fail('STORE_UNAVAILABLE', `Redis unavailable: ${reason}`, {
      store: 'redis',
      ...(script ? { script } : {}),
      message,
    });
    Object.defineProperty(out, 'cause', { value: err, enumerable: false, configurable: true, writable: true });
    return out;
  }
  if (script) return new LuaScriptError(script, message, { cause: err });
  return err;
}

/**
 * Awaits one Redis call of an adapter (a plain command, a pipeline), classifying its failure.
 * @throws what {@link redisFailure} returns.
 */
export async function redisCall<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw redisFailure(err);
  }
}
