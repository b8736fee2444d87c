/**
 * The for-you feed over HTTP (note 1), on both store pairs: PGlite + in-process stores (the
 * embedded default) and PostgreSQL + Redis.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { HOUR_MS, DAY_MS, dayStamp } from '../../src/domain/clock.js';
import { Keys } from '../../src/adapters/redis/keys.js';
import { TEST_REDIS_URL } from '../support/env.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';

type Page = { code: number; msg: string; data: { items: { id: string; author_id: string; update_time: number }[]; has_more: boolean } };

const setups = [
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const;

describe.each(setups)('for-you feed on $name', ({ hot, db }) => {
  let t: TestApp;
  let n = 0;
  /** A fresh reader per test, so tests share one app without sharing state. */
  let reader: string;

  beforeAll(async () => {
    t = await startTestApp({ hot, db, env: { FRESHET_FEED_CACHE_TTL_S: '1' } });
    // 45 items, one per hour, all within the recall horizon; two by the reader-author "author_x".
    const items = Array.from({ length: 45 }, (_, i) => item(`it_${i}`, i * HOUR_MS, { popularity: i % 7 }));
    items[3]!.author_id = 'author_x';
    items[4]!.author_id = 'author_x';
    await post('/v1/items', items);
  });
  afterAll(async () => t?.close());
  beforeEach(() => {
    reader = `r_${hot}_${++n}`;
    t.clock.set(T0);
  });

  async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
    return t.app.inject({ method: 'POST', url, payload: body as object, headers: { authorization: `Bearer ${SERVICE_KEY}`, ...headers } });
  }
  async function feed(action: 'refresh' | 'load_more', limit: number, who = reader) {
    const res = await post('/v1/feeds/for-you', { action, limit }, { 'x-freshet-reader': who, 'x-freshet-now': String(t.clock.now()) });
    expect(res.statusCode).toBe(200);
    return { body: res.json() as Page, refreshed: res.headers['x-freshet-refreshed'] === '1' };
  }
  const ids = (p: Page) => p.data.items.map((i) => i.id);

  it('refresh returns note 1 envelope with `limit` hydrated items and has_more', async () => {
    const { body } = await feed('refresh', 10);
    expect(body.code).toBe(0);
    expect(body.msg).toBe('success');
    expect(body.data.items).toHaveLength(10);
    expect(body.data.has_more).toBe(true);
    expect(body.data.items[0]).toMatchObject({ id: expect.any(String), title: expect.any(String), update_time: expect.any(Number) });
  });

  it('scrolling to the end never repeats an item, ends with a short page and has_more false', async () => {
    const seen = new Set<string>();
    let page = (await feed('refresh', 10)).body;
    ids(page).forEach((id) => seen.add(id));
    const sizes = [page.data.items.length];
    while (page.data.has_more) {
      const r = await feed('load_more', 10);
      expect(r.refreshed).toBe(false);
      page = r.body;
      for (const id of ids(page)) {
        expect(seen.has(id)).toBe(false);
        seen.add(id);
      }
      sizes.push(page.data.items.length);
    }
    expect(seen.size).toBe(45);
    expect(sizes).toEqual([10, 10, 10, 10, 5]);
    // The buffer is exhausted: the next load_more silently refreshes, and everything is seen.
    const after = await feed('load_more', 10);
    expect(after.refreshed).toBe(true);
    expect(after.body.data.items).toEqual([]);
    expect(after.body.data.has_more).toBe(false);
  });

  it('a new refresh never serves what an earlier page delivered', async () => {
    const first = ids((await feed('refresh', 20)).body);
    t.clock.advance(HOUR_MS);
    const second = ids((await feed('refresh', 20)).body);
    expect(second).toHaveLength(20);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
  });

  it('load_more with nothing cached silently refreshes', async () => {
    const r = await feed('load_more', 5);
    expect(r.refreshed).toBe(true);
    expect(r.body.data.items).toHaveLength(5);
    expect(r.body.data.has_more).toBe(true);
  });

  it('the cache expires after its TTL and load_more falls back to refresh without repeats', async () => {
    const first = ids((await feed('refresh', 5)).body);
    await new Promise((r) => setTimeout(r, 1300));
    const r = await feed('load_more', 5);
    expect(r.refreshed).toBe(true);
    expect(ids(r.body).filter((id) => first.includes(id))).toEqual([]);
  });

  it('never serves the reader its own items', async () => {
    const { body } = await feed('refresh', 100, 'author_x');
    expect(body.data.items).toHaveLength(43);
    expect(body.data.items.some((i) => i.author_id === 'author_x')).toBe(false);
  });

  it('never serves items published after the request time', async () => {
    t.clock.set(T0 - 10 * HOUR_MS - 1);
    const { body } = await feed('refresh', 100);
    // items it_0..it_10 are published later than now
    expect(ids(body).some((id) => Number(id.slice(3)) <= 10)).toBe(false);
    expect(body.data.items.length).toBe(45 - 11);
  });

  it('deleted items leave the feed, including pages already cached, and pages stay full', async () => {
    await post('/v1/items', [item('del_a', 2 * DAY_MS), item('del_b', 2 * DAY_MS + 1)]);
    const r = await feed('refresh', 2);
    const cachedIds = new Set(['del_a', 'del_b'].filter((id) => !ids(r.body).includes(id)));
    const del = await t.app.inject({ method: 'DELETE', url: '/v1/items/del_a', headers: { authorization: `Bearer ${SERVICE_KEY}` } });
    expect(del.statusCode).toBe(200);
    await t.app.inject({ method: 'DELETE', url: '/v1/items/del_b', headers: { authorization: `Bearer ${SERVICE_KEY}` } });
    expect(cachedIds.size).toBeGreaterThan(0);
    const got: string[] = [];
    let page = (await feed('load_more', 10)).body;
    expect(page.data.items).toHaveLength(10);
    got.push(...ids(page));
    while (page.data.has_more) {
      page = (await feed('load_more', 10)).body;
      got.push(...ids(page));
    }
    expect(got).not.toContain('del_a');
    expect(got).not.toContain('del_b');
    const again = await t.app.inject({ method: 'DELETE', url: '/v1/items/del_a', headers: { authorization: `Bearer ${SERVICE_KEY}` } });
    expect(again.statusCode).toBe(404);
  });

  it('parallel load_mores of one reader never return the same item', async () => {
    await feed('refresh', 1);
    const pages = await Promise.all(Array.from({ length: 8 }, () => feed('load_more', 5)));
    const all = pages.flatMap((p) => ids(p.body));
    expect(all.length).toBe(40);
    expect(new Set(all).size).toBe(all.length);
  });

  it('parallel load_mores on an empty cache (both fall back to refresh) never overlap', async () => {
    const pages = await Promise.all(Array.from({ length: 4 }, () => feed('load_more', 5)));
    const all = pages.flatMap((p) => ids(p.body));
    expect(all.length).toBe(20);
    expect(new Set(all).size).toBe(20);
  });

  it("two readers never see each other's cache", async () => {
    const other = `${reader}_b`;
    await feed('refresh', 40);
    const b = await feed('load_more', 5, other);
    expect(b.refreshed).toBe(true);
    const a = await feed('load_more', 5);
    expect(a.refreshed).toBe(false);
    expect(ids(a.body)).toHaveLength(5);
  });

  it('a reader with interests gets matching items first; the rest still fills the page', async () => {
    await post('/v1/items', [item('rust_1', 30 * HOUR_MS, { title: 'Rust borrow checker explained' }), item('rust_2', 40 * HOUR_MS, { title: 'Why we moved to Rust' })]);
    const put = await t.app.inject({ method: 'PUT', url: `/v1/users/${reader}/interests`, payload: { terms: ['Rust', 'compilers'] }, headers: { authorization: `Bearer ${SERVICE_KEY}` } });
    expect(put.statusCode).toBe(200);
    expect(put.json().data.terms).toEqual(['rust', 'compilers']);
    const { body } = await feed('refresh', 20);
    expect(ids(body).slice(0, 2).sort()).toEqual(['rust_1', 'rust_2']);
    expect(body.data.items).toHaveLength(20);
  });
});

describe('impression write failures (PostgreSQL + Redis)', () => {
  it('are counted and logged, never surfaced: the page is still served', async () => {
    const t = await startTestApp({ hot: 'redis', db: 'postgres' });
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const items = Array.from({ length: 10 }, (_, i) => item(`f_${i}`, i * HOUR_MS));
      await t.app.inject({ method: 'POST', url: '/v1/items', payload: items, headers: { authorization: `Bearer ${SERVICE_KEY}` } });
      const headers = { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-reader': 'rf', 'x-freshet-now': String(T0) };
      const first = await t.app.inject({ method: 'POST', url: '/v1/feeds/for-you', payload: { action: 'refresh', limit: 2 }, headers });
      expect(first.statusCode).toBe(200);
      // Today's filter becomes a LIST: every SETBIT on it now fails with WRONGTYPE (a real Redis error).
      const today = new Keys(t.config.keyPrefix).seenDay('rf', dayStamp(T0));
      await redis.del(today);
      await redis.lpush(today, 'not-a-bitmap');
      const next = await t.app.inject({ method: 'POST', url: '/v1/feeds/for-you', payload: { action: 'load_more', limit: 3 }, headers });
      expect(next.statusCode).toBe(200);
      expect(next.json().data.items).toHaveLength(3);
      const metrics = (await t.app.inject({ url: '/metrics' })).body;
      expect(metrics).toMatch(/freshet_impression_write_failures_total\{feed="for_you"\} 1\b/);
    } finally {
      redis.disconnect();
      await t.close();
    }
  });
});
