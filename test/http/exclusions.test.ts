/**
 * Note 5's exclusions over HTTP, on both store pairs (PGlite + in-process, PostgreSQL + Redis): each
 * rule hides items from the for-you feed (refresh and load_more), "not interested" down-weights the
 * author and is undone by DELETE, a batch of engagements is written all or nothing, and bad input gets
 * its documented 4xx. Calls go through `freshet-engine/client` (on `app.inject`); bodies and queries the
 * client's types refuse, and a request with no token, are sent raw.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FreshetClient } from '../../src/client/index.js';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';
import { failure } from '../support/client.js';

const setups = [
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const;

describe.each(setups)('exclusions on $name', ({ hot, db }) => {
  let t: TestApp;
  /** The service key (no default reader: each call names it). */
  let svc: FreshetClient;
  let n = 0;
  let reader: string;
  /** The service key acting for this test's reader. */
  let rd: FreshetClient;

  beforeAll(async () => {
    t = await startTestApp({ hot, db });
    svc = t.client();
    // m0..m2: author_m, fresh and popular (ranked first for a reader without interests);
    // it_0..it_19: authors author_0..author_4, older and less popular; two by the reader-author "rd_own".
    const ms = [0, 1, 2].map((i) => item(`m${i}`, i * HOUR_MS, { author_id: 'author_m', popularity: 50 }));
    const rest = Array.from({ length: 20 }, (_, i) =>
      item(`it_${i}`, (3 + i) * HOUR_MS, { author_id: `author_${i % 5}`, popularity: 5 }),
    );
    rest[7]!.author_id = 'rd_own';
    rest[8]!.author_id = 'rd_own';
    expect(await svc.items.publish([...ms, ...rest])).toMatchObject({ inserted: 23 });
  });
  afterAll(async () => t?.close());
  beforeEach(() => {
    reader = `rd_${hot}_${++n}`;
    rd = svc.as(reader);
    t.clock.set(T0);
  });

  /** A raw request with the service key (bodies and queries the client's types refuse). */
  function call(
    method: 'POST' | 'PUT' | 'DELETE' | 'GET',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    return t.app.inject({
      method,
      url,
      ...(body === undefined ? {} : { payload: body as object }),
      headers: { authorization: `Bearer ${SERVICE_KEY}`, ...headers },
    });
  }
  /** The ids of one for-you page of `who` (default: this test's reader). */
  async function feed(action: 'refresh' | 'load_more', limit: number, who = reader): Promise<string[]> {
    const page =
      action === 'refresh'
        ? await svc.forYou.refresh({ limit, reader: who })
        : await svc.forYou.loadMore({ limit, reader: who });
    return page.items.map((i) => i.id);
  }
  /** Turns the author cap of the ranked feeds off for this test's reader (docs/preferences.md). */
  const noAuthorCap = () => svc.users.setPreferences(reader, { max_per_author: 0 });
  /** This test's reader with a reader token. */
  const withToken = async () => t.client({ token: await t.token(reader) });

  it('recently viewed: a counted view hides the item (reader token as the visitor)', async () => {
    expect((await (await withToken()).views.record({ item_id: 'it_3' })).counted).toBe(true);
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
    expect(await rd.engagements.record({ item_id: 'it_1', kind: 'reply' })).toEqual({
      reader_id: reader,
      item_id: 'it_1',
      kind: 'reply',
      created: true,
    });
    expect((await rd.engagements.record({ item_id: 'it_1', kind: 'reply' })).created).toBe(false);
    await rd.engagements.record({ item_id: 'it_2', kind: 'like' });
    await rd.engagements.record({ item_id: 'it_4', kind: 'share' });
    const ids = await feed('refresh', 100);
    for (const id of ['it_1', 'it_2', 'it_4']) expect(ids).not.toContain(id);
    expect(ids).toHaveLength(20);
  });

  it('not interested hides the item, down-weights its author, and DELETE undoes both', async () => {
    await noAuthorCap(); // the order below is by score alone: author_m holds the top three
    const data = await rd.feedback.record({ item_id: 'm0', kind: 'not_interested' });
    expect(data).toMatchObject({
      item_id: 'm0',
      created: true,
      author_id: 'author_m',
      author_penalty_until: Math.floor(T0 / 1000) + 30 * 86400,
    });
    const ids = await feed('refresh', 100);
    expect(ids).not.toContain('m0');
    expect(ids.slice(-2).sort()).toEqual(['m1', 'm2']); // first without the penalty, last with it
    expect(await rd.feedback.undo('m0')).toEqual({
      reader_id: reader,
      item_id: 'm0',
      kind: 'not_interested',
      removed: true,
    });
    expect((await rd.feedback.undo('m0')).removed).toBe(false);
    expect(await feed('refresh', 100)).toEqual(['m0']); // never delivered, so not seen: it comes back
  });

  it('blocked authors (either way) disappear, and come back on unblock', async () => {
    await svc.blocks.block(reader, 'author_1');
    await svc.blocks.block('author_2', reader);
    const ids = await feed('refresh', 5);
    const all = [...ids, ...(await feed('load_more', 100))];
    expect(all.some((id) => ['it_1', 'it_6', 'it_11', 'it_16', 'it_2', 'it_12', 'it_17'].includes(id))).toBe(false);
    await svc.blocks.unblock(reader, 'author_1');
    expect((await feed('refresh', 100)).sort()).toEqual(['it_1', 'it_11', 'it_16', 'it_6']);
  });

  it('deleted items disappear', async () => {
    const other = `${reader}_d`;
    expect(await svc.items.delete('it_19')).toEqual({ id: 'it_19', deleted: true });
    expect(await feed('refresh', 100, other)).not.toContain('it_19');
  });

  it('load_more drops cached items excluded after the refresh (view, engagement, feedback)', async () => {
    await noAuthorCap(); // the order below is by score alone: author_m holds the top three
    const first = await feed('refresh', 3);
    expect(first).toEqual(['m0', 'm1', 'm2']);
    await svc.views.record({ item_id: 'it_0', visitor_id: reader });
    await rd.engagements.record({ item_id: 'it_3', kind: 'like' });
    await rd.feedback.notInterested('it_5');
    const rest = await feed('load_more', 100);
    for (const id of ['it_0', 'it_3', 'it_5']) expect(rest).not.toContain(id);
    expect(rest.length).toBe(23 - 3 - 3 - 1); // − the first page − 3 excluded − it_19 (deleted above)
  });

  it('GET /v1/exclusions lists recent views, engaged, not interested and blocks; undoing empties it', async () => {
    const own = await withToken();
    await own.views.record({ item_id: 'it_4' });
    await rd.engagements.record({ item_id: 'it_5', kind: 'share' });
    await rd.feedback.notInterested('it_6');
    await svc.blocks.block(reader, 'author_2');
    expect(await own.exclusions.list()).toEqual({
      reader_id: reader,
      recently_viewed: ['it_4'],
      engaged: ['it_5'],
      not_interested: [{ item_id: 'it_6', author_id: 'author_1', at: Math.floor(T0 / 1000) }],
      blocked_authors: ['author_2'],
    });
    await rd.feedback.undo('it_6');
    await svc.blocks.unblock(reader, 'author_2');
    const after = await rd.exclusions.list();
    expect([after.not_interested, after.blocked_authors]).toEqual([[], []]);
    // a reader token reads only its own exclusions
    expect((await failure(own.exclusions.list({ reader: `${reader}_x` }))).status).toBe(403);
  });

  it('bad input gets 4xx and writes nothing', async () => {
    // bodies and queries the client's types refuse: sent raw
    const bad = async (method: 'POST' | 'DELETE', url: string, body: unknown, status: number, code: number) => {
      const res = await call(method, url, body, { 'x-freshet-reader': reader });
      expect([res.statusCode, res.json().code], res.body).toEqual([status, code]);
    };
    await bad('POST', '/v1/engagements', { item_id: 'it_1', kind: 'love' }, 400, 40001);
    await bad('POST', '/v1/engagements', { item_id: 'it_1' }, 400, 40001);
    await bad('POST', '/v1/engagements', { item_id: 'it_1', kind: 'like', reader_id: 'x' }, 400, 40001);
    await bad('POST', '/v1/feedback', { item_id: 'it_1', kind: 'hate' }, 400, 40001);
    await bad('DELETE', '/v1/feedback/it_1?kind=like', undefined, 400, 40001);
    // well-formed requests the server refuses: through the client
    const refused = async (call: Promise<unknown>, status: number, code: number) =>
      expect(await failure(call)).toMatchObject({ status, code });
    await refused(rd.engagements.record({ item_id: 'a:b', kind: 'like' }), 400, 40002);
    await refused(rd.engagements.record({ item_id: 'nope', kind: 'like' }), 404, 40401);
    await refused(rd.engagements.record({ item_id: 'it_19', kind: 'like' }), 404, 40401); // deleted above
    await refused(rd.feedback.notInterested('nope'), 404, 40401);
    await refused(rd.feedback.undo('x{y}'), 400, 40002);
    await refused(svc.feedback.notInterested('it_1'), 400, 40001); // service key, no reader
    await refused(
      t.client({ token: await t.token(reader), reader: 'someone_else' }).feedback.notInterested('it_1'),
      403,
      40301,
    );
    const anon = await t.app.inject({
      method: 'POST',
      url: '/v1/engagements',
      payload: { item_id: 'it_1', kind: 'like' },
    });
    expect(anon.statusCode).toBe(401);
    expect(await feed('refresh', 100)).toHaveLength(22); // nothing was excluded (it_19 is deleted)
  });
  it('a batch of engagements is checked whole and written all or nothing, one result per element', async () => {
    const raw = async (body: unknown, status: number, code: number, field?: string) => {
      const res = await call('POST', '/v1/engagements', body, { 'x-freshet-reader': reader });
      expect([res.statusCode, res.json().code], res.body).toEqual([status, code]);
      if (field) expect(res.json().msg).toContain(field);
    };
    const like = (item_id: string) => ({ item_id, kind: 'like' as const });
    await raw([like('it_1'), { item_id: 'it_2', kind: 'love' }], 400, 40001, 'body/1/kind');
    await raw([like('it_1'), { ...like('it_2'), reader_id: 'x' }], 400, 40001, 'body/1');
    await raw([], 400, 40001);
    await raw(
      Array.from({ length: 1001 }, () => like('it_1')),
      400,
      40001,
    );
    expect(await failure(rd.engagements.recordBatch([like('it_1'), like('nope')]))).toMatchObject({
      status: 404,
      code: 40401,
      msg: expect.stringContaining('engagements[1]'),
    });
    expect(await failure(rd.engagements.recordBatch([like('it_2'), like('it_19')]))).toMatchObject({ code: 40401 }); // deleted
    expect((await rd.exclusions.list()).engaged).toEqual([]); // nothing of the refused batches was written

    const batch = [
      like('it_1'),
      { item_id: 'it_2', kind: 'share' as const },
      like('it_1'),
      { ...like('it_1'), kind: 'reply' as const },
    ];
    const out = (created: boolean[]) => ({
      results: batch.map((e, i) => ({ reader_id: reader, ...e, created: created[i] })),
      summary: { created: created.filter(Boolean).length, existing: created.filter((c) => !c).length },
    });
    expect(await rd.engagements.recordBatch(batch)).toEqual(out([true, true, false, true])); // a repeat is not new
    expect(await rd.engagements.recordBatch(batch)).toEqual(out([false, false, false, false])); // idempotent
    expect((await rd.exclusions.list()).engaged.sort()).toEqual(['it_1', 'it_2']);
    const ids = await feed('refresh', 100);
    expect(ids).not.toContain('it_1');
    expect(ids).not.toContain('it_2');
    // the largest batch; a reader token sends one as its own reader
    const big = await (await withToken()).engagements.recordBatch(Array.from({ length: 1000 }, () => like('it_3')));
    expect([big.results.length, big.summary]).toEqual([1000, { created: 1, existing: 999 }]);
  });

  it('what a reader viewed lends its words to the recall: related items rank above popular ones', async () => {
    const kw = [
      item('kw_viewed', 30 * HOUR_MS, { author_id: 'author_kw', title: 'Quantum annealing hardware', popularity: 1 }),
      item('kw_related', 20 * HOUR_MS, { author_id: 'author_kw', title: 'Quantum error correction', popularity: 1 }),
    ];
    expect(await svc.items.publish(kw)).toMatchObject({ inserted: 2 });
    expect((await feed('refresh', 3))[0]).not.toBe('kw_related'); // no signal yet: popularity leads
    expect((await (await withToken()).views.record({ item_id: 'kw_viewed' })).counted).toBe(true);
    const ids = await feed('refresh', 3);
    expect(ids[0]).toBe('kw_related');
    expect(ids).not.toContain('kw_viewed');
  });
});
