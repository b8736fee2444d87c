/**
 * A reader's embedding given by the application (`PUT /v1/users/:id/embedding`, docs/discover.md): the
 * similar phase searches with it instead of the mean of the reader's signals; a bad vector is refused
 * and writes nothing; only the service key may give one; it is exported, removed by DELETE and erased
 * with the reader. On both store pairs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE_MS } from '../../src/kernel/clock.js';
import { SERVICE_KEY, startTestApp, T0, type TestApp } from '../support/app.js';
import { until } from '../support/faults.js';

const DIM = 8;
const axis = (i: number) => Array.from({ length: DIM }, (_, k) => (k === i ? 1 : 0));
const svc = { authorization: `Bearer ${SERVICE_KEY}` };

describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const)('reader embeddings on $name', ({ hot, db }) => {
  let t: TestApp;
  const put = (reader: string, payload: unknown, headers: Record<string, string> = svc) =>
    t.app.inject({ method: 'PUT', url: `/v1/users/${reader}/embedding`, payload: payload as object, headers });
  const firstIds = async (reader: string) => {
    const page = await t.f.discover.feed.page(reader, 3, undefined, t.clock.now());
    return page.items.map((i) => i.id);
  };

  beforeAll(async () => {
    t = await startTestApp({ hot, db, env: { FRESHET_EMBEDDING_DIM: String(DIM) } });
    const items = Array.from({ length: 8 }, (_, k) => ({
      id: `ax${k}`,
      author_id: `au${k}`,
      title: `Axis ${k}`,
      published_at: Math.floor((T0 - (k + 1) * MINUTE_MS) / 1000),
      embedding: axis(k),
    }));
    expect((await t.app.inject({ method: 'POST', url: '/v1/items', payload: items, headers: svc })).statusCode).toBe(
      200,
    );
    await until(async () => t.f.discover.vectors.isReady(), 60_000);
    // the reader's own signals point along axis 0
    await t.f.useCases.recordViews([{ itemId: 'ax0', visitorId: 'rd', nowMs: T0 }]);
  });
  afterAll(() => t?.close());

  it('the similar phase searches with the given embedding, and with the signals again once it is removed', async () => {
    expect((await firstIds('rd'))[0]).not.toBe('ax5');
    const res = await put('rd', { embedding: axis(5).map((x) => x * 3) });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ reader_id: 'rd', dim: DIM });
    t.clock.advance(MINUTE_MS); // a new session
    expect((await firstIds('rd'))[0]).toBe('ax5');
    const del = await t.app.inject({ method: 'DELETE', url: '/v1/users/rd/embedding', headers: svc });
    expect(del.json().data).toEqual({ reader_id: 'rd', removed: true });
    t.clock.advance(MINUTE_MS);
    expect((await firstIds('rd'))[0]).not.toBe('ax5');
  });

  it('a bad vector is 400 / 40001 and writes nothing; a reader token is 403', async () => {
    for (const embedding of [[1, 2], axis(0).map(() => 0), [1e308, 1e308, 0, 0, 0, 0, 0, 0]]) {
      const res = await put('bad', { embedding });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe(40001);
    }
    expect((await put('bad', { vector: axis(1) })).statusCode).toBe(400);
    expect(await t.f.discover.embeddings.readerEmbedding('bad')).toBeNull();
    const token = await t.token('bad');
    expect((await put('bad', { embedding: axis(1) }, { authorization: `Bearer ${token}` })).statusCode).toBe(403);
  });

  it('is exported (unit length) and erased with the reader', async () => {
    await put('gone', { embedding: axis(2).map((x) => x * 5) });
    const exp = await t.app.inject({ method: 'GET', url: '/v1/users/gone/export', headers: svc });
    expect(exp.statusCode).toBe(200);
    expect(exp.json().data.embedding).toEqual(axis(2));
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/users/gone', headers: svc })).statusCode).toBe(200);
    expect(await t.f.discover.embeddings.readerEmbedding('gone')).toBeNull();
  });
});
