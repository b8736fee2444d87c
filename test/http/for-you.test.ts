/**
 * The for-you feed over HTTP (note 1), on both store pairs: PGlite + in-process stores (the
 * embedded default) and PostgreSQL + Redis. Calls go through `freshet-engine/client` (on `app.inject`); the
 * envelope itself is read raw once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { FreshetClient, ForYouPage } from '../../src/client/index.js';
import { HOUR_MS, DAY_MS, dayStamp } from '../../src/kernel/clock.js';
import { Keys, shardOf } from '../../src/kernel/redis/keys.js';
import { seenSettingsLayout } from '../../src/seen/wire.js';
import { TEST_REDIS_URL } from '../support/env.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';
import { failure } from '../support/client.js';

type Page = {
  code: number;
  msg: string;
  data: { items: { id: string; author_id: string; update_time: number }[]; has_more: boolean };
};

const setups = [
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const;

describe.each(setups)('for-you feed on $name', ({ hot, db }) => {
  let t: TestApp;
  /** The service key at the test's virtual time. */
  let svc: FreshetClient;
  let n = 0;
  /** A fresh reader per test, so tests share one app without sharing state. */
  let reader: string;

  beforeAll(async () => {
    t = await startTestApp({ hot, db, env: { FRESHET_FEED_CACHE_TTL_S: '1' } });
    svc = t.client({ now: () => t.clock.now() });
    // 45 items, one per hour, all within the recall horizon; two by the reader-author "author_x".
    const items = Array.from({ length: 45 }, (_, i) => item(`it_${i}`, i * HOUR_MS, { popularity: i % 7 }));
    items[3]!.author_id = 'author_x';
    items[4]!.author_id = 'author_x';
    await svc.items.publish(items);
  });
  afterAll(async () => t?.close());
  beforeEach(() => {
    reader = `r_${hot}_${++n}`;
    t.clock.set(T0);
  });

  /** One for-you page of `who` (default: this test's reader) at the virtual time. */
  function feed(action: 'refresh' | 'load_more', limit: number, who = reader): Promise<ForYouPage> {
    return action === 'refresh'
      ? svc.forYou.refresh({ limit, reader: who })
      : svc.forYou.loadMore({ limit, reader: who });
  }
  const ids = (p: ForYouPage) => p.items.map((i) => i.id);

  /**
   * Runs `fn` once the reader's cached page list has outlived its time to live (1 s here), without
   * waiting for it: on Redis the key's PTTL is checked and cut to 1 ms (then polled until the server
   * expired it); in process the wall clock the cache reads is moved on past the TTL while `fn` runs.
   */
  async function afterCacheTtl<R>(fn: () => Promise<R>): Promise<R> {
    if (hot === 'redis') {
      const redis = new Redis(TEST_REDIS_URL);
      try {
        const key = new Keys(t.config.keyPrefix).feedCache(reader);
        const ttl = await redis.pttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(1_000);
        await redis.pexpire(key, 1);
        await expect.poll(() => redis.exists(key), { interval: 2 }).toBe(0);
      } finally {
        redis.disconnect();
      }
      return fn();
    }
    t.clock.advance(1_000); // the in-process cache reads the injected clock
    return fn();
  }

  it('refresh returns note 1 envelope with `limit` hydrated items and has_more', async () => {
    // the envelope is the wire format the client unwraps: read it raw
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: { action: 'refresh', limit: 10 },
      headers: {
        authorization: `Bearer ${SERVICE_KEY}`,
        'x-freshet-reader': reader,
        'x-freshet-now': String(t.clock.now()),
      },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as Page;
    expect(body.code).toBe(0);
    expect(body.msg).toBe('success');
    expect(body.data.items).toHaveLength(10);
    expect(body.data.has_more).toBe(true);
    expect(body.data.items[0]).toMatchObject({
      id: expect.any(String),
      title: expect.any(String),
      update_time: expect.any(Number),
    });
  });

  it('scrolling to the end never repeats an item, ends with a short page and has_more false', async () => {
    const seen = new Set<string>();
    let page = await feed('refresh', 10);
    ids(page).forEach((id) => seen.add(id));
    const sizes = [page.items.length];
    while (page.has_more) {
      page = await feed('load_more', 10);
      expect(page.refreshed).toBe(false);
      for (const id of ids(page)) {
        expect(seen.has(id)).toBe(false);
        seen.add(id);
      }
      sizes.push(page.items.length);
    }
    expect(seen.size).toBe(45);
    expect(sizes).toEqual([10, 10, 10, 10, 5]);
    // The buffer is exhausted: the next load_more silently refreshes, and everything is seen.
    const after = await feed('load_more', 10);
    expect(after.refreshed).toBe(true);
    expect(after.items).toEqual([]);
    expect(after.has_more).toBe(false);
  });

  it('a new refresh never serves what an earlier page delivered', async () => {
    const first = ids(await feed('refresh', 20));
    t.clock.advance(HOUR_MS);
    const second = ids(await feed('refresh', 20));
    expect(second).toHaveLength(20);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
  });

  it('load_more with nothing cached silently refreshes', async () => {
    const r = await feed('load_more', 5);
    expect(r.refreshed).toBe(true);
    expect(r.items).toHaveLength(5);
    expect(r.has_more).toBe(true);
  });

  it('the cache expires after its TTL and load_more falls back to refresh without repeats', async () => {
    const first = ids(await feed('refresh', 5));
    const r = await afterCacheTtl(() => feed('load_more', 5));
    expect(r.refreshed).toBe(true);
    expect(ids(r).filter((id) => first.includes(id))).toEqual([]);
  });

  it('never serves the reader its own items', async () => {
    const page = await feed('refresh', 100, 'author_x');
    expect(page.items).toHaveLength(43);
    expect(page.items.some((i) => i.author_id === 'author_x')).toBe(false);
  });

  it('never serves items published after the request time', async () => {
    t.clock.set(T0 - 10 * HOUR_MS - 1);
    const page = await feed('refresh', 100);
    // items it_0..it_10 are published later than now
    expect(ids(page).some((id) => Number(id.slice(3)) <= 10)).toBe(false);
    expect(page.items.length).toBe(45 - 11);
  });

  it('deleted items leave the feed, including pages already cached, and pages stay full', async () => {
    await svc.items.publish([item('del_a', 2 * DAY_MS), item('del_b', 2 * DAY_MS + 1)]);
    const r = await feed('refresh', 2);
    const cachedIds = new Set(['del_a', 'del_b'].filter((id) => !ids(r).includes(id)));
    expect(await svc.items.delete('del_a')).toMatchObject({ id: 'del_a' });
    await svc.items.delete('del_b');
    expect(cachedIds.size).toBeGreaterThan(0);
    const got: string[] = [];
    let page = await feed('load_more', 10);
    expect(page.items).toHaveLength(10);
    got.push(...ids(page));
    while (page.has_more) {
      page = await feed('load_more', 10);
      got.push(...ids(page));
    }
    expect(got).not.toContain('del_a');
    expect(got).not.toContain('del_b');
    expect((await failure(svc.items.delete('del_a'))).status).toBe(404);
  });

  it('parallel load_mores of one reader never return the same item', async () => {
    await feed('refresh', 1);
    const pages = await Promise.all(Array.from({ length: 8 }, () => feed('load_more', 5)));
    const all = pages.flatMap(ids);
    expect(all.length).toBe(40);
    expect(new Set(all).size).toBe(all.length);
  });

  it('parallel load_mores on an empty cache (both fall back to refresh) never overlap', async () => {
    const pages = await Promise.all(Array.from({ length: 4 }, () => feed('load_more', 5)));
    const all = pages.flatMap(ids);
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
    expect(ids(a)).toHaveLength(5);
  });

  it('a reader with interests gets matching items first; the rest still fills the page', async () => {
    await svc.items.publish([
      item('rust_1', 30 * HOUR_MS, { title: 'Rust borrow checker explained' }),
      item('rust_2', 40 * HOUR_MS, { title: 'Why we moved to Rust' }),
    ]);
    expect((await svc.users.setInterests(reader, ['Rust', 'compilers'])).terms).toEqual(['rust', 'compilers']);
    const page = await feed('refresh', 20);
    expect(ids(page).slice(0, 2).sort()).toEqual(['rust_1', 'rust_2']);
    expect(page.items).toHaveLength(20);
  });
});

describe('impression write failures (PostgreSQL + Redis)', () => {
  it('are counted and logged, never surfaced: the page is still served', async () => {
    const t = await startTestApp({ hot: 'redis', db: 'postgres' });
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const rf = t.client({ reader: 'rf', now: T0 });
      await rf.items.publish(Array.from({ length: 10 }, (_, i) => item(`f_${i}`, i * HOUR_MS)));
      expect((await rf.forYou.refresh({ limit: 2 })).items).toHaveLength(2);
      // Today's filter becomes a LIST: every SETBIT on it now fails with WRONGTYPE (a real Redis error).
      const layout = seenSettingsLayout(t.config.seen); // the day's layout: the first process's settings
      const today = new Keys(t.config.keyPrefix)
        .seenDays(layout.shards, shardOf('rf', layout.shards))
        .day(dayStamp(T0));
      await redis.del(today);
      await redis.lpush(today, 'not-a-bitmap');
      expect((await rf.forYou.loadMore({ limit: 3 })).items).toHaveLength(3);
      const metrics = await rf.metrics();
      expect(metrics).toMatch(/freshet_impression_write_failures_total\{feed="for_you"\} 1\b/);
    } finally {
      redis.disconnect();
      await t.close();
    }
  });
});
