/**
 * A throwaway `redis-server` of a test's own, on a free loopback port and without persistence, for
 * faults the shared test Redis must never see (out of memory, a replica, a server that goes away).
 * `stop()` ends exactly the process it started (by its pid).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** A running server: where it listens and how to stop it. */
export interface RedisServer {
  port: number;
  url: string;
  /** The server's process id. */
  pid: number;
  /** Stalls the server (SIGSTOP): it keeps its connections and answers nothing until {@link resume}. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). Idempotent. */
  resume(): void;
  /** Stops the process (SIGTERM, then SIGKILL after 2 s) and waits for it to exit. Idempotent. */
  stop(): Promise<void>;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts `redis-server` with `args` (e.g. `['--maxmemory', '2mb']`) and waits until it answers PING.
 * `opts.port`: listen there (a server restarted in place of one that stopped) instead of a free port.
 * @throws Error when it does not answer within 5 s (its output is in the message).
 */
export async function startRedisServer(args: string[] = [], opts: { port?: number } = {}): Promise<RedisServer> {
  const port = opts.port ?? (await freePort());
  const proc = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  try {
    await waitForPing(url, proc);
  } catch (err) {
    await stop(proc, exited);
    throw new Error(`redis-server on ${port} did not start: ${(err as Error).message}\n${output}`);
  }
  let stopping: Promise<void> | undefined;
  const alive = () => proc.exitCode === null && proc.signalCode === null;
  return {
    port,
    url,
    pid: proc.pid!,
    pause: () => void (alive() && proc.kill('SIGSTOP')),
    resume: () => void (alive() && proc.kill('SIGCONT')),
    stop: () => (stopping ??= (alive() && proc.kill('SIGCONT'), stop(proc, exited))),
  };
}

async function waitForPing(url: string, proc: ChildProcess): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}`);
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    } finally {
      probe.disconnect();
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stop(proc: ChildProcess, exited: Promise<void>): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  const killer = setTimeout(() => proc.kill('SIGKILL'), 2_000);
  await exited;
  clearTimeout(killer);
}

/**
 * Fills the server until its `maxmemory` is reached under `noeviction`: 256 KiB values until one is
 * refused, then 64-byte values until even those are (a big value refused only says that IT would not
 * fit: its query buffer counted; small ones are refused once the data alone is over the limit). Then
 * lowers `maxmemory` to 3/4 of what the server uses, so every write stays refused whatever is freed
 * meanwhile — the filling connection's query buffer when it closes, a key expiring — which would let
 * a small write fit again right at the limit. Raising `maxmemory` (or freeing most data) recovers.
 * @returns how many values it wrote.
 * @throws Error when no OOM came after 50 MiB.
 */
export async function fillUntilOom(url: string, prefix: string): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  let written = 0;
  const fill = async (value: string, max: number): Promise<void> => {
    for (let i = 0; i < max; i++) {
      try {
        await client.set(`${prefix}fill:${written}`, value);
        written++;
      } catch (err) {
        if ((err as Error).message.startsWith('OOM')) return;
        throw err;
      }
    }
    throw new Error('no OOM after 50 MiB: is maxmemory set?');
  };
  try {
    await fill('x'.repeat(256 * 1024), 200);
    await fill('x'.repeat(64), 800_000);
    const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
    await client.config('SET', 'maxmemory', String(Math.floor(used * 0.75)));
    return written;
  } finally {
    client.disconnect();
  }
}

/**
 * Crashes `server` without saving (`SHUTDOWN NOSAVE`; it has no persistence) and starts an empty one
 * on the same port (clients that lived through it reconnect there).
 * @returns the new server.
 */
export async function crashAndRestart(server: RedisServer, args: string[] = []): Promise<RedisServer> {
  await crash(server);
  return startRedisServer(args, { port: server.port });
}

/** Crashes `server` without saving (`SHUTDOWN NOSAVE`) and waits until its process is gone. */
export async function crash(server: RedisServer): Promise<void> {
  const admin = new Redis(server.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  admin.on('error', () => undefined);
  await admin.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
  admin.disconnect();
  await server.stop();
}
