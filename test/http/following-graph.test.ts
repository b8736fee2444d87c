/**
 * The graph routes and the following feed's access rules and bad input over HTTP: every mistake gets
 * its documented code (README "Error codes"), duplicates are idempotent, nothing is half-written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { T0, startTestApp, type TestApp } from '../support/app.js';
import { graphCall, page, register, svc } from '../support/following.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await register(t, 'alice', 'bob', 'carol');
});
afterAll(async () => t?.close());

const get = (url: string, headers: Record<string, string> = svc) => t.app.inject({ method: 'GET', url, headers });

describe('graph routes', () => {
  it('register is idempotent', async () => {
    const res = await t.app.inject({ method: 'PUT', url: '/v1/users/dave', headers: svc });
    expect(res.json()).toEqual({ code: 0, msg: 'success', data: { id: 'dave', created: true } });
    expect((await t.app.inject({ method: 'PUT', url: '/v1/users/dave', headers: svc })).json().data.created).toBe(
      false,
    );
  });

  it('follow twice is one follow; unfollow twice is fine; lists show it with the follow time', async () => {
    const a = await graphCall(t, 'PUT', '/v1/users/alice/following/bob');
    expect(a.json().data).toEqual({
      user_id: 'alice',
      author_id: 'bob',
      following: true,
      created: true,
      backfilled: 0,
    });
    expect((await graphCall(t, 'PUT', '/v1/users/alice/following/bob', T0 + 5000)).json().data.created).toBe(false);
    expect((await get('/v1/users/alice/following')).json().data).toEqual({
      user_id: 'alice',
      users: [{ id: 'bob', since: T0 / 1000 }],
      next_cursor: null,
    });
    expect((await get('/v1/users/bob/followers')).json().data.users).toEqual([{ id: 'alice', since: T0 / 1000 }]);
    expect((await graphCall(t, 'DELETE', '/v1/users/alice/following/bob')).json().data).toEqual({
      user_id: 'alice',
      author_id: 'bob',
      following: false,
      removed: true,
    });
    expect((await graphCall(t, 'DELETE', '/v1/users/alice/following/bob')).json().data.removed).toBe(false);
  });

  it('lists page with limit and cursor', async () => {
    for (const a of ['bob', 'carol', 'dave']) await graphCall(t, 'PUT', `/v1/users/erin/following/${a}`);
    const p1 = (await get('/v1/users/erin/following?limit=2')).json().data;
    expect(p1.users).toHaveLength(2);
    const p2 = (await get(`/v1/users/erin/following?limit=2&cursor=${p1.next_cursor}`)).json().data;
    expect(p2.users).toHaveLength(1);
    expect(p2.next_cursor).toBeNull();
    expect(new Set([...p1.users, ...p2.users].map((u: { id: string }) => u.id))).toEqual(
      new Set(['bob', 'carol', 'dave']),
    );
  });

  const bad: [string, 'PUT' | 'DELETE', string, number, number][] = [
    ['following oneself', 'PUT', '/v1/users/alice/following/alice', 400, 40004],
    ['blocking oneself', 'PUT', '/v1/users/alice/blocks/alice', 400, 40004],
    ['an unknown author', 'PUT', '/v1/users/alice/following/nobody', 404, 40402],
    ['blocking an unknown user', 'PUT', '/v1/users/alice/blocks/nobody', 404, 40402],
    ['an invalid author id', 'PUT', '/v1/users/alice/following/a%3Ab', 400, 40002],
    ['an invalid user id', 'PUT', '/v1/users/a%7Bb%7D/following/bob', 400, 40002],
  ];
  for (const [what, method, url, status, code] of bad) {
    it(`refuses ${what} (${code})`, async () => {
      const res = await graphCall(t, method, url);
      expect(res.statusCode).toBe(status);
      expect(res.json()).toMatchObject({ code, data: null });
    });
  }

  it('refuses a follow across a block either way (40302); block removes both follows', async () => {
    await graphCall(t, 'PUT', '/v1/users/carol/following/bob');
    await graphCall(t, 'PUT', '/v1/users/bob/following/carol');
    expect((await graphCall(t, 'PUT', '/v1/users/bob/blocks/carol')).statusCode).toBe(200);
    expect((await get('/v1/users/bob/blocks')).json().data.users.map((u: { id: string }) => u.id)).toEqual(['carol']);
    for (const url of ['/v1/users/carol/following/bob', '/v1/users/bob/following/carol']) {
      const res = await graphCall(t, 'PUT', url);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe(40302);
    }
    expect((await get('/v1/users/carol/following')).json().data.users).toEqual([]);
    expect((await graphCall(t, 'DELETE', '/v1/users/bob/blocks/carol')).json().data).toMatchObject({
      blocking: false,
      removed: true,
    });
    expect((await graphCall(t, 'PUT', '/v1/users/carol/following/bob')).statusCode).toBe(200);
  });

  it('a reader token manages and reads only its own graph and timeline', async () => {
    const auth = { authorization: `Bearer ${await t.token('alice')}` };
    expect((await graphCall(t, 'PUT', '/v1/users/alice/following/carol', T0, auth)).statusCode).toBe(403); // X-Freshet-Now with a reader token
    const own = await t.app.inject({ method: 'PUT', url: '/v1/users/alice/following/carol', headers: auth });
    expect(own.statusCode).toBe(200);
    expect((await get('/v1/users/alice/following', auth)).statusCode).toBe(200);
    for (const [method, url] of [
      ['PUT', '/v1/users/bob/following/carol'],
      ['GET', '/v1/users/bob/followers'],
      ['PUT', '/v1/users/zed'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: auth });
      expect(res.statusCode, url).toBe(403);
    }
    expect((await t.app.inject({ method: 'GET', url: '/v1/feeds/following', headers: auth })).statusCode).toBe(200);
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: '/v1/feeds/following',
          headers: { ...auth, 'x-freshet-reader': 'bob' },
        })
      ).statusCode,
    ).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/v1/feeds/following' })).statusCode).toBe(401);
  });

  it('lists of an unknown user are 40402; a forged cursor is 40001', async () => {
    expect((await get('/v1/users/ghost/followers')).json().code).toBe(40402);
    expect((await get('/v1/users/alice/following?cursor=zzz')).json().code).toBe(40001);
  });
});

describe('following feed: bad input (40001)', () => {
  const cases = [
    'limit=0',
    'limit=101',
    'limit=abc',
    'max_id=-1',
    'max_id=9007199254740992',
    'since_id=1e5',
    'max_id=',
    'other=1',
  ];
  for (const q of cases) {
    it(`?${q}`, async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: `/v1/feeds/following?${q}`,
        headers: { ...svc, 'x-freshet-reader': 'alice' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe(40001);
    });
  }

  it('the service key must name the reader; max_id = 2^53 − 1 is accepted', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/v1/feeds/following', headers: svc })).json().code).toBe(40001);
    expect((await page(t, 'alice', T0, { max_id: '9007199254740991' })).ids).toEqual([]);
  });
});
