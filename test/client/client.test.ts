/**
 * `freshet-engine/client` against a real server on a loopback port: the example of docs/client.md runs as
 * written; errors arrive typed (envelope code, HTTP status, kind); a 503 from a store that does not
 * serve (a real Redis out of memory under noeviction, as in test/http/store-outage.test.ts) is retried with
 * backoff and counted by the server, a 400 or 403 is not; a request the server never answers times out; the
 * client imports nothing of the server at run time and nothing of Node (it runs in browsers).
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FreshetClient, FreshetClientError, parseSse } from '../../src/client/index.js';
import { SERVICE_KEY, item, startTestApp, type TestApp } from '../support/app.js';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/client.ts', import.meta.url));
const PAGE = fileURLToPath(new URL('../../docs/client.md', import.meta.url));
const ENTRY = fileURLToPath(new URL('../../src/client/index.ts', import.meta.url));
const CLIENT_DIR = fileURLToPath(new URL('../../src/client/', import.meta.url));

/** Listens on a random loopback port; returns the base URL. */
async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

/** What a FreshetClientError carries, for one-line assertions. */
async function failure(
  p: Promise<unknown>,
): Promise<Pick<FreshetClientError, 'kind' | 'status' | 'code' | 'attempts'>> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FreshetClientError);
  const e = err as FreshetClientError;
  return { kind: e.kind, status: e.status, code: e.code, attempts: e.attempts };
}

describe('the client against a running server (PGlite + in-process)', () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await startTestApp();
    url = await listen(t);
  });
  afterAll(async () => t?.close());

  it('the example is on docs/client.md as it is in examples/client.ts, and runs', async () => {
    expect(readFileSync(PAGE, 'utf8')).toContain(readFileSync(EXAMPLE, 'utf8'));
    t.clock.set(Date.now()); // the example publishes at wall time
    const source = readFileSync(EXAMPLE, 'utf8').replace(
      "from 'freshet-engine/client'",
      `from ${JSON.stringify(ENTRY)}`,
    );
    expect(source).not.toContain("'freshet-engine/client'");
    const copy = join(fileURLToPath(new URL('.', import.meta.url)), `.client-example-${process.pid}.ts`);
    writeFileSync(copy, source);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    process.env.FRESHET_URL = url;
    process.env.FRESHET_SERVICE_KEY = SERVICE_KEY;
    try {
      await import(copy);
      expect(log).toHaveBeenCalledTimes(1);
      const [, forYou, , following, , hot, , status, code] = log.mock.calls[0]!;
      expect([...(forYou as string[])].sort()).toEqual(['c1', 'c2']);
      expect(following).toEqual(['c1']);
      expect(hot).toEqual(['c2']);
      expect([status, code]).toEqual([400, 40001]);
    } finally {
      log.mockRestore();
      delete process.env.FRESHET_URL;
      delete process.env.FRESHET_SERVICE_KEY;
      rmSync(copy, { force: true });
    }
  }, 60_000);

  it('throws typed errors: 40001, 40101, 40401, 40301 (reader token on a service route), none retried', async () => {
    const onRetry = vi.fn();
    const service = new FreshetClient({ baseUrl: url, serviceKey: SERVICE_KEY, onRetry });
    expect(await failure(service.as('r1').forYou.refresh({ limit: 0 }))).toEqual({
      kind: 'http',
      status: 400,
      code: 40001,
      attempts: 1,
    });
    expect(await failure(service.items.get('nope'))).toEqual({ kind: 'http', status: 404, code: 40401, attempts: 1 });
    const wrong = new FreshetClient({ baseUrl: url, serviceKey: 'not-the-key', onRetry });
    expect(await failure(wrong.items.get('nope'))).toEqual({ kind: 'http', status: 401, code: 40101, attempts: 1 });
    const reader = new FreshetClient({ baseUrl: url, token: await t.token('r1'), onRetry });
    expect(await failure(reader.items.publish([item('x1', HOUR_MS)]))).toEqual({
      kind: 'http',
      status: 403,
      code: 40301,
      attempts: 1,
    });
    expect(onRetry).not.toHaveBeenCalled();
    const err = await service.items.get('nope').catch((e: unknown) => e as FreshetClientError);
    expect(err).toMatchObject({
      name: 'FreshetClientError',
      msg: 'no item nope',
      data: null,
      request: 'GET /v1/items/nope',
    });
  });

  it('reader-token mode reads its own feeds, graph and exclusions', async () => {
    const service = new FreshetClient({ baseUrl: url, serviceKey: SERVICE_KEY, now: () => t.clock.now() });
    const nowS = Math.floor(t.clock.now() / 1000);
    await service.items.publish(
      [1, 2, 3].map((i) => ({ id: `tk${i}`, author_id: 'tk_author', title: `t${i}`, published_at: nowS - i })),
    );
    const reader = new FreshetClient({ baseUrl: url, token: await t.token('tk_reader') });
    expect(await reader.follows.follow('tk_reader', 'tk_author')).toMatchObject({ following: true, created: true });
    const ids: string[] = [];
    for await (const e of reader.following.items({ limit: 1 })) ids.push(e.id);
    expect(ids).toEqual(['tk1', 'tk2', 'tk3']);
    expect((await reader.follows.following('tk_reader')).users.map((u) => u.id)).toEqual(['tk_author']);
    const peeked = await reader.forYou.peek(); // fresh unseen items (these three, and the example's), nothing served yet
    expect(peeked.count).toBeGreaterThanOrEqual(3);
    expect(await reader.forYou.peek()).toEqual(peeked); // peek writes nothing
    expect(await reader.feedback.notInterested('tk2')).toMatchObject({ created: true, author_id: 'tk_author' });
    expect((await reader.exclusions.list()).not_interested.map((n) => n.item_id)).toEqual(['tk2']);
    expect(await reader.feedback.undo('tk2')).toMatchObject({ removed: true });
    expect((await reader.exclusions.list()).not_interested).toEqual([]);
    expect(await reader.blocks.block('tk_reader', 'tk_author')).toMatchObject({ blocking: true });
    expect((await reader.blocks.list('tk_reader')).users.map((u) => u.id)).toEqual(['tk_author']);
    expect(await reader.engagements.record({ item_id: 'tk1', kind: 'like' })).toMatchObject({ created: true });
    expect(await reader.views.record({ item_id: 'tk3' })).toMatchObject({ visitor_id: 'tk_reader', counted: true });
    expect(await failure(reader.users.register('someone'))).toMatchObject({ status: 403, code: 40301 });
  });

  it('a request the server never answers times out (kind timeout), and a caller abort is kind aborted', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      const c = new FreshetClient({ baseUrl: `http://127.0.0.1:${port}`, serviceKey: SERVICE_KEY, timeoutMs: 200 });
      expect(await failure(c.items.get('a'))).toEqual({ kind: 'timeout', status: 0, code: 0, attempts: 1 });
      const ctl = new AbortController();
      const pending = c.items.get('a', { signal: ctl.signal, timeoutMs: 60_000 });
      ctl.abort();
      expect(await failure(pending)).toMatchObject({ kind: 'aborted' });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('a store that cannot serve (Redis out of memory): 503 is retried, 400 is not', () => {
  let t: TestApp;
  let server: RedisServer;
  let url: string;
  beforeAll(async () => {
    // Redis out of memory under noeviction, as in test/http/store-outage.test.ts, but with maxmemory set below
    // what the data already uses (not filled up to it), so no key expiring or buffer freed makes room again
    server = await startRedisServer(['--maxmemory-policy', 'noeviction']);
    t = await startTestApp({ hot: 'memory', env: { FRESHET_REDIS_URL: server.url } });
    url = await listen(t);
    await new FreshetClient({ baseUrl: url, serviceKey: SERVICE_KEY }).items.publish([item('m1', HOUR_MS)]);
    const admin = new Redis(server.url);
    try {
      await admin.config('SET', 'maxmemory', '1');
    } finally {
      admin.disconnect();
    }
  });
  afterAll(async () => {
    await t?.close();
    await server?.stop();
  });

  /** The server's count of `POST /v1/views` answered with `status`, from /metrics. */
  async function served(c: FreshetClient, status: number): Promise<number> {
    const line = (await c.metrics())
      .split('\n')
      .find(
        (l) =>
          l.startsWith('freshet_http_request_duration_seconds_count') &&
          l.includes('route="/v1/views"') &&
          l.includes(`status="${status}"`),
      );
    return line ? Number(line.split(' ').at(-1)) : 0;
  }

  it('sends a 503 request `attempts` times with growing jittered delays, then throws 503/50301', async () => {
    const retries: number[] = [];
    const c = new FreshetClient({
      baseUrl: url,
      token: await t.token('alice'),
      retry: { attempts: 4, baseMs: 5, maxMs: 40 },
      onRetry: (r) => retries.push(r.delayMs),
    });
    const before = await served(c, 503);
    expect(await failure(c.views.record({ item_id: 'm1' }))).toEqual({
      kind: 'http',
      status: 503,
      code: 50301,
      attempts: 4,
    });
    expect(await served(c, 503)).toBe(before + 4);
    expect(retries).toHaveLength(3);
    retries.forEach((d, i) => expect(d).toBeGreaterThanOrEqual(Math.min(40, 5 * 2 ** i) / 2));
    retries.forEach((d, i) => expect(d).toBeLessThanOrEqual(Math.min(40, 5 * 2 ** i)));
  });

  it('a 400 on the same route is thrown at once', async () => {
    const onRetry = vi.fn();
    const c = new FreshetClient({ baseUrl: url, token: await t.token('alice'), onRetry });
    expect(await failure(c.views.record({ item_id: 'm1', flagged: true }))).toEqual({
      kind: 'http',
      status: 403,
      code: 40301,
      attempts: 1,
    });
    expect(await failure(c.views.record({ item_id: 'a:b' }))).toEqual({
      kind: 'http',
      status: 400,
      code: 40002,
      attempts: 1,
    });
    expect(onRetry).not.toHaveBeenCalled();
  });

  it('ready() throws 503 naming the store in data', async () => {
    const c = new FreshetClient({ baseUrl: url, serviceKey: SERVICE_KEY, retry: { attempts: 1 } });
    const err = await c.ready().catch((e: unknown) => e as FreshetClientError);
    expect(err).toMatchObject({ status: 503, code: 50301, data: { stores: { redis: false } } });
  });
});

describe('parseSse', () => {
  it('reads fields across chunk boundaries and line endings, skips comments, joins data lines', async () => {
    const chunks = [
      'retry: 1000\r\n: heartbeat\r\n\r\nid: 7\nevent: item\ndata: {"a"',
      ':1}\n\n',
      'data: x\rdata: y\r\r',
      'id: 8\nevent: reset\ndata: z\n',
    ];
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const ch of chunks) c.enqueue(new TextEncoder().encode(ch));
        c.close();
      },
    });
    const out = [];
    for await (const m of parseSse(body)) out.push(m);
    // the last message has no blank line after it: not dispatched (the connection ended mid-message)
    expect(out).toEqual([
      { event: 'item', data: '{"a":1}', id: '7' },
      { event: 'message', data: 'x\ny', id: '7' },
    ]);
  });
});

describe('the client ships nothing of the server and nothing of Node', () => {
  it('src/client imports only itself at run time (type-only imports elsewhere) and no node: module', () => {
    for (const name of readdirSync(CLIENT_DIR)) {
      const text = readFileSync(join(CLIENT_DIR, name), 'utf8');
      for (const m of text.matchAll(/^import\s+(type\s+)?[^'"]*from\s+['"]([^'"]+)['"]/gm)) {
        if (m[1]) continue;
        expect(`${name}: ${m[2]}`).toMatch(/: \.\/[a-z-]+\.js$/);
      }
      expect(text).not.toMatch(/node:|process\.|Buffer/);
    }
  });
});
