/**
 * A rehearsal of a deployment on three hosts, on one machine: three network namespaces (hosts-network.ts;
 * three loopback ports where namespaces cannot be made), each running `freshet serve --workers 2` with a
 * data folder of its own, against one PostgreSQL (the suite's server, reached from the hosts through a TCP
 * relay on the bridge) and a 3-master Redis Cluster listening on the bridge. Checked, in order:
 *
 * 1. each host builds its discover index's HNSW graph once — one process of its two (the data folder's
 *    build lock), the other views its snapshot — after 10,200 items were published through host A;
 * 2. a reader paging for-you across the three hosts, refresh and load_more on each in turn, never gets an
 *    item twice (the seen filters and page caches are Redis's, not a host's);
 * 3. a following stream on host B gets an item published on host A (fan-out and the stream's pub/sub);
 * 4. an erase through host C leaves no row of PostgreSQL and no key or value of any Redis master holding
 *    the user's id, and the user's items are gone when read through A and B;
 * 5. host B killed (SIGKILL to all its processes) while three readers page across the hosts: A and C serve
 *    the rest with 0 repeats, and stay ready;
 * 6. A and C stop on SIGTERM with exit 0, and the snapshot in force in their data folders holds no erased
 *    item.
 *
 * The steps share the hosts and run in this order (one `it` each). ~1–2 min on 2 cores; `.ci/run` runs it
 * (`npm run test:deploy`). Everything it made — namespaces, links, processes, the cluster, the relay, the
 * schema, the temp folder — is removed at the end, also when a step fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FreshetClient, type StreamEvent } from '../../src/client/index.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { cliArgv, onJsonLines } from '../support/cli.js';
import { startRedisCluster, type TestCluster } from '../support/cluster-process.js';
import { TEST_DATABASE_URL, uniquePrefix, uniqueSchema } from '../support/env.js';
import { freePort } from '../support/redis-server.js';
import { redisTraces, sqlTraces } from '../support/traces.js';
import { type HostsNetwork, makeHostsNetwork } from './hosts-network.js';
import { stopGroup, untilOk } from './processes.js';

const SERVICE_KEY = 'rehearsal-service-key-0123456789';
/** Items published through host A (an in-process index snapshots from 10,000 embeddings). */
const CATALOG = 10_200;
const NAMES = ['A', 'B', 'C'] as const;
const WORDS = (
  'rust postgres redis bloom filter feed ranking cluster kernel compiler query index vector search cache ' +
  'queue stream worker shard replica latency memory disk network python garden music travel recipe ' +
  'football election climate startup design camera museum history ocean forest planet rocket'
).split(' ');

interface Host {
  name: (typeof NAMES)[number];
  url: string;
  dataDir: string;
  child: ChildProcess;
  log: { msg?: string; pid?: number; worker?: number; level?: number; err?: { message?: string } }[];
  svc: FreshetClient;
}

const tmp = mkdtempSync(join(tmpdir(), 'freshet-rehearsal-'));
const schema = uniqueSchema();
const prefix = uniquePrefix();
const figures: Record<string, string | number> = {};
const hosts: Host[] = [];
let net: HostsNetwork;
let cluster: TestCluster;
let relay: Server | null = null;
let sql: Sql;
let redis: Cluster;
/** The erased user's items (step 4): no snapshot in force may hold them after the hosts close (step 6). */
let erasedItems: string[] = [];

/** Polls `found` every 100 ms until it returns a value, or throws after `ms`. */
async function until<T>(
  what: string | (() => string),
  found: () => Promise<T | undefined> | T | undefined,
  ms: number,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await found();
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out (${ms} ms) waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A TCP relay on `host` to the suite's PostgreSQL (its server listens on loopback only). */
async function startRelay(host: string): Promise<{ server: Server; port: number }> {
  const target = new URL(TEST_DATABASE_URL);
  const server = createServer((inbound) => {
    const outbound = connect(Number(target.port || 5432), target.hostname);
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** Starts host `i`: `freshet serve --workers 2` in its namespace, logging JSON lines we keep. */
async function startHost(i: number, databaseUrl: string): Promise<Host> {
  const port = net.mode === 'netns' ? 8080 : await freePort();
  const dataDir = join(tmp, `host-${NAMES[i]}`);
  const env = {
    ...process.env,
    HOST: net.mode === 'netns' ? '0.0.0.0' : '127.0.0.1',
    PORT: String(port),
    FRESHET_DATA_DIR: dataDir,
    FRESHET_DATABASE_URL: databaseUrl,
    FRESHET_REDIS_CLUSTER_NODES: cluster.nodes.map((n) => `${n.host}:${n.port}`).join(','),
    FRESHET_KEY_PREFIX: prefix,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: 'rehearsal-secret-0123456789abcdef',
    FRESHET_DISCOVER_INDEX: 'memory',
    FRESHET_DISCOVER_EXACT_MAX: '300', // the 600 items published make each host build a graph
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
  };
  const [cmd, ...pre] = [...net.exec(i), process.execPath];
  const child = spawn(cmd!, [...pre, ...cliArgv(), 'serve', '--workers', '2'], {
    env,
    detached: true, // a process group of its own: the host's primary and workers, killed together
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const host: Host = {
    name: NAMES[i]!,
    url: `http://${net.address(i)}:${port}`,
    dataDir,
    child,
    log: [],
    svc: new FreshetClient({
      baseUrl: `http://${net.address(i)}:${port}`,
      serviceKey: SERVICE_KEY,
      retry: { attempts: 1 },
      timeoutMs: 10_000,
    }),
  };
  onJsonLines<Host['log'][number]>(child.stdout!, (e) => host.log.push(e));
  return host;
}

/** The warnings and errors the hosts logged, one line each (for a failure's message). */
const complaints = (of: Host[]) =>
  of
    .flatMap((h) => h.log.filter((e) => (e.level ?? 0) >= 40).map((e) => `${h.name}: ${e.msg} ${e.err?.message ?? ''}`))
    .join('\n');

/** How many processes of `host` started building an HNSW graph. */
const builds = (host: Host) => host.log.filter((e) => e.msg === 'discover index: building the HNSW graph').length;

/** The snapshot in force in a host's data folder (`discover-index/current.json`), or null. */
function snapshotInForce(host: Host): { generation: string; graph: unknown } | null {
  const manifest = join(host.dataDir, 'discover-index', 'current.json');
  return existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')) : null;
}

beforeAll(async () => {
  net = makeHostsNetwork();
  figures.mode = net.mode;
  const started = Date.now();
  cluster = await startRedisCluster({ host: net.storeAddress });
  redis = new Cluster(cluster.nodes, { lazyConnect: false });
  sql = await openPostgres(TEST_DATABASE_URL, { schema }); // creates the schema
  let databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  if (net.mode === 'netns') {
    const r = await startRelay(net.storeAddress);
    relay = r.server;
    const u = new URL(TEST_DATABASE_URL);
    u.hostname = net.storeAddress;
    u.port = String(r.port);
    databaseUrl = `${u}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  }
  for (const i of [0, 1, 2]) hosts.push(await startHost(i, databaseUrl));
  await Promise.all(hosts.map((h) => untilOk(`${h.url}/readyz`, 120_000)));
  figures.startS = ((Date.now() - started) / 1000).toFixed(1);
}, 240_000);

afterAll(async () => {
  console.log(
    `[rehearsal] ${Object.entries(figures)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
  await Promise.all(hosts.map((h) => stopGroup(h.child, 'SIGKILL', 5_000)));
  net?.remove();
  relay?.close();
  redis?.disconnect();
  await cluster?.stop();
  await sql?.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  await sql?.close();
  rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe('a deployment on three hosts', () => {
  const A = () => hosts[0]!;
  const B = () => hosts[1]!;
  const C = () => hosts[2]!;

  it('each host builds its discover index once, one process of its two', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    // past the 10,000 embeddings an in-process index snapshots at (src/discover/wire.ts), so the graph is shared
    const items = Array.from({ length: CATALOG }, (_, n) => ({
      id: `it${n}`,
      author_id: `au${n % 50}`,
      title: Array.from({ length: 3 + (n % 4) }, (_, k) => WORDS[(n * 7 + k * 13) % WORDS.length]).join(' '),
      published_at: nowS - n * 30,
    }));
    const publishing = Date.now();
    for (let n = 0; n < items.length; n += 1000) await A().svc.items.publish(items.slice(n, n + 1000));
    figures.publishS = ((Date.now() - publishing) / 1000).toFixed(1);
    // the fan-out of 10,200 items (one job each, on the three hosts' workers) holds the following
    // timelines' visibility watermark back until it is done: the later steps read those timelines
    await until(
      'the fan-out backlog to drain',
      async () => {
        const [row] = await sql.query<{ n: string }>('SELECT count(*) AS n FROM fanout_pending');
        return Number(row!.n) === 0 ? true : undefined;
      },
      180_000,
    );
    figures.fanoutDrainS = ((Date.now() - publishing) / 1000).toFixed(1);
    const started = Date.now();
    await until(
      () =>
        `a snapshot with a graph in every host (graph builds begun: ${hosts.map(builds)}; snapshots: ${hosts.map((h) => JSON.stringify(snapshotInForce(h)))}; ${complaints(hosts)})`,
      () => (hosts.every((h) => snapshotInForce(h)?.graph) ? true : undefined),
      120_000,
    );
    figures.indexS = ((Date.now() - started) / 1000).toFixed(1);
    expect(hosts.map(builds)).toEqual([1, 1, 1]);
    for (const h of hosts) {
      const page = await h.svc.as('explorer').discover.page(null, { limit: 10 });
      expect(page.items.length, h.name).toBe(10);
    }
  });

  it('a reader paging for-you across the three hosts never gets an item twice', async () => {
    const seen: string[] = [];
    const perHost: Record<string, number> = { A: 0, B: 0, C: 0 };
    let turn = 0;
    for (let round = 0; round < 3; round++) {
      for (let page = 0; page < 5; page++) {
        const h = hosts[turn++ % 3]!;
        const reader = h.svc.as('pager');
        const res =
          page === 0 ? await reader.forYou.refresh({ limit: 10 }) : await reader.forYou.loadMore({ limit: 10 });
        seen.push(...res.items.map((i) => i.id));
        perHost[h.name]! += 1;
        if (!res.has_more) break;
      }
    }
    expect(seen.length).toBeGreaterThanOrEqual(100);
    expect(seen.length - new Set(seen).size, 'repeats').toBe(0);
    figures.forYouItems = seen.length;
    figures.forYouPages = Object.values(perHost).join('/');
  });

  it('a following stream on host B gets an item published on host A', async () => {
    await C().svc.users.register('star');
    await C().svc.users.register('streamer');
    await C().svc.follows.follow('streamer', 'star');
    const nowS = Math.floor(Date.now() / 1000);
    await A().svc.items.publish([{ id: 'star-warm', author_id: 'star', title: 'warming up', published_at: nowS }]);
    const warm = await until(
      'the first item in the timeline',
      async () => (await B().svc.as('streamer').following.page({ limit: 5 })).items.find((e) => e.id === 'star-warm'),
      20_000,
    );
    const abort = new AbortController();
    const events: { id: string; at: number }[] = [];
    const reading = (async () => {
      const stream = B().svc.as('streamer').following.stream({ sinceId: warm.timeline_id, signal: abort.signal });
      for await (const e of stream as AsyncIterable<StreamEvent>)
        if (e.type === 'item') events.push({ id: e.item.id, at: Date.now() });
    })().catch(() => undefined);
    try {
      let published = Date.now();
      await A().svc.items.publish([{ id: 'star-1', author_id: 'star', title: 'live from A', published_at: nowS + 1 }]);
      // The first stream of a process subscribes to the fan-out signal as it opens (src/following/stream-hub.ts);
      // a signal sent before that subscription is active is lost, and the session's resync at its next
      // heartbeat (FRESHET_STREAM_HEARTBEAT_S, 15 s) delivers the entry: seen here in ~1 run of 5
      await until(
        'star-1 on the stream of B',
        () => (events.some((e) => e.id === 'star-1') ? true : undefined),
        40_000,
      );
      figures.firstStreamMs = events.find((e) => e.id === 'star-1')!.at - published;
      // once the stream is surely live, a second one comes with the fan-out's signal
      published = Date.now();
      await A().svc.items.publish([{ id: 'star-2', author_id: 'star', title: 'again from A', published_at: nowS + 2 }]);
      await until(
        'star-2 on the stream of B',
        () => (events.some((e) => e.id === 'star-2') ? true : undefined),
        10_000,
      );
      figures.streamMs = events.find((e) => e.id === 'star-2')!.at - published;
      expect(events.map((e) => e.id)).toEqual(['star-1', 'star-2']);
    } finally {
      abort.abort();
      await reading;
    }
  });

  it('an erase through host C reaches every store', async () => {
    const u = `zq${randomBytes(4).toString('hex')}`;
    // their items' ids do not hold the user's id: an erased author's items stay as tombstones (ids never reused)
    const mine = [`er${randomBytes(4).toString('hex')}`, `er${randomBytes(4).toString('hex')}`];
    const nowS = Math.floor(Date.now() / 1000);
    await A().svc.users.register(u);
    await B().svc.users.register('fan1');
    await A().svc.items.publish([
      { id: mine[0]!, author_id: u, title: 'rust compiler notes', published_at: nowS },
      { id: mine[1]!, author_id: u, title: 'postgres index notes', published_at: nowS },
    ]);
    await B().svc.follows.follow(u, 'au1');
    await B().svc.follows.follow('fan1', u);
    await A().svc.views.record({ item_id: 'it1', visitor_id: u });
    await A().svc.as(u).forYou.refresh({ limit: 10 });
    await B().svc.as(u).discover.page(null, { limit: 10 });
    await B().svc.as('fan1').following.page({ limit: 10 });
    expect((await redisTraces(redis, prefix, u)).length).toBeGreaterThan(2); // there is something to erase
    expect(Object.keys(await sqlTraces(sql, u)).length).toBeGreaterThan(2);

    const erased = await C().svc.users.erase(u, { items: 'delete' });
    expect(erased.removed.items).toEqual({ items: 2 });
    expect(await sqlTraces(sql, u)).toEqual({});
    expect(await redisTraces(redis, prefix, u)).toEqual([]);
    for (const h of [A(), B()]) {
      const missing = await h.svc.items.get(mine[0]!).catch((e: { status: number }) => e.status);
      expect(missing, h.name).toBe(404);
      const timeline = await h.svc.as('fan1').following.page({ limit: 10 });
      expect(
        timeline.items.map((e) => e.id).filter((id) => mine.includes(id)),
        h.name,
      ).toEqual([]);
    }
    erasedItems = mine;
    figures.erased = u;
  });

  it('with host B killed mid-traffic, A and C serve the rest with 0 repeats', async () => {
    const alive = new Set<Host>(hosts);
    const failures: Record<string, number> = { A: 0, B: 0, C: 0 };
    const served = { before: 0, after: 0 };
    let killedAt = 0;
    const readers = ['k1', 'k2', 'k3'];
    const delivered = new Map(readers.map((r) => [r, [] as string[]]));
    let next = 0;
    /** One page for `reader` from the next live host; a host that does not answer is taken out (a balancer's job). */
    const page = async (reader: string, refresh: boolean) => {
      for (;;) {
        const live = [...alive];
        if (live.length === 0) throw new Error('no host left');
        const h = live[next++ % live.length]!;
        try {
          const r = h.svc.as(reader).forYou;
          const res = refresh ? await r.refresh({ limit: 10 }) : await r.loadMore({ limit: 10 });
          delivered.get(reader)!.push(...res.items.map((i) => i.id));
          if (killedAt) served.after++;
          else served.before++;
          return;
        } catch (err) {
          if ((err as { kind?: string }).kind !== 'network' && (err as { kind?: string }).kind !== 'timeout') throw err;
          failures[h.name]! += 1;
          alive.delete(h);
        }
      }
    };
    await Promise.all(
      readers.map(async (reader, r) => {
        for (let n = 0; n < 14; n++) {
          if (r === 0 && n === 5) {
            await stopGroup(B().child, 'SIGKILL', 5_000); // every process of host B, at once
            killedAt = Date.now();
          }
          await page(reader, n % 7 === 0);
        }
      }),
    );
    for (const [reader, ids] of delivered) expect(ids.length - new Set(ids).size, `${reader} repeats`).toBe(0);
    expect(served.after).toBeGreaterThan(10);
    expect(alive.has(B())).toBe(false);
    expect([failures.A, failures.C]).toEqual([0, 0]);
    for (const h of [A(), C()]) expect(await untilOk(`${h.url}/readyz`, 5_000), h.name).toMatchObject({ code: 0 });
    figures.killPages = `${served.before}+${served.after}`;
    figures.killFailovers = failures.B!;
    figures.killItems = [...delivered.values()].reduce((n, ids) => n + ids.length, 0);
  });

  it('A and C stop on SIGTERM with exit 0; their snapshot in force holds no erased item', async () => {
    // to the primary only (as docker stop, Kubernetes and systemd's KillMode=mixed): it stops its workers;
    // a SIGTERM to the whole group reaches each worker twice, and close-with-grace exits 1 on the second
    const results = await Promise.all([A(), C()].map((h) => stopGroup(h.child, 'SIGTERM', 30_000, 'main')));
    expect(results, complaints([A(), C()])).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
    expect(hosts.map(builds)).toEqual([1, 1, 1]); // still one graph per host, over the whole rehearsal
    for (const h of [A(), C()]) {
      const snap = snapshotInForce(h)!;
      const ids = readFileSync(join(h.dataDir, 'discover-index', snap.generation, 'ids.json'), 'utf8');
      for (const id of erasedItems) expect(ids.includes(`"${id}"`), `${h.name} ${id}`).toBe(false);
      expect(ids.includes(`"it${CATALOG - 1}"`), h.name).toBe(true);
    }
  });
});
