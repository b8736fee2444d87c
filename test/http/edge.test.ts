/**
 * The HTTP edge as a newcomer meets it (issues 14 and 10): credentials are checked before anything
 * else, every 400 says which field, what was wrong and what is allowed, nonsense is refused before a
 * byte is written (non-http URLs, vectors that cannot be normalised, times out of range, `.` ids,
 * deleted ids), and every answer — Fastify's own included — is a `{code, msg, data}` envelope.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { isId } from '../../src/kernel/ids.js';
import { MAX_TIME_MS } from '../../src/kernel/time-range.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';

const svc = { authorization: `Bearer ${SERVICE_KEY}` };
const DAY = 86_400_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { FRESHET_EMBEDDING_DIM: '8', FRESHET_BODY_LIMIT_BYTES: '8192' } });
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/items',
    payload: [item('e1', 1000), item('e2', 2000)],
    headers: svc,
  });
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(async () => t?.close());

type Req = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  payload?: unknown;
  headers?: Record<string, string>;
};
const send = (r: Req) =>
  t.app.inject({ method: r.method, url: r.url, payload: r.payload as string, headers: r.headers });
const stored = async (...ids: string[]) => (await t.f.content.getItems(ids)).map((i) => i.id);

describe('credentials come first (issue 14.1)', () => {
  const malformed: [string, Req][] = [
    ['a body that fails its schema', { method: 'POST', url: '/v1/items', payload: [{}] }],
    [
      'a body that is not JSON',
      {
        method: 'POST',
        url: '/v1/feeds/for-you',
        payload: '{"action":',
        headers: { 'content-type': 'application/json' },
      },
    ],
    [
      'a body holding __proto__',
      {
        method: 'POST',
        url: '/v1/feeds/for-you',
        payload: '{"__proto__":{}}',
        headers: { 'content-type': 'application/json' },
      },
    ],
    [
      'a body over the size limit',
      { method: 'POST', url: '/v1/items', payload: [item('big', 0, { text: 'x'.repeat(9000) })] },
    ],
    ['a malformed id in the path', { method: 'DELETE', url: '/v1/items/a%3Ab' }],
    ['a malformed query', { method: 'GET', url: '/v1/hot?limit=ten&colour=red' }],
    [
      'a malformed header',
      {
        method: 'POST',
        url: '/v1/feeds/for-you',
        payload: { action: 'refresh', limit: 5 },
        headers: { 'x-freshet-reader': 'a:b' },
      },
    ],
  ];

  it.each(malformed)('%s without a token → 401 (40101), not a validation error', async (_name, r) => {
    const res = await send(r);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: 40101, msg: expect.stringMatching(/bearer token/), data: null });
    const forged = await send({ ...r, headers: { ...r.headers, authorization: 'Bearer not-a-token' } });
    expect(forged.json().code).toBe(40101);
  });

  it.each(malformed)('%s with the service key → a 4xx validation error', async (_name, r) => {
    const res = await send({ ...r, headers: { ...r.headers, ...svc } });
    expect([400, 413]).toContain(res.statusCode);
    expect([40001, 40002, 40003, 41301]).toContain(res.json().code);
  });
});

describe('every 400 names the field, what was wrong and what is allowed (issue 14.7)', () => {
  const reader = { ...svc, 'x-freshet-reader': 'carol' };
  const cases: [string, Req, number, RegExp][] = [
    [
      'an unknown enum value lists the allowed ones',
      { method: 'POST', url: '/v1/feeds/for-you', payload: { action: 'sideways', limit: 5 }, headers: reader },
      40001,
      /^body\/action must be one of "refresh", "load_more" \(got "sideways"\)$/,
    ],
    [
      'an enum value of the wrong type too',
      { method: 'POST', url: '/v1/feeds/for-you', payload: { action: 1, limit: 5 }, headers: reader },
      40001,
      /^body\/action must be one of "refresh", "load_more" \(got 1\)$/,
    ],
    [
      'a number out of range gives the range',
      { method: 'POST', url: '/v1/feeds/for-you', payload: { action: 'refresh', limit: 500 }, headers: reader },
      40001,
      /^body\/limit must be an integer from 1 to 100 \(got 500\)$/,
    ],
    [
      'an unknown field lists the known ones',
      {
        method: 'POST',
        url: '/v1/feeds/for-you',
        payload: { action: 'refresh', limit: 5, reader: 'x' },
        headers: reader,
      },
      40001,
      /^body\/reader is not a known field \(allowed: action, limit\)$/,
    ],
    [
      'a single view missing its item says so, not "body must be array"',
      { method: 'POST', url: '/v1/views', payload: { visitor_id: 'v' }, headers: svc },
      40001,
      /^body\/item_id is required \(fields: item_id, visitor_id, flagged, feed, at\)$/,
    ],
    [
      'a bad id in a batch of views names its place and the rule',
      {
        method: 'POST',
        url: '/v1/views',
        payload: [
          { item_id: 'e1', visitor_id: 'v' },
          { item_id: 'a:b', visitor_id: 'v' },
        ],
        headers: svc,
      },
      40002,
      /^body\/1\/item_id has the wrong form \(got "a:b"\); expected an id: 1 to 64 characters/,
    ],
    [
      'a union of types names both',
      { method: 'POST', url: '/v1/items', payload: [item('u1', 0, { published_at: true })], headers: svc },
      40001,
      /^body\/0\/published_at must be a number or a string \(got true\)$/,
    ],
    [
      'a query value of the wrong type',
      { method: 'GET', url: '/v1/hot?limit=ten', headers: svc },
      40001,
      /^query parameter limit must be an integer \(got the string "ten"\)$/,
    ],
    [
      'a hot range out of bounds, checked by the schema',
      { method: 'GET', url: '/v1/hot?range=31d', headers: svc },
      40001,
      /^query parameter range has the wrong form \(got "31d"\); expected <n>h or <n>d from 1h to 30d \(720h\), e\.g\. 72h/,
    ],
    [
      'a repeated query parameter',
      { method: 'GET', url: '/v1/feeds/following?limit=5&limit=6', headers: reader },
      40001,
      /^query parameter limit must be an integer \(got an array\)$/,
    ],
    [
      'a header',
      { method: 'GET', url: '/v1/feeds/discover', headers: { ...svc, 'x-freshet-reader': 'no way' } },
      40002,
      /^header x-freshet-reader has the wrong form \(got "no way"\)/,
    ],
    [
      'a missing reader header',
      { method: 'GET', url: '/v1/feeds/discover', headers: svc },
      40001,
      /^header X-Freshet-Reader is required with the service key/,
    ],
    [
      'a query enum',
      { method: 'DELETE', url: '/v1/feedback/e1?kind=bored', headers: reader },
      40001,
      /^query parameter kind must be one of "not_interested", "show_less" \(got "bored"\)$/,
    ],
    [
      'an empty batch',
      { method: 'POST', url: '/v1/items', payload: [], headers: svc },
      40001,
      /^body must hold 1 to 1000 entries \(got 0\)$/,
    ],
    [
      'following oneself names the path parameter and what is allowed',
      { method: 'PUT', url: '/v1/users/carol/following/carol', headers: svc },
      40004,
      /^path parameter author_id must name another user than the path's :id \(got "carol" for both\): a user cannot follow itself$/,
    ],
    [
      'blocking oneself too',
      { method: 'PUT', url: '/v1/users/carol/blocks/carol', headers: svc },
      40004,
      /^path parameter author_id must name another user than the path's :id \(got "carol" for both\): a user cannot block itself$/,
    ],
  ];

  it.each(cases)('%s', async (_name, r, code, msg) => {
    const res = await send(r);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code, msg: expect.stringMatching(msg), data: null });
  });

  it('a body holding __proto__ is called valid JSON that is refused, and why', async () => {
    const res = await send({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: '{"__proto__": {"admin": true}, "action": "refresh", "limit": 5}',
      headers: { ...reader, 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(40003);
    expect(res.json().msg).toMatch(/valid JSON but holds a "__proto__".*refused.*prototype pollution/);
    const broken = await send({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: '{"action": "refresh",',
      headers: { ...reader, 'content-type': 'application/json' },
    });
    expect(broken.json()).toMatchObject({ code: 40003, msg: expect.stringMatching(/^body is not valid JSON: /) });
  });
});

describe('query strings are coerced by their schema; bodies stay strict', () => {
  it('?limit=5 is the integer 5 on every feed; "5" in a JSON body is refused', async () => {
    const following = await send({
      method: 'GET',
      url: '/v1/feeds/following?limit=5',
      headers: { ...svc, 'x-freshet-reader': 'carol' },
    });
    expect(following.statusCode, following.body).toBe(200);
    expect((await send({ method: 'GET', url: '/v1/hot?limit=3', headers: svc })).json().data.limit).toBe(3);
    const body = await send({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: { action: 'refresh', limit: '5' },
      headers: { ...svc, 'x-freshet-reader': 'carol' },
    });
    expect(body.json()).toMatchObject({ code: 40001, msg: 'body/limit must be an integer (got the string "5")' });
  });
});

describe('ids "." and ".." are not ids (issue 14.8)', () => {
  it('are refused in bodies, paths and headers with 40002; "..." and "a.b" stay valid', async () => {
    expect([isId('.'), isId('..'), isId('...'), isId('a.b'), isId('.a')]).toEqual([false, false, true, true, true]);
    for (const id of ['.', '..']) {
      const res = await send({ method: 'POST', url: '/v1/items', payload: [item(id, 0)], headers: svc });
      expect(res.json()).toMatchObject({ code: 40002, msg: expect.stringContaining('not "." or ".."') });
      const header = await send({
        method: 'GET',
        url: '/v1/feeds/discover',
        headers: { ...svc, 'x-freshet-reader': id },
      });
      expect(header.json().code).toBe(40002);
      const path = await send({
        method: 'PUT',
        url: `/v1/users/u1/following/${encodeURIComponent(id).replace(/\./g, '%2E')}`,
        headers: svc,
      });
      expect([40002, 40401]).toContain(path.json().code); // the client may not even send it as a segment
    }
    expect((await send({ method: 'POST', url: '/v1/items', payload: [item('...', 0)], headers: svc })).statusCode).toBe(
      200,
    );
  });
});

describe('nonsense is refused before anything is written (issue 14.6)', () => {
  it.each([
    'javascript:alert(1)',
    'data:text/html,<b>x</b>',
    'ftp://example.com/x',
    'http://',
    'example.com/page',
    'http://exa mple.com',
  ])('url %j → 40001 naming body/0/url', async (url) => {
    const res = await send({
      method: 'POST',
      url: '/v1/items',
      payload: [item('ok_u', 0), item('bad_u', 0, { url })],
      headers: svc,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 40001, msg: expect.stringMatching(/^body\/1\/url .*http/) });
    expect(await stored('ok_u', 'bad_u')).toEqual([]);
  });

  it('http and https URLs (any case) and null are accepted', async () => {
    const payload = [
      item('url_a', 0, { url: 'https://example.com/a?b=c#d' }),
      item('url_b', 0, { url: 'HTTP://EXAMPLE.COM' }),
      item('url_c', 0, { url: null }),
    ];
    expect((await send({ method: 'POST', url: '/v1/items', payload, headers: svc })).statusCode).toBe(200);
    expect((await t.f.content.getItems(['url_a']))[0]!.url).toBe('https://example.com/a?b=c#d');
  });

  it.each([
    ['overflow (8 × 1e308)', Array(8).fill(1e308)],
    ['underflow (8 × 1e-320)', Array(8).fill(1e-320)],
    ['squares below the smallest double (8 × 1e-200)', Array(8).fill(1e-200)],
  ])(
    'an embedding whose length cannot be normalised — %s — → 40001 naming body/0/embedding',
    async (_name, embedding) => {
      const res = await send({
        method: 'POST',
        url: '/v1/items',
        payload: [item('emb_bad', 0, { embedding })],
        headers: svc,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        code: 40001,
        msg: expect.stringMatching(/^body\/0\/embedding cannot be normalised/),
      });
      expect(await stored('emb_bad')).toEqual([]);
    },
  );

  it('an embedding of ordinary or tiny-but-normal size is accepted', async () => {
    const res = await send({
      method: 'POST',
      url: '/v1/items',
      payload: [
        item('emb_ok', 0, { embedding: [1, 2, 3, 4, 5, 6, 7, 8] }),
        item('emb_small', 0, { embedding: Array(8).fill(1e-150) }),
      ],
      headers: svc,
    });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('a deleted id is never reused (issue 14.5)', () => {
  it('re-posting it is refused whole with 409 / 40901, naming it; the item stays deleted', async () => {
    await send({ method: 'POST', url: '/v1/items', payload: [item('gone_1', 0)], headers: svc });
    expect((await send({ method: 'DELETE', url: '/v1/items/gone_1', headers: svc })).statusCode).toBe(200);
    const res = await send({
      method: 'POST',
      url: '/v1/items',
      payload: [item('fresh_1', 0), item('gone_1', 0, { title: 'back?' })],
      headers: svc,
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      code: 40901,
      msg: expect.stringMatching(/^item gone_1 was deleted; a deleted id is never reused/),
      data: null,
    });
    expect(await stored('fresh_1', 'gone_1')).toEqual([]);
    expect((await send({ method: 'GET', url: '/v1/items/gone_1', headers: svc })).statusCode).toBe(404);
    expect(
      (await send({ method: 'POST', url: '/v1/items', payload: [item('fresh_1', 0)], headers: svc })).json().data,
    ).toEqual({ inserted: 1, updated: 0 });
  });
});

describe('time inputs are checked against one range (issue 10.5)', () => {
  it('published_at in milliseconds is refused with a hint, not read as the year 58,000', async () => {
    const res = await send({
      method: 'POST',
      url: '/v1/items',
      payload: [item('ms_1', 0, { published_at: T0 })],
      headers: svc,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 40001,
      msg: expect.stringMatching(
        /^body\/0\/published_at is .*outside the accepted time range .*it looks like milliseconds/,
      ),
    });
    expect(await stored('ms_1')).toEqual([]);
  });

  it('published_at past the clock + skew or after 2100 is refused; within the skew is fine', async () => {
    for (const published_at of [(T0 + 2 * DAY) / 1000, '2101-01-01T00:00:00Z', 4398046511104]) {
      const res = await send({
        method: 'POST',
        url: '/v1/items',
        payload: [item('late_1', 0, { published_at })],
        headers: svc,
      });
      expect(res.json(), String(published_at)).toMatchObject({
        code: 40001,
        msg: expect.stringContaining('body/0/published_at'),
      });
    }
    expect(
      (
        await send({
          method: 'POST',
          url: '/v1/items',
          payload: [item('soon_1', 0, { published_at: (T0 + DAY / 2) / 1000 })],
          headers: svc,
        })
      ).statusCode,
    ).toBe(200);
    expect(await stored('late_1')).toEqual([]);
  });

  it('X-Freshet-Now beyond the range (the old 500s: 2^42 ms, 15 digits) → 40001, nothing written', async () => {
    for (const now of ['4398046511104', '999999999999999', String(T0 + 2 * DAY)]) {
      const res = await send({
        method: 'POST',
        url: '/v1/items',
        payload: [item('now_1', 0)],
        headers: { ...svc, 'x-freshet-now': now },
      });
      expect(res.statusCode, now).toBe(400);
      expect(res.json()).toMatchObject({
        code: 40001,
        msg: expect.stringMatching(/^header X-Freshet-Now is .*outside the accepted time range/),
      });
    }
    expect(await stored('now_1')).toEqual([]);
    const past = await send({
      method: 'POST',
      url: '/v1/items',
      payload: [item('now_2', 0)],
      headers: { ...svc, 'x-freshet-now': String(Date.UTC(2016, 0, 1)) },
    });
    expect(past.statusCode).toBe(200); // replays of the past are fine
  });

  it("a view's at beyond the range → 40001 naming body/0/at, no view counted", async () => {
    const res = await send({
      method: 'POST',
      url: '/v1/views',
      payload: [
        { item_id: 'e1', visitor_id: 'w1' },
        { item_id: 'e1', visitor_id: 'w2', at: T0 + 2 * DAY },
      ],
      headers: svc,
    });
    expect(res.json()).toMatchObject({ code: 40001, msg: expect.stringMatching(/^body\/1\/at is /) });
    expect((await t.f.hotCounters.counters(['e1']))[0]!.pv).toBe(0);
  });

  it('FRESHET_FUTURE_SKEW_S sets the skew (default one day)', () => {
    expect(loadConfig({ FRESHET_FUTURE_SKEW_S: '0' }).futureSkewMs).toBe(0);
    expect(loadConfig({}).futureSkewMs).toBe(DAY);
  });
});

describe('publishing at the upper bound of the time range never exhausts the timeline ids (issue 10.5)', () => {
  let late: TestApp;
  beforeAll(async () => {
    late = await startTestApp({ env: { FRESHET_EMBEDDING_DIM: '8' } });
    late.clock.set(MAX_TIME_MS); // the server's clock at 2100-01-01: the latest time accepted
  });
  afterAll(async () => late?.close());

  it('2,100 items at X-Freshet-Now = 2100-01-01 (the old limit: 2,047 at 2^42 − 1 ms, then 500s forever) publish and read back in order', async () => {
    const headers = { ...svc, 'x-freshet-now': String(MAX_TIME_MS) };
    expect((await late.app.inject({ method: 'PUT', url: '/v1/users/author_z', headers: svc })).statusCode).toBe(200);
    expect(
      (await late.app.inject({ method: 'PUT', url: '/v1/users/reader_z/following/author_z', headers })).statusCode,
    ).toBe(200);
    for (let b = 0; b < 3; b++) {
      const payload = Array.from({ length: 700 }, (_, i) => ({
        id: `z${b}_${i}`,
        author_id: 'author_z',
        title: 't',
        published_at: MAX_TIME_MS / 1000,
      }));
      const res = await late.app.inject({ method: 'POST', url: '/v1/items', payload, headers });
      expect(res.statusCode, res.body).toBe(200);
    }
    const once = await late.app.inject({
      method: 'POST',
      url: '/v1/items',
      payload: [{ id: 'z_last', author_id: 'author_z', title: 't', published_at: MAX_TIME_MS / 1000 }],
      headers,
    });
    expect(once.statusCode, once.body).toBe(200);
    await late.f.following.queue.idle(20_000);
    const page = await late.app.inject({
      method: 'GET',
      url: '/v1/feeds/following?limit=3',
      headers: { ...headers, 'x-freshet-reader': 'reader_z' },
    });
    expect(page.statusCode, page.body).toBe(200);
    const ids = page.json().data.items.map((i: { id: string }) => i.id);
    expect(ids[0]).toBe('z_last');
    const tids = page.json().data.items.map((i: { timeline_id: string }) => Number(i.timeline_id));
    expect(tids[0]).toBe(MAX_TIME_MS * 2048 + 2100); // the counter ran ahead of the clock, with ~6 × 10^14 tids to spare
    expect(tids).toEqual([...tids].sort((a: number, b: number) => b - a));
  });
});

describe('Fastify-native answers are envelopes with documented codes (issue 10.6)', () => {
  it('a path parameter over 100 characters → 414 / 41401; bad percent-encoding → 400 / 40006; unknown route → 404 / 40401', async () => {
    const long = await send({ method: 'GET', url: `/v1/items/${'a'.repeat(101)}`, headers: svc });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toMatchObject({
      code: 41401,
      data: null,
      msg: expect.stringContaining('ids are 1 to 64 characters'),
    });
    const bad = await send({ method: 'GET', url: '/v1/items/%zz', headers: svc });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 40006, data: null });
    const none = await send({ method: 'GET', url: '/v2/nothing' });
    expect(none.json()).toMatchObject({ code: 40401, data: null });
  });

  describe('on a real socket', () => {
    let port = 0;
    beforeAll(async () => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as { port: number }).port;
    });

    /** Sends raw bytes and resolves with the whole answer (the server closes the connection). */
    function raw(bytes: string): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
        let out = '';
        socket.on('data', (d) => (out += d));
        socket.on('close', () =>
          resolve({
            status: Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0),
            body: out.slice(out.indexOf('\r\n\r\n') + 4),
          }),
        );
        socket.on('error', reject);
      });
    }

    it('headers over the limit → 431 / 43101 envelope', async () => {
      const res = await raw(
        `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
      );
      expect(res.status).toBe(431);
      expect(JSON.parse(res.body)).toMatchObject({ code: 43101, data: null });
    });

    it('bytes that are not HTTP → 400 / 40006 envelope', async () => {
      const res = await raw('HELLO THERE\r\n\r\n');
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ code: 40006, data: null });
    });

    it('GET /docs/static/../../package.json sent as-is → 404 envelope, not 500', async () => {
      for (const path of [
        '/docs/static/../../package.json',
        '/docs/static/%2e%2e/%2e%2e/package.json',
        '/docs/static/..%2f..%2fpackage.json',
      ]) {
        const res = await raw(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        expect(res.status, path).toBeLessThan(500);
        expect(JSON.parse(res.body), path).toMatchObject({ code: expect.any(Number), data: null });
        expect(res.body).not.toContain('"name": "freshet-engine"');
      }
      // the docs themselves are still served
      const ok = await new Promise<number>((resolve) =>
        httpRequest({ port, path: '/docs/json' }, (r) => (r.resume(), resolve(r.statusCode ?? 0))).end(),
      );
      expect(ok).toBe(200);
    });
  });
});
