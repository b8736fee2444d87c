/**
 * The HTTP edge's limits on slow and greedy clients (issue 21.4, 21.5, 21.7), on a loopback port or
 * through `inject`:
 * - a body trickled a byte at a time, headers that never end, and the unauthenticated 1 MB
 *   Content-Length that never arrives: each answered 408 / 40801 (or its 401) and its socket closed
 *   within the configured request timeout + the check interval — not held open;
 * - a reader over its rate budget on feed pages and views: 429 / 42901 with `Retry-After`, while another
 *   reader and the service key go on (on both store pairs: the in-process counts and the Redis ones);
 * - a reader with a feed page in flight at the limit: one more is 429 / 42901 with `Retry-After: 1`,
 *   another reader is served, and the slot comes back once the page answers;
 * - reader tokens that expire past `FRESHET_TOKEN_MAX_TTL_S` (a 100-year token) are refused;
 * - `/metrics` and `/docs` behind the service key when configured so.
 */
import { connect, type Socket } from 'node:net';
import type { FreshetClientError } from '../../src/client/index.js';
import { retryAfterMs } from '../../src/client/transport.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintReaderToken } from '../../src/kernel/http/tokens.js';
import { SERVICE_KEY, item, startTestApp, type TestApp, type TestAppOptions } from '../support/app.js';

const SECRET = 'test-secret-0123456789abcdef';
const svc = { authorization: `Bearer ${SERVICE_KEY}` };

async function listen(t: TestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const a = t.app.server.address();
  return typeof a === 'object' && a ? a.port : 0;
}

/** A raw client: what it received, and when the server closed it (ms after `opened`). */
interface Raw {
  socket: Socket;
  received: () => string;
  closed: Promise<number>;
}

function rawClient(port: number, head: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    let text = '';
    const opened = Date.now();
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head);
      resolve({ socket, received: () => text, closed });
    });
    const closed = new Promise<number>((done) => socket.on('close', () => done(Date.now() - opened)));
    socket.on('data', (b: Buffer) => {
      text += b.toString();
    });
    socket.on('error', () => undefined);
    socket.on('error', reject);
  });
}

/** Writes one byte every `everyMs` until the socket closes (a slow-loris body or header). */
function trickle(raw: Raw, byte: string, everyMs: number): void {
  const timer = setInterval(() => {
    if (raw.socket.destroyed) clearInterval(timer);
    else raw.socket.write(byte);
  }, everyMs);
  void raw.closed.then(() => clearInterval(timer));
}

describe('slow clients are cut at the request and header timeouts (408 / 40801)', () => {
  let t: TestApp;
  let port = 0;
  // 1 s for the request, 0.5 s for its headers; Node checks every 250 ms
  beforeAll(async () => {
    t = await startTestApp({ env: { FRESHET_REQUEST_TIMEOUT_S: '1', FRESHET_HEADERS_TIMEOUT_S: '0.5' } });
    port = await listen(t);
  });
  afterAll(async () => t?.close());

  it('a body sent a byte at a time is answered 408 in the envelope and its socket closed within the timeout', async () => {
    const raw = await rawClient(
      port,
      `POST /v1/items HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${SERVICE_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n[`,
    );
    trickle(raw, ' ', 100);
    const ms = await raw.closed;
    expect(ms).toBeLessThan(3000);
    expect(raw.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(raw.received()).toContain('"code":40801');
  });

  it("the issue's unauthenticated 1 MB Content-Length that never arrives does not hold its socket", async () => {
    const raw = await rawClient(
      port,
      'POST /v1/items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n[',
    );
    trickle(raw, ' ', 100);
    expect(await raw.closed).toBeLessThan(3000);
    expect(raw.received()).toMatch(/^HTTP\/1\.1 (401|408) /);
  });

  it('headers that never end are answered 408 within the header timeout', async () => {
    const raw = await rawClient(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
    trickle(raw, 'X', 100);
    expect(await raw.closed).toBeLessThan(2500);
    expect(raw.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(raw.received()).toContain('"code":40801');
  });

  it('a request that arrives in time is served as before', async () => {
    const raw = await rawClient(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await raw.closed;
    expect(raw.received()).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe.each<[string, TestAppOptions]>([
  ['in-process counts', { hot: 'memory' }],
  ['Redis counts', { hot: 'redis' }],
])('rate limits per caller (%s)', (_name, opts) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      ...opts,
      env: { FRESHET_RATE_READER: '5', FRESHET_RATE_WINDOW_S: '60' },
    });
    await t.app.inject({ method: 'POST', url: '/v1/items', headers: svc, payload: [item('i1', 1000)] });
  });
  afterAll(async () => t?.close());

  it('a reader past its budget gets 429 / 42901 with Retry-After; another reader and the service key go on', async () => {
    const greedy = { authorization: `Bearer ${await t.token('greedy')}` };
    const other = { authorization: `Bearer ${await t.token('other')}` };
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await t.app.inject({ method: 'GET', url: '/v1/hot', headers: greedy })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const refused = await t.app.inject({ method: 'GET', url: '/v1/feeds/discover', headers: greedy });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 42901, data: null });
    expect(refused.json().msg).toMatch(/FRESHET_RATE_READER/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    // the typed client hands the wait to its caller (it never retries a 429 by itself)
    const viaClient = await t
      .client({ token: await t.token('greedy') })
      .hot.top()
      .then(
        () => null,
        (e: unknown) => e as FreshetClientError,
      );
    expect(viaClient).toMatchObject({ status: 429, code: 42901, attempts: 1 });
    expect(viaClient!.retryAfterMs).toBeGreaterThan(0);
    expect(viaClient!.retryAfterMs).toBeLessThanOrEqual(60_000);
    // HEAD runs the GET handler: it counts, and is refused, alike
    expect((await t.app.inject({ method: 'HEAD', url: '/v1/hot', headers: greedy })).statusCode).toBe(429);
    // views count against the same budget
    const view = await t.app.inject({
      method: 'POST',
      url: '/v1/views',
      headers: greedy,
      payload: { item_id: 'i1' },
    });
    expect(view.statusCode).toBe(429);
    expect((await t.app.inject({ method: 'GET', url: '/v1/hot', headers: other })).statusCode).toBe(200);
    for (let i = 0; i < 10; i++)
      expect(
        (await t.app.inject({ method: 'GET', url: '/v1/hot', headers: { ...svc, 'x-freshet-reader': 'greedy' } }))
          .statusCode,
      ).toBe(200);
    // routes outside the limited ones are not counted
    expect(
      (await t.app.inject({ method: 'GET', url: '/v1/users/greedy/following', headers: greedy })).statusCode,
    ).not.toBe(429);
  });
});

describe.each<[string, TestAppOptions]>([
  ['PGlite + in-process', { db: 'pglite', hot: 'memory' }],
  ['PostgreSQL + Redis', { db: 'postgres', hot: 'redis' }],
])('every route a reader token can call is under a limit (%s)', (_name, opts) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      ...opts,
      env: { FRESHET_RATE_READER: '5', FRESHET_RATE_READER_OTHER: '8', FRESHET_RATE_WINDOW_S: '60' },
    });
    await t.app.inject({ method: 'POST', url: '/v1/items', headers: svc, payload: [item('i1', 1000)] });
  });
  afterAll(async () => t?.close());

  it('every /v1 route documents 429 (a route added later is limited too)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const unlimited = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/v1/'))
      .flatMap(([path, ops]) => Object.entries(ops).map(([m, op]) => [`${m.toUpperCase()} ${path}`, op] as const))
      .filter(([, op]) => !('429' in op.responses))
      .map(([key]) => key);
    expect(unlimited).toEqual([]);
  });

  it('peek shares the feed pages budget (it runs a recall round): 429 past FRESHET_RATE_READER', async () => {
    const peeker = { authorization: `Bearer ${await t.token('peeker')}` };
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push((await t.app.inject({ method: 'GET', url: '/v1/feeds/for-you/peek', headers: peeker })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const refused = await t.app.inject({ method: 'GET', url: '/v1/feeds/for-you/peek', headers: peeker });
    expect(refused.json()).toMatchObject({ code: 42901, data: null });
    expect(refused.json().msg).toMatch(/FRESHET_RATE_READER\)/);
  });

  it('export, notifications, exclusions, markers and preferences share the budget of the other routes', async () => {
    const chatty = { authorization: `Bearer ${await t.token('chatty')}` };
    await t.client().users.setPreferences('chatty', { muted_words: [{ phrase: 'x' }] });
    const urls = [
      '/v1/feeds/notifications',
      '/v1/exclusions',
      '/v1/users/chatty/markers',
      '/v1/users/chatty/preferences',
      '/v1/users/chatty/export',
    ];
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++)
      statuses.push((await t.app.inject({ method: 'GET', url: urls[i % urls.length]!, headers: chatty })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
    const refused = await t.app.inject({ method: 'GET', url: '/v1/exclusions', headers: chatty });
    expect(refused.json()).toMatchObject({ code: 42901, data: null });
    expect(refused.json().msg).toMatch(/FRESHET_RATE_READER_OTHER/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // a separate budget: the reader's feed pages are still served, and the service key is not limited
    expect((await t.app.inject({ method: 'GET', url: '/v1/hot', headers: chatty })).statusCode).toBe(200);
    for (let i = 0; i < 12; i++)
      expect(
        (await t.app.inject({ method: 'GET', url: '/v1/users/chatty/preferences', headers: svc })).statusCode,
      ).toBe(200);
  });
});

describe('an export runs one at a time per reader (PostgreSQL + Redis)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ db: 'postgres', hot: 'redis' });
    const c = t.client();
    for (const u of ['ex1', 'ex2']) await c.users.setPreferences(u, { muted_words: [{ phrase: 'x' }] });
  });
  afterAll(async () => t?.close());

  it('a second export of the same reader while one runs is 429 with Retry-After: 1; another reader is served; the slot comes back', async () => {
    const exp = (u: string, headers: Record<string, string> = svc) =>
      t.app.inject({ method: 'GET', url: `/v1/users/${u}/export`, headers });
    const [a, b, c] = await Promise.all([
      exp('ex1'),
      exp('ex1', { authorization: `Bearer ${await t.token('ex1')}` }),
      exp('ex2'),
    ]);
    expect([a.statusCode, b.statusCode, c.statusCode]).toEqual([200, 429, 200]);
    expect(b.json()).toMatchObject({ code: 42901, data: null });
    expect(b.json().msg).toMatch(/export/);
    expect(b.headers['retry-after']).toBe('1');
    for (let i = 0; i < 3; i++) expect((await exp('ex1')).statusCode).toBe(200);
  });
});

describe.each<[string, TestAppOptions]>([
  ['the embedded default', { db: 'pglite', hot: 'memory' }],
  ['PostgreSQL + Redis', { db: 'postgres', hot: 'redis' }],
])(
  'a hammering reader is held to its budget, another is always served, with the default limits (%s)',
  (_name, opts) => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp(opts);
      await t.app.inject({
        method: 'POST',
        url: '/v1/items',
        headers: svc,
        payload: Array.from({ length: 50 }, (_, i) => item(`n${i}`, 60_000 * (i + 1), { author_id: `a${i % 5}` })),
      });
    });
    afterAll(async () => t?.close());

    it('120 discover pages of one reader, 8 at a time, beside a scrolling reader: at most 30 served in the window, the rest 429; the scroller never refused', async () => {
      const hammer = { authorization: `Bearer ${await t.token('hammer')}` };
      const scroller = { authorization: `Bearer ${await t.token('scroller')}` };
      expect(
        (
          await t.app.inject({
            method: 'POST',
            url: '/v1/feeds/for-you',
            headers: scroller,
            payload: { action: 'refresh' },
          })
        ).statusCode,
      ).toBe(200);
      const hammered: number[] = [];
      const scrolled: number[] = [];
      for (let round = 0; round < 15; round++) {
        const [page, ...noise] = await Promise.all([
          t.app.inject({
            method: 'POST',
            url: '/v1/feeds/for-you',
            headers: scroller,
            payload: { action: 'load_more', limit: 5 },
          }),
          ...Array.from({ length: 8 }, () =>
            t.app.inject({ method: 'GET', url: '/v1/feeds/discover?limit=100', headers: hammer }),
          ),
        ]);
        scrolled.push(page!.statusCode);
        hammered.push(...noise.map((r) => r.statusCode));
      }
      expect(new Set(scrolled)).toEqual(new Set([200]));
      const served = hammered.filter((s) => s === 200).length;
      expect(served).toBeGreaterThan(0);
      expect(served).toBeLessThanOrEqual(30); // FRESHET_RATE_READER per FRESHET_RATE_WINDOW_S (the test runs within one window or two)
      expect(hammered.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    });
  },
);

describe('feed pages in flight per reader (FRESHET_READER_CONCURRENCY=1), PostgreSQL + Redis', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      db: 'postgres',
      hot: 'redis',
      env: { FRESHET_READER_CONCURRENCY: '1' },
    });
  });
  afterAll(async () => t?.close());

  it('a second page sent while the first is in flight is 429 with Retry-After: 1; another reader is not; the slot comes back', async () => {
    const r = { authorization: `Bearer ${await t.token('busy')}` };
    const other = { authorization: `Bearer ${await t.token('calm')}` };
    expect((await t.app.inject({ method: 'GET', url: '/v1/feeds/discover', headers: r })).statusCode).toBe(200);
    // sent together: the first holds its slot across its store round trips, the second meets the limit
    const [a, b, c] = await Promise.all([
      t.app.inject({ method: 'GET', url: '/v1/feeds/discover', headers: r }),
      t.app.inject({ method: 'GET', url: '/v1/feeds/discover', headers: r }),
      t.app.inject({ method: 'GET', url: '/v1/feeds/discover', headers: other }),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 429]);
    expect(b.json()).toMatchObject({ code: 42901, data: null });
    expect(b.json().msg).toMatch(/FRESHET_READER_CONCURRENCY/);
    expect(b.headers['retry-after']).toBe('1');
    expect(c.statusCode).toBe(200);
    // one after another, the slot is free again every time
    for (let i = 0; i < 5; i++)
      expect((await t.app.inject({ method: 'GET', url: '/v1/feeds/discover', headers: r })).statusCode).toBe(200);
  });
});

describe('tokens and operations routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: {
        FRESHET_TOKEN_MAX_TTL_S: String(30 * 86400),
        FRESHET_METRICS_ACCESS: 'service',
        FRESHET_DOCS_ACCESS: 'service',
      },
    });
  });
  afterAll(async () => t?.close());

  it('a token expiring past FRESHET_TOKEN_MAX_TTL_S is refused (a 100-year token); one within it is served', async () => {
    const century = await mintReaderToken(SECRET, 'r1', 100 * 365 * 86400);
    const res = await t.app.inject({ method: 'GET', url: '/v1/hot', headers: { authorization: `Bearer ${century}` } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 40101 });
    expect(res.json().msg).toMatch(/FRESHET_TOKEN_MAX_TTL_S/);
    const month = await mintReaderToken(SECRET, 'r1', 29 * 86400);
    expect(
      (await t.app.inject({ method: 'GET', url: '/v1/hot', headers: { authorization: `Bearer ${month}` } })).statusCode,
    ).toBe(200);
  });

  it('/metrics and /docs need the service key when configured so', async () => {
    const reader = { authorization: `Bearer ${await t.token('r1')}` };
    for (const url of ['/metrics', '/docs/json', '/docs']) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
      expect((await t.app.inject({ method: 'GET', url, headers: reader })).statusCode, url).toBe(403);
      expect((await t.app.inject({ method: 'GET', url, headers: svc })).statusCode, url).toBeLessThan(400);
    }
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    // the typed client (the explorer's Overview and Health pages) sends its key to /metrics
    expect(await t.client().metrics()).toContain('freshet_catalog_items');
    await expect(t.client({ token: await t.token('r1') }).metrics()).rejects.toMatchObject({ status: 403 });
  });

  it('the server refuses a configuration whose CLI tokens it would itself refuse', async () => {
    const { loadConfig } = await import('../../src/compose/config.js');
    expect(() =>
      loadConfig({ FRESHET_TOKEN_TTL_S: String(40 * 86400), FRESHET_TOKEN_MAX_TTL_S: String(30 * 86400) }),
    ).toThrow(/FRESHET_TOKEN_TTL_S/);
    expect(() => loadConfig({ FRESHET_HEADERS_TIMEOUT_S: '20', FRESHET_REQUEST_TIMEOUT_S: '10' })).toThrow(
      /FRESHET_HEADERS_TIMEOUT_S/,
    );
  });
});

describe('Retry-After in the typed client', () => {
  it('reads delay-seconds and HTTP-dates as ms, a past date as 0, anything else as null', () => {
    const now = Date.parse('Wed, 21 Oct 2026 07:27:30 GMT');
    expect(retryAfterMs('7', now)).toBe(7_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:28:00 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('-5', now)).toBeNull();
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});
