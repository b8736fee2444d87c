/**
 * Starts a real 3-master Redis Cluster on loopback (redis-server and redis-cli on PATH): three
 * `redis-server --cluster-enabled yes` processes on free ports in a temp dir (no persistence), joined with
 * `redis-cli --cluster create … --cluster-replicas 0`, ready once every node says cluster_state:ok. Used by the
 * tests (test/support/redis-cluster.ts adds a file's client and prefixes) and by bench/memory.ts; it imports
 * no test runner so a benchmark can use it.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

/** A running cluster: its master nodes and how to stop it. */
export interface TestCluster {
  nodes: { host: string; port: number }[];
  /** Shuts every node down and removes the temp dir; idempotent. */
  stop(): Promise<void>;
}

const run = promisify(execFile);

/** A running cluster: its master nodes and how to stop it. */
export interface TestCluster {
  nodes: { host: string; port: number }[];
  /** Shuts every node down and removes the temp dir. */
  stop(): Promise<void>;
}

/** True when nothing listens on `host`:`port`. */
function isFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** Three consecutive ports in 20000–40000 that are free, with their cluster bus ports (+10000). */
async function freePorts(host: string): Promise<number[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 19_990);
    const ports = [base, base + 1, base + 2];
    const all = [...ports, ...ports.map((p) => p + 10_000)];
    if ((await Promise.all(all.map((p) => isFree(p, host)))).every(Boolean)) return ports;
  }
  throw new Error('no free ports for a test cluster');
}

async function cli(host: string, port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', host, '-p', String(port), ...args], { timeout: 10_000 });
  return stdout;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`test cluster: timed out waiting for ${what}`);
}

/**
 * Starts the cluster. `detached`: the nodes get a process group of their own, so a Ctrl-C to the terminal
 * reaches only the caller, whose cleanup stops them (the benchmarks). `host`: the address the nodes bind
 * and announce (127.0.0.1 by default; the three-host rehearsal gives its bridge's, test/deploy/).
 * @throws Error when the nodes do not start or the cluster does not reach cluster_state:ok in time.
 */
export async function startRedisCluster(opts: { detached?: boolean; host?: string } = {}): Promise<TestCluster> {
  const host = opts.host ?? '127.0.0.1';
  const dir = await mkdtemp(join(tmpdir(), 'freshet-cluster-'));
  const ports = await freePorts(host);
  const children: ChildProcess[] = [];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
            }),
        ),
      );
      process.off('exit', killAll);
      await rm(dir, { recursive: true, force: true });
    })());
  const killAll = () => children.forEach((c) => c.kill('SIGKILL'));
  process.on('exit', killAll);
  try {
    for (const port of ports) {
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          host,
          '--cluster-announce-ip',
          host,
          // off a loopback address Redis refuses clients without a password unless told otherwise
          '--protected-mode',
          host === '127.0.0.1' ? 'yes' : 'no',
          '--dir',
          dir,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          '5000',
          '--save',
          '',
          '--appendonly',
          'no',
          '--logfile',
          join(dir, `redis-${port}.log`),
        ],
        { stdio: 'ignore', detached: opts.detached ?? false },
      );
      children.push(child);
    }
    for (const port of ports)
      await until(`node ${port}`, async () => (await cli(host, port, 'ping')).trim() === 'PONG');
    await run(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `${host}:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { timeout: 30_000 },
    );
    for (const port of ports) {
      await until(`cluster_state:ok on ${port}`, async () =>
        (await cli(host, port, 'cluster', 'info')).includes('cluster_state:ok'),
      );
    }
    return { nodes: ports.map((port) => ({ host, port })), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
