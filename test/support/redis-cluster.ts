/**
 * Starts a real 3-master Redis Cluster on loopback for tests (redis-server and redis-cli on PATH):
 * three `redis-server --cluster-enabled yes` processes on free ports in a temp dir, joined with
 * `redis-cli --cluster create … --cluster-replicas 0`, ready once every node says cluster_state:ok.
 * `fileCluster()` gives a test file its cluster, client and key prefixes.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { closeRedis, createRedis } from '../../src/kernel/redis/client.js';
import { uniquePrefix } from './env.js';
import { countCommands, deleteByPrefix } from './redis.js';

const run = promisify(execFile);

/** A running cluster: its master nodes and how to stop it. */
export interface TestCluster {
  nodes: { host: string; port: number }[];
  /** Shuts every node down and removes the temp dir. */
  stop(): Promise<void>;
}

/** True when nothing listens on 127.0.0.1:`port`. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Three consecutive ports in 20000–40000 that are free, with their cluster bus ports (+10000). */
async function freePorts(): Promise<number[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 19_990);
    const ports = [base, base + 1, base + 2];
    const all = [...ports, ...ports.map((p) => p + 10_000)];
    if ((await Promise.all(all.map(isFree))).every(Boolean)) return ports;
  }
  throw new Error('no free ports for a test cluster');
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 });
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
 * Starts the cluster.
 * @throws Error when the nodes do not start or the cluster does not reach cluster_state:ok in time.
 */
export async function startRedisCluster(): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'freshet-cluster-'));
  const ports = await freePorts();
  const children: ChildProcess[] = [];
  const stop = async () => {
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
  };
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
          '127.0.0.1',
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
        { stdio: 'ignore' },
      );
      children.push(child);
    }
    for (const port of ports) await until(`node ${port}`, async () => (await cli(port, 'ping')).trim() === 'PONG');
    await run(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { timeout: 30_000 },
    );
    for (const port of ports) {
      await until(`cluster_state:ok on ${port}`, async () =>
        (await cli(port, 'cluster', 'info')).includes('cluster_state:ok'),
      );
    }
    return { nodes: ports.map((port) => ({ host: '127.0.0.1', port })), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

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
