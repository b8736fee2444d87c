/**
 * How CLI commands find and talk to a running Freshet server — one way for all of them:
 * 1. `--url` when given (the operator said which server);
 * 2. `<dataDir>/server.json`, written by `freshet serve` on the embedded default, when it names a live
 *    process (a marker left by a crashed server names a dead pid and is ignored);
 * 3. `http://HOST:PORT` of the configuration.
 * Before the work starts, {@link checkServer} asks `/healthz` and then whether the server accepts this
 * command's service key, so a wrong key is one clear error naming where the key comes from instead of
 * thousands of 401s in a report.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { secretsPath, type Config } from '../compose/config.js';
import { DataDirLockedError, lockDataDir } from '../compose/data-dir-lock.js';
import { FreshetClient, FreshetClientError } from '../client/index.js';

/** Nothing answers at a server's URL (refused, timed out, unknown host). */
export class ServerUnreachableError extends Error {
  override readonly name = 'ServerUnreachableError';
}

/** Path of the embedded server's marker file (`{pid, host, port}`). */
export function serverMarkerPath(dataDir: string): string {
  return join(dataDir, 'server.json');
}

/** The embedded server's marker `<dataDir>/server.json`, when it names a live process. */
export function liveServer(dataDir: string): { pid: number; host: string; port: number } | null {
  const path = serverMarkerPath(dataDir);
  if (!existsSync(path)) return null;
  let marker: { pid?: unknown; host?: unknown; port?: unknown };
  try {
    marker = JSON.parse(readFileSync(path, 'utf8')) as typeof marker;
  } catch {
    return null;
  }
  const { pid, host, port } = marker;
  if (typeof pid !== 'number' || typeof port !== 'number' || port <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null; // ESRCH: the server is gone
  }
  const h = typeof host === 'string' && host !== '0.0.0.0' && host !== '::' && host !== '' ? host : '127.0.0.1';
  return { pid, host: h, port };
}

/** A server a command talks to, and how it was found (printed so the operator can tell). */
export interface ServerTarget {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** `--url`, `server.json (pid 4242)` or `HOST:PORT`. */
  foundBy: string;
}

function hostUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}

/** The server to talk to, in the order of the module doc. */
export function findServer(config: Pick<Config, 'dataDir' | 'host' | 'port'>, url?: string): ServerTarget {
  if (url) return { url: url.replace(/\/+$/, ''), foundBy: '--url' };
  const marker = liveServer(config.dataDir);
  if (marker)
    return {
      url: hostUrl(marker.host, marker.port),
      foundBy: `${serverMarkerPath(config.dataDir)} (pid ${marker.pid})`,
    };
  return { url: hostUrl(config.host, config.port), foundBy: 'HOST:PORT' };
}

/** Where this process's service key comes from, for messages. */
export function serviceKeySource(config: Config, env: NodeJS.ProcessEnv = process.env): string {
  return env.FRESHET_SERVICE_KEY ? 'FRESHET_SERVICE_KEY' : `${secretsPath(config)} (FRESHET_SERVICE_KEY is not set)`;
}

/**
 * The service key a command that only talks to a server sends (`config` from `readSecrets`).
 * @throws Error naming what was looked at and what to set when there is none — before anything is sent.
 */
export function serverKey(config: Config, env: NodeJS.ProcessEnv = process.env): string {
  if (config.serviceKey) return config.serviceKey;
  const where =
    env.FRESHET_SERVICE_KEY === undefined
      ? `FRESHET_SERVICE_KEY is not set and ${secretsPath(config)} does not exist`
      : 'FRESHET_SERVICE_KEY is empty';
  throw new Error(
    `no service key to send to the server: ${where}. Set FRESHET_SERVICE_KEY to the server's key, or FRESHET_DATA_DIR to the server's data folder (its secrets.json)`,
  );
}

/** The message for a server that refused the service key (HTTP 401). */
export function keyMismatchMessage(url: string, keySource: string): string {
  return (
    `the server at ${url} does not accept this command's service key (401): the key here comes from ${keySource}. ` +
    `Set FRESHET_SERVICE_KEY to the server's key (the server reads FRESHET_SERVICE_KEY, else its data folder's secrets.json)`
  );
}

/**
 * Checks that a Freshet server answers at `target` and accepts `serviceKey`.
 * @throws ServerUnreachableError naming the URL and how it was found when nothing answers `/healthz`;
 *   Error for a `/healthz` that is not 200, and
 *   {@link keyMismatchMessage} when an authenticated request is answered 401.
 */
export async function checkServer(
  target: ServerTarget,
  serviceKey: string,
  keySource: string,
  timeoutMs = 10_000,
): Promise<void> {
  const client = new FreshetClient({ baseUrl: target.url, serviceKey, timeoutMs, retry: { attempts: 1 } });
  try {
    await client.health();
  } catch (err) {
    if (!(err instanceof FreshetClientError)) throw err;
    if (err.kind === 'network' || err.kind === 'timeout') {
      const cause = err.cause as (Error & { cause?: Error }) | undefined;
      const why = cause?.cause?.message ?? cause?.message ?? err.msg;
      throw new ServerUnreachableError(
        `no Freshet server answers at ${target.url} (found by ${target.foundBy}): ${why} — start one with \`freshet serve\`, or pass --url`,
      );
    }
    throw new Error(`${target.url}/healthz answered ${err.status} (found by ${target.foundBy})`);
  }
  // Any authenticated read tells a refused key (401) from an accepted one (404 for this unused id).
  const probe = await client.items.get('_freshet_key_probe').catch((err: unknown) => err);
  if (probe instanceof FreshetClientError && probe.status === 401)
    throw new Error(keyMismatchMessage(target.url, keySource));
  if (probe instanceof FreshetClientError && probe.kind !== 'http') throw probe;
}

/**
 * Refuses, before any work, a command that would open the embedded data folder while another process
 * holds it (`freshet serve`, another command): asks the data folder's lock itself, so a `server.json`
 * left by a crashed server (or naming a reused pid) never blocks, and names the holder and, when it is
 * the server, its URL. A no-op on PostgreSQL, which takes concurrent writers. (The lock refuses any
 * other opener again when the database opens; this check is for the message and the hint.)
 * @param hint what to do instead, e.g. "stop it first".
 * @throws Error naming the command, the holder and the hint.
 */
export function refuseBesideServer(
  config: Pick<Config, 'dataDir' | 'databaseUrl'>,
  command: string,
  hint: string,
): void {
  if (config.databaseUrl || !existsSync(config.dataDir)) return;
  try {
    lockDataDir(config.dataDir).release();
  } catch (err) {
    if (!(err instanceof DataDirLockedError)) throw err;
    const server = liveServer(config.dataDir);
    const isServer = server !== null && err.holder?.pid === server.pid;
    const who = isServer
      ? `a Freshet server (pid ${server.pid}, ${hostUrl(server.host, server.port)})`
      : err.holder
        ? `another process (pid ${err.holder.pid}: ${err.holder.command})`
        : 'another process';
    throw new Error(
      `${command}: ${who} holds the data folder ${config.dataDir}, and the embedded database (PGlite) is single-process: ${hint}`,
    );
  }
}
