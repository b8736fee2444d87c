/**
 * Note 5's exclusions over HTTP, on both store pairs (PGlite + in-process, PostgreSQL + Redis): each
 * rule hides items from the for-you feed (refresh and load_more), "not interested" down-weights the
 * author and is undone by DELETE, and bad input gets its documented 4xx.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/domain/clock.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';

type Page = { code: number; data: { items: { id: string; author_id: string }[]; has_more: boolean } };

const setups = [
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const;

describe.each(setups)('exclusions on $name', ({ hot, db }) => {
  let t: TestApp;
  let n = 0;
  let reader: string;

  beforeAll(async () => {
    t = await startTestApp({ hot, db });
    // m0..m2: author_m, fresh and popular (ranked first for a reader without interests);
    // it_0..it_19: authors author_0..author_4, older and less popular; two by the reader-author "rd_own".
    const ms = [0, 1, 2].map((i) => item(`m${i}`, i * HOUR_MS, { author_id: 'author_m', popularity: 50 }));
    const rest = Array.from({ length: 20 }, (_, i) => item(`it_${i}`, (3 + i) * HOUR_MS, { author_id: `author_${i % 5}`, popularity: 5 }));
    rest[7]!.author_id = 'rd_own';
    rest[8]!.author_id = 'rd_own';
    expect((await call('POST', '/v1/items', [...ms, ...rest])).statusCode).toBe(200);
  });
  afterAll(async () => t?.close());
  beforeEach(() => {
    reader = `rd_${hot}_${++n}`;
    t.clock.set(T0);
  });

  function call(method: 'POST' | 'PUT' | 'DELETE' | 'GET', url: string, body?: unknown, headers: Record<string, string> = {}) {
    return t.app.inject({ method, url, ...(body === undefined ? {} : { payload: body as object }), headers: { authorization: `Bearer ${SERVICE_KEY}`, ...headers } });
  }
  const as = (who: string) => ({ 'x-freshet-reader': who });
  async function feed(action: 'refresh' | 'load_more', limit: number, who = reader): Promise<string[]> {
    const res = await call('POST', '/v1/feeds/for-you', { action, limit }, as(who));
    expect(res.statusCode).toBe(200);
    return (res.json() as Page).data.items.map((i) => i.id);
  }
  async function ok(method: 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, who = reader) {
    const res = await call(method, url, body, as(who));
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  it('recently viewed: a counted view hides the item (reader token as the visitor)', async () => {
    const token = await t.token(reader);
    const res = await t.app.inject({ method: 'POST', url: '/v1/views', payload: { item_id: 'it_3' }, headers: { authorization: `Bearer ${token}` } });
    expect(res.json().data.counted).toBe(true);
    const ids = await feed('refresh', 100);
    expect(ids).not.toContain('it_3');
    expect(ids).toHaveLength(22); // 23 items − it_3
    expect(await feed('refresh', 100, `${reader}_other`)).toContain('it_3'); // other readers unaffected
  });

  it('own items never appear', async () => {
    const ids = await feed('refresh', 100, 'rd_own');
    expect(ids).not.toContain('it_7');
    expect(ids).not.toContain('it_8');
    expect(ids).toHaveLength(21);
  });

  it('engaged items (reply, like, share) never appear; engagements are idempotent', async () => {
    expect(await ok('POST', '/v1/engagements', { item_id: 'it_1', kind: 'reply' })).toEqual({ reader_id: reader, item_id: 'it_1', kind: 'reply', created: true });
    expect((await ok('POST', '/v1/engagements', { item_id: 'it_1', kind: 'reply' })).created).toBe(false);
    await ok('POST', '/v1/engagements', { item_id: 'it_2', kind: 'like' });
    await ok('POST', '/v1/engagements', { item_id: 'it_4', kind: 'share' });
    const ids = await feed('refresh', 100);
    for (const id of ['it_1', 'it_2', 'it_4']) expect(ids).not.toContain(id);
    expect(ids).toHaveLength(20);
  });

  it('not interested hides the item, down-weights its author, and DELETE undoes both', async () => {
    const data = await ok('POST', '/v1/feedback', { item_id: 'm0', kind: 'not_interested' });
    expect(data).toMatchObject({ item_id: 'm0', created: true, author_id: 'author_m', author_penalty_until: Math.floor(T0 / 1000) + 30 * 86400 });
    const ids = await feed('refresh', 100);
    expect(ids).not.toContain('m0');
    expect(ids.slice(-2).sort()).toEqual(['m1', 'm2']); // first without the penalty, last with it
    const undo = await ok('DELETE', '/v1/feedback/m0');
    expect(undo).toEqual({ reader_id: reader, item_id: 'm0', kind: 'not_interested', removed: true });
    expect((await ok('DELETE', '/v1/feedback/m0')).removed).toBe(false);
    expect(await feed('refresh', 100)).toEqual(['m0']); // never delivered, so not seen: it comes back
  });

  it('blocked authors (either way) disappear, and come back on unblock', async () => {
    await ok('PUT', `/v1/users/${reader}/blocks/author_1`);
    expect((await call('PUT', `/v1/users/author_2/blocks/${reader}`)).statusCode).toBe(200);
    const ids = await feed('refresh', 5);
    const all = [...ids, ...(await feed('load_more', 100))];
    expect(all.some((id) => ['it_1', 'it_6', 'it_11', 'it_16', 'it_2', 'it_12', 'it_17'].includes(id))).toBe(false);
    await ok('DELETE', `/v1/users/${reader}/blocks/author_1`);
    expect((await feed('refresh', 100)).sort()).toEqual(['it_1', 'it_11', 'it_16', 'it_6']);
  });

  it('deleted items disappear', async () => {
    const other = `${reader}_d`;
    expect((await call('DELETE', '/v1/items/it_19')).statusCode).toBe(200);
    expect(await feed('refresh', 100, other)).not.toContain('it_19');
  });

  it('load_more drops cached items excluded after the refresh (view, engagement, feedback)', async () => {
    const first = await feed('refresh', 3);
    expect(first).toEqual(['m0', 'm1', 'm2']);
    await ok('POST', '/v1/views', { item_id: 'it_0', visitor_id: reader });
    await ok('POST', '/v1/engagements', { item_id: 'it_3', kind: 'like' });
    await ok('POST', '/v1/feedback', { item_id: 'it_5', kind: 'not_interested' });
    const rest = await feed('load_more', 100);
    for (const id of ['it_0', 'it_3', 'it_5']) expect(rest).not.toContain(id);
    expect(rest.length).toBe(23 - 3 - 3 - 1); // − the first page − 3 excluded − it_19 (deleted above)
  });

  it('bad input gets 4xx and writes nothing', async () => {
    const bad = async (method: 'POST' | 'DELETE', url: string, body: unknown, status: number, code: number, headers: Record<string, string> = as(reader)) => {
      const res = await call(method, url, body, headers);
      expect([res.statusCode, res.json().code], res.body).toEqual([status, code]);
    };
    await bad('POST', '/v1/engagements', { item_id: 'it_1', kind: 'love' }, 400, 40001);
    await bad('POST', '/v1/engagements', { item_id: 'it_1' }, 400, 40001);
    await bad('POST', '/v1/engagements', { item_id: 'it_1', kind: 'like', reader_id: 'x' }, 400, 40001);
    await bad('POST', '/v1/engagements', { item_id: 'a:b', kind: 'like' }, 400, 40002);
    await bad('POST', '/v1/engagements', { item_id: 'nope', kind: 'like' }, 404, 40401);
    await bad('POST', '/v1/engagements', { item_id: 'it_19', kind: 'like' }, 404, 40401); // deleted above
    await bad('POST', '/v1/feedback', { item_id: 'it_1', kind: 'hate' }, 400, 40001);
    await bad('POST', '/v1/feedback', { item_id: 'nope', kind: 'not_interested' }, 404, 40401);
    await bad('DELETE', '/v1/feedback/x%7By%7D', undefined, 400, 40002);
    await bad('DELETE', '/v1/feedback/it_1?kind=like', undefined, 400, 40001);
    await bad('POST', '/v1/feedback', { item_id: 'it_1', kind: 'not_interested' }, 400, 40001, {}); // service key, no reader
    const token = await t.token(reader);
    const res = await t.app.inject({ method: 'POST', url: '/v1/feedback', payload: { item_id: 'it_1', kind: 'not_interested' }, headers: { authorization: `Bearer ${token}`, 'x-freshet-reader': 'someone_else' } });
    expect([res.statusCode, res.json().code]).toEqual([403, 40301]);
    const anon = await t.app.inject({ method: 'POST', url: '/v1/engagements', payload: { item_id: 'it_1', kind: 'like' } });
    expect(anon.statusCode).toBe(401);
    expect(await feed('refresh', 100)).toHaveLength(22); // nothing was excluded (it_19 is deleted)
  });
  it('what a reader viewed lends its words to the recall: related items rank above popular ones', async () => {
    const kw = [
      item('kw_viewed', 30 * HOUR_MS, { author_id: 'author_kw', title: 'Quantum annealing hardware', popularity: 1 }),
      item('kw_related', 20 * HOUR_MS, { author_id: 'author_kw', title: 'Quantum error correction', popularity: 1 }),
    ];
    expect((await call('POST', '/v1/items', kw)).statusCode).toBe(200);
    expect((await feed('refresh', 3))[0]).not.toBe('kw_related'); // no signal yet: popularity leads
    const token = await t.token(reader);
    const res = await t.app.inject({ method: 'POST', url: '/v1/views', payload: { item_id: 'kw_viewed' }, headers: { authorization: `Bearer ${token}` } });
    expect(res.json().data.counted).toBe(true);
    const ids = await feed('refresh', 3);
    expect(ids[0]).toBe('kw_related');
    expect(ids).not.toContain('kw_viewed');
  });
});
