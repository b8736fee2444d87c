/**
 * The for-you recall never runs dry (issue 11), over HTTP on both store pairs — each in one interest mode
 * (`FRESHET_FOR_YOU_INTERESTS`: PGlite with `pool`, the default; PostgreSQL + Redis with `index`), so every
 * test here runs in both modes: real HN posts (2015–2016) read at wall time with a reader token (with and
 * without interests), a deep scroll past the shared fill pool into the keyset walk, a catalog whose newest
 * item is 30 days old, the shared pool patched on publish and delete without a rebuild, `GET
 * /v1/feeds/for-you/peek` counting without writing, a refresh page topped up when an item was deleted by
 * another process, and a niche interest beyond the pool's entries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHn } from '../../src/cli/import-hn.js';
import type { ItemInput } from '../../src/kernel/items/content-store.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/kernel/clock.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';
import { dataFile } from '../support/env.js';

const HN = dataFile('hn/hn_posts_2015-09_to_2016-09_sample.csv.gz');
/** HN posts loaded: enough for a 2,000-item scroll past a 500-entry pool. */
const HN_ITEMS = 3_000;

type Item = { id: string; title: string; published_at: number };
type Page = { code: number; data: { items: Item[]; has_more: boolean } };

/** Titles that hold one of the interest words of the HN test (`hn`, `google`; "Google's" stems too). */
const HN_INTEREST = /\bhn\b|\bgoogle/i;

describe.each([
  { name: 'PGlite + in-process, interests from the pool', hot: 'memory', db: 'pglite', interests: 'pool' },
  { name: 'PostgreSQL + Redis, interests from the index', hot: 'redis', db: 'postgres', interests: 'index' },
] as const)('for-you recall on $name', ({ hot, db, interests }) => {
  let t: TestApp;
  let hn: ItemInput[] = [];
  let n = 0;
  const fresh = () => `rr_${hot}_${++n}`;

  beforeAll(async () => {
    // a small pool, so a 2,000-item scroll walks the pool and then the keyset walk over older items
    t = await startTestApp({
      hot,
      db,
      // the recall's order is the point; the author cap (docs/preferences.md) is tested on its own
      env: { FRESHET_FOR_YOU_POOL_SIZE: '500', FRESHET_FOR_YOU_INTERESTS: interests, FRESHET_MAX_PER_AUTHOR: '0' },
    });
    for await (const batch of parseHn(HN, { batchSize: 1000 })) {
      const items = batch.items.slice(0, HN_ITEMS - hn.length);
      // straight into the content store: the feed reads only items (publishItems' hot counters, embeddings
      // and fan-out jobs would triple the load time); the invalidation test publishes over HTTP
      await t.f.content.upsertItems(items, t.clock.now());
      hn = hn.concat(items);
      if (hn.length >= HN_ITEMS) break;
    }
  }, 120_000);
  afterAll(async () => t?.close());

  /** One feed request with a reader token, at the app clock's time (no virtual-time header). */
  async function feed(
    reader: string,
    action: 'refresh' | 'load_more',
    limit: number,
  ): Promise<Page & { refreshed: boolean }> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: { action, limit },
      headers: { authorization: `Bearer ${await t.token(reader)}` },
    });
    expect(res.statusCode).toBe(200);
    return { ...(res.json() as Page), refreshed: res.headers['x-freshet-refreshed'] === '1' };
  }
  async function peek(reader: string): Promise<{ count: number; capped: boolean }> {
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/feeds/for-you/peek',
      headers: { authorization: `Bearer ${await t.token(reader)}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ code: 0, msg: 'success' });
    return res.json().data;
  }
  const ids = (p: Page) => p.data.items.map((i) => i.id);
  const remove = (id: string) =>
    t.app.inject({ method: 'DELETE', url: `/v1/items/${id}`, headers: { authorization: `Bearer ${SERVICE_KEY}` } });
  async function setInterests(reader: string, terms: string[]): Promise<void> {
    const res = await t.app.inject({
      method: 'PUT',
      url: `/v1/users/${reader}/interests`,
      payload: { terms },
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
    });
    expect(res.statusCode).toBe(200);
  }
  const publish = (items: object[]) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/items',
      payload: items,
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
    });

  it('a reader with a token at wall time gets full pages of HN posts ten years old', async () => {
    t.clock.set(Date.now());
    const reader = fresh();
    const first = await feed(reader, 'refresh', 20);
    expect(first.data.items).toHaveLength(20);
    expect(first.data.has_more).toBe(true);
    const next = await feed(reader, 'load_more', 20);
    expect(next.data.items).toHaveLength(20);
    expect(ids(next).filter((id) => ids(first).includes(id))).toEqual([]);
  });

  it('a reader with interests at wall time gets the HN posts matching them first', async () => {
    t.clock.set(Date.now());
    const reader = fresh();
    await setInterests(reader, ['HN', 'Google']);
    const page = await feed(reader, 'refresh', 20);
    expect(page.data.items).toHaveLength(20);
    for (const it of page.data.items) expect(it.title).toMatch(HN_INTEREST);
    // without interests the newest come first, matching or not
    const plain = await feed(fresh(), 'refresh', 20);
    expect(plain.data.items.filter((it) => !HN_INTEREST.test(it.title)).length).toBeGreaterThan(0);
  });

  it('scrolls 2,000 distinct items without an empty page or a repeat, and nothing returns 8 days later', async () => {
    t.clock.set(Date.now());
    const reader = fresh();
    const served = new Set<string>();
    let page = await feed(reader, 'refresh', 100);
    for (let i = 0; served.size < 2_000; i++) {
      expect(i).toBeLessThan(60); // bounded: a stuck walk fails instead of spinning
      expect(page.data.items.length).toBeGreaterThan(0);
      for (const id of ids(page)) {
        expect(served.has(id)).toBe(false);
        served.add(id);
      }
      page = await feed(reader, 'load_more', 100);
    }
    // the rolling filters forget after 7 days; the per-reader filter still knows these items
    t.clock.advance(8 * DAY_MS);
    const later = await feed(reader, 'refresh', 100);
    expect(later.data.items).toHaveLength(100);
    expect(ids(later).filter((id) => served.has(id))).toEqual([]);
  });

  it('a catalog whose newest item is 30 days old gives a full page, newest first', async () => {
    const newest = hn.map((i) => i.publishedAt).sort((a, b) => b - a);
    t.clock.set(newest[0]! + 30 * DAY_MS);
    const page = await feed(fresh(), 'refresh', 20);
    expect(page.data.items).toHaveLength(20);
    // published_at is in seconds on the wire
    for (const it of page.data.items) expect(it.published_at * 1000).toBeGreaterThanOrEqual(newest[19]!);
  });

  it('the shared pool is invalidated on publish and delete', async () => {
    t.clock.set(T0);
    const items = Array.from({ length: 30 }, (_, i) =>
      item(`pool_${i}`, i * HOUR_MS, { author_id: 'pool_author', popularity: 10 }),
    );
    expect((await publish(items)).statusCode).toBe(200);
    const before = ids(await feed(fresh(), 'refresh', 100));
    expect(before).toContain('pool_0');
    // deleted: gone at once, from every page
    expect(
      (
        await t.app.inject({
          method: 'DELETE',
          url: '/v1/items/pool_0',
          headers: { authorization: `Bearer ${SERVICE_KEY}` },
        })
      ).statusCode,
    ).toBe(200);
    const reader = fresh();
    const after = [...ids(await feed(reader, 'refresh', 100)), ...ids(await feed(reader, 'load_more', 100))];
    expect(after).toHaveLength(200);
    expect(after).not.toContain('pool_0');
    // published: a very popular new item is in the next refresh (this process inserts it into the pool,
    // without a rebuild: the clock has not moved)
    const builds = t.f.forYouPool.builds;
    expect((await publish([item('pool_new', 0, { author_id: 'pool_author', popularity: 1e6 })])).statusCode).toBe(200);
    expect(ids(await feed(fresh(), 'refresh', 5))[0]).toBe('pool_new');
    expect(t.f.forYouPool.builds).toBe(builds);
    // another process learns of it by the interval: a pool older than the interval is rebuilt
    await t.f.content.upsertItems(
      [
        {
          id: 'pool_other',
          authorId: 'pool_author',
          title: 'elsewhere',
          text: '',
          url: null,
          tags: [],
          publishedAt: T0,
          popularity: 1e7,
        },
      ],
      T0,
    );
    expect(ids(await feed(fresh(), 'refresh', 5))[0]).toBe('pool_new'); // not told: the pool is kept
    t.clock.advance(t.config.forYou.pool.intervalMs);
    await feed(fresh(), 'refresh', 5); // serves the old pool and starts a rebuild in the background
    await t.f.forYouPool.settled();
    expect(ids(await feed(fresh(), 'refresh', 5))[0]).toBe('pool_other');
  });

  it('peek counts fresh unseen candidates and writes nothing', async () => {
    t.clock.set(T0 + HOUR_MS);
    const reader = fresh();
    const a = await peek(reader);
    // 29 live pool items + pool_new + pool_other, all inside the decay window; the HN posts are not fresh
    expect(a).toEqual({ count: 31, capped: false });
    expect(await peek(reader)).toEqual(a); // no impression written
    const r = await feed(reader, 'load_more', 5); // nothing was cached by peek: a silent refresh
    expect(r.refreshed).toBe(true);
    expect(r.data.items).toHaveLength(5);
    expect(await peek(reader)).toEqual({ count: 26, capped: false });
  });

  it('publishes and deletes inside the interval patch the pool: no rebuild, each new item first at once, a deleted one never', async () => {
    t.clock.set(T0 + 2 * HOUR_MS);
    await feed(fresh(), 'refresh', 5); // a pool for this time
    const builds = t.f.forYouPool.builds;
    const gone: string[] = [];
    for (let k = 0; k < 8; k++) {
      t.clock.advance(2_000); // 16 s in all, inside the 30 s interval
      const id = `burst_${k}`;
      expect(
        (await publish([item(id, -(t.clock.now() - T0), { author_id: 'burst_author', popularity: 1e8 + k })]))
          .statusCode,
      ).toBe(200);
      if (k > 0) {
        expect((await remove(`burst_${k - 1}`)).statusCode).toBe(200);
        gone.push(`burst_${k - 1}`);
      }
      const page = ids(await feed(fresh(), 'refresh', 20));
      expect(page[0]).toBe(id);
      expect(page.filter((p) => gone.includes(p))).toEqual([]);
    }
    expect(t.f.forYouPool.builds).toBe(builds);
  });

  it('a refresh page that lost an item deleted by another process is topped up from the cache', async () => {
    const first = ids(await feed(fresh(), 'refresh', 5));
    // deleted straight in the content store, as another process does: this process's pool still holds it
    expect(await t.f.content.deleteItem(first[0]!, t.clock.now())).toBe(true);
    const page = await feed(fresh(), 'refresh', 5);
    expect(ids(page)).toHaveLength(5);
    expect(ids(page)).not.toContain(first[0]);
    expect(ids(page).slice(0, 4)).toEqual(first.slice(1));
    expect(page.data.has_more).toBe(true);
  });

  it(`a niche interest beyond the pool's entries: ${interests === 'index' ? 'the index finds it at once' : 'it comes first in the round below the pool'}`, async () => {
    const now = T0 + DAY_MS;
    t.clock.set(now);
    // the window holds more than the pool (500): 600 popular items and one niche item, the least popular
    const crowd = Array.from({ length: 600 }, (_, i) => ({
      id: `crowd_${i}`,
      authorId: 'crowd_author',
      title: 'crowd item',
      text: '',
      url: null,
      tags: [],
      publishedAt: now - i * MINUTE_MS,
      popularity: 100,
    }));
    const niche = {
      id: 'niche_1',
      authorId: 'niche_author',
      title: 'Zanzibar travel notes',
      text: '',
      url: null,
      tags: [],
      publishedAt: now - 3 * HOUR_MS,
      popularity: 0,
    };
    await t.f.content.upsertItems([...crowd, niche], now);
    const reader = fresh();
    await setInterests(reader, ['zanzibar']);
    const served: string[] = [];
    let page = await feed(reader, 'refresh', 20);
    for (let i = 0; !served.includes('niche_1'); i++) {
      expect(i).toBeLessThan(30);
      served.push(...ids(page));
      page = await feed(reader, 'load_more', 20);
    }
    // `index` matches the whole window; `pool` matches the pool's 500 entries, and the keyset round below
    // them puts the reader's matches first
    expect(served.indexOf('niche_1')).toBe(interests === 'index' ? 0 : 500);
  });
});
