/**
 * The workload of bench/memory.ts: a small keep-alive HTTP client for the app on loopback (service key,
 * `X-Freshet-Reader`), the catalog it seeds through the API (items by ~500 authors, seed views so the
 * hot ranking has data), one reader's realistic session (for-you, discover, follows, following reads,
 * views, a "not interested"), a light reader (one discover page), a bounded pool of concurrent
 * sessions run in a child process (the client's work stays off the server's event loop), the 3-master Redis Cluster the benchmark starts on free loopback ports (adapted from
 * test/support/redis-cluster.ts, which bench/ cannot import: it needs vitest), and the sizes of the keys
 * under a prefix on every master.
 *
 * Nothing here asserts: a request that fails is counted by status (and its first messages kept), and
 * the session goes on.
 */
import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from '../src/kernel/redis/client.js';
import { isEntry, prng, range } from './support.js';
import { startRedisCluster, type TestCluster } from '../test/support/cluster-process.js';

/** Items per page on every feed. */
export const PAGE = 20;

/** One session's shape: for-you pages (1 refresh, then load_more), discover pages (following `next_cursor`), …. */
export const SESSION = {
  forYouPages: 8,
  discoverPages: 3,
  follows: 50,
  followingReads: 2,
  views: 10,
  notInterested: 1,
} as const;

/** The catalog: items by authors published during the hour before `nowMs`; seed views by `visitors` visitors. */
export interface CatalogPlan {
  items: number;
  authors: number;
  views: number;
  visitors: number;
  nowMs: number;
}

/** What a session reads from the catalog. */
export interface Catalog {
  authors: string[];
}

// ---------------------------------------------------------------- HTTP client

/** Keep-alive JSON client of the app (service key; a reader named per request). */
export class Api {
  private readonly agent: Agent;
  /** HTTP status (or `error`) → responses. */
  readonly statuses = new Map<string, number>();
  /** The first few failures, for the notes. */
  readonly failures: string[] = [];
  requests = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly serviceKey: string,
    connections: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: connections });
  }

  /** Sends one request; resolves with `data`, or null when the answer was not 200 (counted). */
  async call<T>(
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    opts: { reader?: string; body?: unknown } = {},
  ): Promise<T | null> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.serviceKey}` };
    if (opts.reader) headers['x-freshet-reader'] = opts.reader;
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    this.requests++;
    let status = 'error';
    try {
      const res = await this.send(method, path, headers, body);
      status = String(res.status);
      if (res.status === 200) return (JSON.parse(res.text) as { data: T }).data;
      this.fail(`${method} ${path.split('?')[0]}: ${res.status} ${res.text.slice(0, 200)}`);
    } catch (err) {
      this.fail(`${method} ${path.split('?')[0]}: ${(err as Error).message}`);
    } finally {
      this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    }
    return null;
  }

  /** Closes the idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  private fail(message: string): void {
    if (this.failures.length < 3) this.failures.push(message);
  }

  private send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<{ status: number; text: string }> {
    const url = new URL(path, this.baseUrl);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method,
          path: url.pathname + url.search,
          headers,
          agent: this.agent,
          timeout: 60_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer within 60 s')));
      req.on('error', reject);
      req.end(body);
    });
  }
}

// ---------------------------------------------------------------- catalog

/** 1,000 pronounceable words (`kalomi`), drawn Zipf-like: a few common, most rare. */
function wordSource(seed: number): () => string {
  const syl = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'zu', 'pe'];
  const words = range(1000, (i) => syl[Math.floor(i / 100)]! + syl[Math.floor(i / 10) % 10]! + syl[i % 10]!);
  const rnd = prng(seed);
  return () => words[Math.floor(words.length ** rnd()) - 1]!;
}

/**
 * Publishes `plan.items` items (`m<i>` by `a<i mod authors>`, one a second during the hour before
 * now) through `POST /v1/items` in batches of 1,000, then `plan.views` seed views by `sv<k>` visitors
 * (`POST /v1/views` batches; each visitor stays under the per-minute budget).
 */
export async function seedCatalog(api: Api, plan: CatalogPlan): Promise<Catalog> {
  const word = wordSource(2026);
  const phrase = (n: number) => range(n, word).join(' ');
  const nowS = Math.floor(plan.nowMs / 1000);
  for (let from = 0; from < plan.items; from += 1000) {
    const batch = range(Math.min(1000, plan.items - from), (j) => {
      const i = from + j;
      return {
        id: `m${i}`,
        author_id: `a${i % plan.authors}`,
        title: phrase(6),
        text: phrase(24),
        tags: [word(), word()],
        published_at: nowS - (i % 3600),
      };
    });
    await api.call('POST', '/v1/items', { body: batch });
  }
  const rnd = prng(7);
  const views = range(plan.views, (v) => ({
    item_id: `m${Math.floor(plan.items ** rnd()) - 1}`,
    visitor_id: `sv${v % plan.visitors}`,
  }));
  for (let from = 0; from < views.length; from += 1000)
    await api.call('POST', '/v1/views', { body: views.slice(from, from + 1000) });
  return { authors: range(plan.authors, (a) => `a${a}`) };
}

// ---------------------------------------------------------------- sessions

interface Item {
  id: string;
}

/** `n` distinct authors of the catalog, chosen by `rnd`. */
function pickAuthors(catalog: Catalog, n: number, rnd: () => number): string[] {
  const chosen = new Set<string>();
  for (let guard = 0; chosen.size < Math.min(n, catalog.authors.length) && guard < 100 * n; guard++) {
    chosen.add(catalog.authors[Math.floor(rnd() * catalog.authors.length)]!);
  }
  return [...chosen];
}

/** Up to `pages` discover pages of `reader`, following `next_cursor`; the items it got. */
async function discoverPages(api: Api, reader: string, pages: number): Promise<string[]> {
  const got: string[] = [];
  let cursor: string | null = null;
  for (let p = 0; p < pages; p++) {
    const q: string = `/v1/feeds/discover?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const data: { items: Item[]; next_cursor: string | null } | null = await api.call('GET', q, { reader });
    if (!data) break;
    got.push(...data.items.map((i) => i.id));
    cursor = data.next_cursor;
    if (!cursor) break;
  }
  return got;
}

/** The for-you pages of a session (refresh, then load_more); the items it got. */
async function forYouPages(api: Api, reader: string): Promise<string[]> {
  const got: string[] = [];
  for (let p = 0; p < SESSION.forYouPages; p++) {
    const body = { action: p === 0 ? 'refresh' : 'load_more', limit: PAGE };
    const data = await api.call<{ items: Item[] }>('POST', '/v1/feeds/for-you', { reader, body });
    if (data) got.push(...data.items.map((i) => i.id));
  }
  return got;
}

/** Follows 50 authors, then reads the following timeline twice (first page, then `next_max_id`). */
async function followingSession(api: Api, reader: string, catalog: Catalog, rnd: () => number): Promise<void> {
  for (const author of pickAuthors(catalog, SESSION.follows, rnd))
    await api.call('PUT', `/v1/users/${reader}/following/${author}`);
  let maxId: string | null = null;
  for (let p = 0; p < SESSION.followingReads; p++) {
    const q: string = `/v1/feeds/following?limit=${PAGE}${maxId ? `&max_id=${maxId}` : ''}`;
    const data: { next_max_id: string | null } | null = await api.call('GET', q, { reader });
    maxId = data?.next_max_id ?? null;
    if (!maxId) break;
  }
}

/**
 * One reader's session: 8 for-you pages, 3 discover pages, 50 follows and 2 following reads, 10 views
 * of items the for-you pages showed, 1 "not interested" on the first discover item.
 */
async function readerSession(api: Api, reader: string, index: number, catalog: Catalog): Promise<void> {
  const rnd = prng(10_000 + index);
  const shown = await forYouPages(api, reader);
  const discovered = await discoverPages(api, reader, SESSION.discoverPages);
  await followingSession(api, reader, catalog, rnd);
  for (const item of shown.slice(0, SESSION.views))
    await api.call('POST', '/v1/views', { body: { item_id: item, visitor_id: reader } });
  const disliked = discovered[0] ?? shown[SESSION.views];
  if (disliked) await api.call('POST', '/v1/feedback', { reader, body: { item_id: disliked, kind: 'not_interested' } });
}

/** What the session child runs: every session, then the light reader's one discover page. */
export interface SessionPlan {
  url: string;
  serviceKey: string;
  readers: string[];
  catalog: Catalog;
  concurrency: number;
  seconds: number;
  lightReader: string;
}

/** What it did: the readers whose session ran (all finished), how long it took, the client's counts. */
export interface SessionOutcome {
  readers: string[];
  elapsedMs: number;
  requests: number;
  statuses: [string, number][];
  failures: string[];
}

/**
 * Runs a session for each reader of the plan, `concurrency` at a time, starting none after `seconds`
 * (the readers started are the ones measured; progress on stderr every 20 s), then the light reader's page.
 */
async function execute(plan: SessionPlan): Promise<SessionOutcome> {
  const api = new Api(plan.url, plan.serviceKey, plan.concurrency);
  const start = performance.now();
  let next = 0;
  let done = 0;
  const progress = setInterval(
    () =>
      console.error(
        `  … ${done}/${plan.readers.length} sessions (${((performance.now() - start) / 1000).toFixed(0)} s)`,
      ),
    20_000,
  );
  await Promise.all(
    range(plan.concurrency, async () => {
      while (next < plan.readers.length && performance.now() < start + plan.seconds * 1000) {
        const i = next++;
        await readerSession(api, plan.readers[i]!, i, plan.catalog);
        done++;
      }
    }),
  );
  clearInterval(progress);
  const elapsedMs = performance.now() - start;
  await discoverPages(api, plan.lightReader, 1);
  api.close();
  return {
    readers: plan.readers.slice(0, next),
    elapsedMs,
    requests: api.requests,
    statuses: [...api.statuses],
    failures: api.failures,
  };
}

/** Runs `plan` in a child process, so the client's work does not share the server's event loop. */
export function runSessionsInChild(plan: SessionPlan): Promise<SessionOutcome> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [], { execArgv: process.execArgv, stdio: 'inherit' });
    child.once('message', (outcome) => resolve(outcome as SessionOutcome));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`session child exited with ${code}`))));
    child.send(plan);
  });
}

if (isEntry(import.meta.url) && process.send) {
  process.once('disconnect', () => process.exit(1));
  process.once('message', (plan) => {
    execute(plan as SessionPlan).then(
      (outcome) => process.send!(outcome, () => process.exit(0)),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}

// ---------------------------------------------------------------- Redis Cluster

/** A running 3-master cluster: its masters and how to stop it (idempotent). */
export type BenchCluster = TestCluster;

/**
 * Starts a 3-master cluster on free loopback ports (test/support/cluster-process.ts), its nodes in a process
 * group of their own so a Ctrl-C reaches the benchmark, whose cleanup stops them.
 * @throws Error when a node does not start or the cluster does not form in time (nodes stopped).
 */
export function startCluster(): Promise<BenchCluster> {
  return startRedisCluster({ detached: true });
}

// ---------------------------------------------------------------- key sizes and node figures

/** One key (`rest`: without the prefix), the index of the master holding it, its `MEMORY USAGE … SAMPLES 0`. */
export interface KeySize {
  node: number;
  rest: string;
  bytes: number;
}

/** What `INFO` says of one master. */
export interface NodeStats {
  usedMemory: number;
  commands: number;
}

/** Every key under `prefix` on every master (SCAN), each with its size (pipelined `MEMORY USAGE`). */
export async function measureKeys(nodes: readonly RedisClient[], prefix: string): Promise<KeySize[]> {
  const out: KeySize[] = [];
  for (const [n, node] of nodes.entries()) {
    const found: string[] = [];
    let cursor = '0';
    for (let round = 0; round < 10_000_000; round++) {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      found.push(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
    for (let from = 0; from < found.length; from += 1000) {
      const chunk = found.slice(from, from + 1000);
      const pipe = node.pipeline();
      for (const key of chunk) pipe.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
      const sizes = (await pipe.exec()) ?? [];
      chunk.forEach((key, i) => {
        const bytes = sizes[i]?.[1];
        if (typeof bytes === 'number') out.push({ node: n, rest: key.slice(prefix.length), bytes }); // null: expired meanwhile
      });
    }
  }
  return out;
}

export async function nodeStats(node: RedisClient): Promise<NodeStats> {
  const info = await node.info();
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
  return { usedMemory: field('used_memory'), commands: field('total_commands_processed') };
}
