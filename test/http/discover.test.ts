/**
 * The discover feed over HTTP (note 3) on both store pairs: phase order and transitions within one
 * request, a trending item in every 5th slot of a phase-1 page, no repeats across pages and sessions,
 * the last page's null cursor, cursor tampering / foreign / stale cursors (each message naming the
 * parameter and what to send), bad input, phase 2 in the exact nearest-neighbour order (checked
 * against an exact cosine scan), and phase 2 deferred while the vector index starts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS, ManualClock } from '../../src/kernel/clock.js';
import { SERVICE_KEY, T0, startTestApp, type TestApp } from '../support/app.js';
import { cosine, normalize, quantize } from '../../src/discover/embedding.js';
import { loadConfig } from '../../src/compose/config.js';
import { openFreshet } from '../../src/compose/open.js';
import { buildApp } from '../../src/server/app.js';
import { migrate } from '../../src/compose/migrations.js';
import { openPostgres } from '../../src/kernel/sql/sql.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../support/env.js';
import { until } from '../support/faults.js';

/** Waits until the vector index warmed at open answers (phase 2 is deferred before). */
const indexReady = (t: TestApp) => until(async () => t.f.discover.vectors.isReady(), 60_000);

const svc = { authorization: `Bearer ${SERVICE_KEY}` };
const DIM = 8;
const axis = (i: number, w = 1) => Array.from({ length: DIM }, (_, k) => (k === i ? w : 0));
const it_ = (id: string, author: string, ageMin: number, embedding: number[]) => ({
  id,
  author_id: author,
  title: `Item ${id}`,
  published_at: Math.floor((T0 - ageMin * MINUTE_MS) / 1000),
  embedding,
});

/** 12 followed items, 3 similar, 4 unrelated (phase 3), 3 trending, 1 the reader viewed, 1 the reader wrote. */
function corpus() {
  const items = [];
  for (let i = 0; i < 12; i++) items.push(it_(`f${i}`, i % 2 ? 'fa' : 'fb', 10 + i, axis(2)));
  for (let i = 0; i < 3; i++) items.push(it_(`d${i}`, 'other', 30 + i, [1, 0.5 * i, 0, 0, 0, 0, 0, 0]));
  for (let i = 0; i < 4; i++) items.push(it_(`n${i}`, 'other', 40 + i, axis(1)));
  for (let i = 0; i < 3; i++) items.push(it_(`t${i}`, 'star', 50 + i, axis(3)));
  items.push(it_('seen0', 'other', 60, axis(0)), it_('mine', 'rd', 5, axis(0)));
  return items;
}

describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const)('discover feed over HTTP on $name', ({ hot, db }) => {
  let t: TestApp;
  const get = (query: string, headers: Record<string, string> = { ...svc, 'x-freshet-reader': 'rd' }) =>
    t.app.inject({
      method: 'GET',
      url: `/v1/feeds/discover${query}`,
      headers: { ...headers, 'x-freshet-now': String(t.clock.now()) },
    });

  beforeAll(async () => {
    t = await startTestApp({
      hot,
      db,
      // the phases' order is the point here; the author cap (docs/preferences.md) is tested on its own
      env: { FRESHET_EMBEDDING_DIM: String(DIM), FRESHET_DISCOVER_CURSOR_TTL_S: '3600', FRESHET_MAX_PER_AUTHOR: '0' },
    });
    for (const u of ['rd', 'fa', 'fb', 'other', 'star', 'rz'])
      expect((await t.app.inject({ method: 'PUT', url: `/v1/users/${u}`, headers: svc })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: '/v1/items', payload: corpus(), headers: svc })).statusCode).toBe(
      200,
    );
    for (const a of ['fa', 'fb'])
      expect((await t.app.inject({ method: 'PUT', url: `/v1/users/rd/following/${a}`, headers: svc })).statusCode).toBe(
        200,
      );
    // trending: t0 > t1 > t2 by visitors; the reader's own view of seen0 gives it an embedding along axis 0
    const views = [];
    for (const [id, n] of [
      ['t0', 6],
      ['t1', 4],
      ['t2', 2],
    ] as const)
      for (let v = 0; v < n; v++) views.push({ item_id: id, visitor_id: `v${v}`, at: T0 - HOUR_MS });
    views.push({ item_id: 'seen0', visitor_id: 'rd', at: T0 - HOUR_MS });
    expect((await t.app.inject({ method: 'POST', url: '/v1/views', payload: views, headers: svc })).statusCode).toBe(
      200,
    );
    await indexReady(t);
  });
  afterAll(async () => t?.close());

  it('walks followed (+ trending every 5th slot) → discovery → newest, never repeating, and says when it is done', async () => {
    const served: string[] = [];
    const sources: string[] = [];
    let cursor: string | null = null;
    const pages: { ids: string[]; src: string[] }[] = [];
    do {
      const res = await get(`?limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data as {
        items: { id: string }[];
        sources: string[];
        next_cursor: string | null;
        restarted: boolean;
      };
      expect(data.restarted).toBe(false);
      pages.push({ ids: data.items.map((i) => i.id), src: data.sources });
      served.push(...data.items.map((i) => i.id));
      sources.push(...data.sources);
      if (data.next_cursor !== null) expect(data.items).toHaveLength(10); // never short while a phase has items
      cursor = data.next_cursor;
    } while (cursor !== null && pages.length < 10);
    expect(cursor).toBeNull();
    expect(new Set(served).size).toBe(served.length);
    // page 1: followed newest first with trending in slots 5 and 10 (hot order t0, t1)
    expect(pages[0]!.src).toEqual([
      'followed',
      'followed',
      'followed',
      'followed',
      'trending',
      'followed',
      'followed',
      'followed',
      'followed',
      'trending',
    ]);
    expect(pages[0]!.ids).toEqual(['f0', 'f1', 'f2', 'f3', 't0', 'f4', 'f5', 'f6', 'f7', 't1']);
    // page 2: the last followed items and t2 in slot 5, then phase 2 continues in the same request
    expect(pages[1]!.ids.slice(0, 5)).toEqual(['f8', 'f9', 'f10', 'f11', 't2']);
    expect(pages[1]!.src.slice(5)).toEqual(['discovery', 'discovery', 'discovery', 'newest', 'newest']);
    expect(pages[1]!.ids.slice(5, 8)).toEqual(['d0', 'd1', 'd2']); // cosine to axis 0: 1 > 0.89 > 0.71
    // phases never go back
    const rank = { followed: 1, trending: 1, discovery: 2, newest: 3 } as Record<string, number>;
    for (let i = 1; i < sources.length; i++) expect(rank[sources[i]!]!).toBeGreaterThanOrEqual(rank[sources[i - 1]!]!);
    // every eligible item once; the reader's own item and its recently viewed item never
    expect(new Set(served)).toEqual(
      new Set(
        corpus()
          .map((i) => i.id)
          .filter((id) => id !== 'mine' && id !== 'seen0'),
      ),
    );
  });

  it('a new session serves nothing already served (seen filter); the empty page is the last', async () => {
    const res = await get('?limit=20');
    expect(res.json().data).toMatchObject({ items: [], next_cursor: null });
  });

  it('skips phase 2 for a reader with no signals; phase 3 excludes followed creators', async () => {
    const ids: string[] = [];
    const src: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`?limit=7${cursor ? `&cursor=${cursor}` : ''}`, { ...svc, 'x-freshet-reader': 'rz' });
      const data = res.json().data;
      ids.push(...data.items.map((i: { id: string }) => i.id));
      src.push(...data.sources);
      cursor = data.next_cursor;
    } while (cursor);
    expect(new Set(src)).toEqual(new Set(['newest']));
    expect(ids).toContain('f0'); // rz follows nobody: followed creators of rd are ordinary authors here
    expect(ids).toHaveLength(corpus().length);
  });

  it('a reader who follows nobody gets the trending items on its first page: no trending slot holds them back', async () => {
    expect((await t.app.inject({ method: 'PUT', url: '/v1/users/ry', headers: svc })).statusCode).toBe(200);
    const res = await get('?limit=25', { ...svc, 'x-freshet-reader': 'ry' });
    const ids = res.json().data.items.map((i: { id: string }) => i.id);
    // phase 1 has no followed item to put the 5 trending slots between: the trending items are served
    // in their place among the newest (they were held for the slots and left out of the page)
    expect(ids).toEqual(expect.arrayContaining(['t0', 't1', 't2']));
    expect(ids).toHaveLength(corpus().length);
  });

  it('rejects forged, edited and foreign cursors with 40005; a stale cursor starts afresh', async () => {
    t.clock.advance(DAY_MS); // new items may be served again? no: nothing new — but the session is new
    await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      payload: [it_('late0', 'fa', -1 * 24 * 60 + 1, axis(2)), it_('late1', 'fa', -1 * 24 * 60 + 2, axis(2))],
      headers: svc,
    });
    const first = (await get('?limit=1')).json().data;
    expect(first.items.map((i: { id: string }) => i.id)).toEqual(['late0']);
    const c: string = first.next_cursor;
    const [v, body, mac] = c.split('.');
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    // every message names the parameter, what is wrong and what to send instead
    const what = ': send the next_cursor of the previous page of this reader, or none to start over';
    const altered = `query parameter cursor was not issued to this reader, or was altered (its signature does not match)${what}`;
    const cases: [string, string][] = [
      [`${v}.${flip(body!)}.${mac}`, altered],
      [`${v}.${body}.${flip(mac!)}`, altered],
      [`d9.${body}.${mac}`, `query parameter cursor is of another version ("d9"; this server issues d1)${what}`],
      ['abc', `query parameter cursor is not a discover cursor (d1.<body>.<signature>)${what}`],
      [`${c}.x`, `query parameter cursor is not a discover cursor (d1.<body>.<signature>)${what}`],
    ];
    for (const [bad, msg] of cases) {
      const res = await get(`?cursor=${bad}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json(), bad).toEqual({ code: 40005, msg, data: null });
    }
    // another reader's cursor: the same answer as an altered one (the reader is in the signature only)
    const foreign = await get(`?cursor=${c}`, { ...svc, 'x-freshet-reader': 'rz' });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toEqual({ code: 40005, msg: altered, data: null });
    // the genuine cursor still works; a stale one (older than the TTL) restarts
    expect((await get(`?limit=1&cursor=${c}`)).json().data.items.map((i: { id: string }) => i.id)).toEqual(['late1']);
    t.clock.advance(2 * HOUR_MS);
    const stale = (await get(`?limit=5&cursor=${c}`)).json().data;
    expect(stale.restarted).toBe(true);
    expect(stale.items).toEqual([]);
  });

  it('bad input: limit, unknown parameters, cursor characters, reader rules (40001, 40301, 40101)', async () => {
    for (const q of [
      '?limit=0',
      '?limit=101',
      '?limit=abc',
      '?limit=-1',
      '?foo=1',
      '?cursor=%25%25',
      `?cursor=${'a'.repeat(2000)}`,
    ]) {
      const res = await get(q);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().code, q).toBe(40001);
    }
    const token = await t.token('rd');
    const other = await t.app.inject({
      method: 'GET',
      url: '/v1/feeds/discover',
      headers: { authorization: `Bearer ${token}`, 'x-freshet-reader': 'rz' },
    });
    expect(other.json().code).toBe(40301);
    expect((await t.app.inject({ method: 'GET', url: '/v1/feeds/discover' })).json().code).toBe(40101);
    const noReader = await t.app.inject({ method: 'GET', url: '/v1/feeds/discover', headers: svc });
    expect(noReader.json().code).toBe(40001);
    const own = await t.app.inject({
      method: 'GET',
      url: '/v1/feeds/discover?limit=3',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(own.statusCode).toBe(200);
  });

  it('items: a client embedding of the wrong length is 40001 and writes nothing', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      payload: [it_('ok1', 'other', 1, axis(0)), { ...it_('bad1', 'other', 1, axis(0)), embedding: [1, 2] }],
      headers: svc,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(40001);
    expect((await t.app.inject({ method: 'GET', url: '/v1/items/ok1', headers: svc })).statusCode).toBe(404);
  });
});

/**
 * Phase 2 over HTTP against an exact scan: 400 items with random 16-dim client embeddings, a reader
 * who viewed one of them and follows nobody. Every discovery item served, page after page (the pool
 * is 10, so it grows by resumed searches; the in-process index has an exact-scan limit of 100, so it
 * serves from its HNSW graph once built), must be the next unseen item by exact cosine to the reader's
 * embedding, and every item with a positive cosine must be served once.
 */
describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const)('discover phase 2 over HTTP is the exact nearest-neighbour order on $name', ({ hot, db }) => {
  const D = 16;
  let t: TestApp;
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  const embeddings = new Map<string, number[]>();
  for (let i = 0; i < 400; i++) embeddings.set(`v${i}`, Array.from({ length: D }, rand));

  beforeAll(async () => {
    t = await startTestApp({
      hot,
      db,
      env: {
        FRESHET_EMBEDDING_DIM: String(D),
        FRESHET_DISCOVER_POOL: '10',
        FRESHET_DISCOVER_EXACT_MAX: '100',
        FRESHET_MAX_PER_AUTHOR: '0', // the exact cosine order is the point (two authors only)
        // a first sub-filter far larger than the ~200 items served, so no Bloom false positive (≤ 1 %
        // at the default n0 of 100) hides an item from the exact order this test checks
        FRESHET_READER_SEEN_CAPACITY: '100000',
      },
    });
    for (const u of ['reader', 'w1', 'w2'])
      expect((await t.app.inject({ method: 'PUT', url: `/v1/users/${u}`, headers: svc })).statusCode).toBe(200);
    const items = [...embeddings].map(([id, e], i) => ({
      ...it_(id, i % 2 ? 'w1' : 'w2', 10 + i, e),
      title: `Item ${id}`,
    }));
    for (let i = 0; i < items.length; i += 100)
      expect(
        (await t.app.inject({ method: 'POST', url: '/v1/items', payload: items.slice(i, i + 100), headers: svc }))
          .statusCode,
      ).toBe(200);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/v1/views',
          payload: [{ item_id: 'v0', visitor_id: 'reader', at: T0 - HOUR_MS }],
          headers: svc,
        })
      ).statusCode,
    ).toBe(200);
    await indexReady(t);
  });
  afterAll(async () => t?.close());

  it('serves the unseen items by descending exact cosine to the reader, each once', async () => {
    // the reader embedding: the viewed item's stored int8 codes, normalized (one signal)
    const codes = (v: number[]) => quantize(normalize(v));
    const reader = normalize(codes(embeddings.get('v0')!));
    const expected = [...embeddings.keys()]
      .filter((id) => id !== 'v0')
      .map((id) => ({ id, cos: cosine(reader, codes(embeddings.get(id)!)) }))
      .filter((c) => c.cos > 0)
      .sort((a, b) => b.cos - a.cos || (a.id < b.id ? -1 : 1));
    const discovered: string[] = [];
    let cursor: string | null = null;
    for (let p = 0; p < 40; p++) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/v1/feeds/discover?limit=20${cursor ? `&cursor=${cursor}` : ''}`,
        headers: { ...svc, 'x-freshet-reader': 'reader', 'x-freshet-now': String(t.clock.now()) },
      });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data as { items: { id: string }[]; sources: string[]; next_cursor: string | null };
      data.items.forEach((item, i) => data.sources[i] === 'discovery' && discovered.push(item.id));
      if (!data.sources.includes('discovery') && discovered.length > 0) break;
      cursor = data.next_cursor;
      if (!cursor) break;
    }
    expect(discovered.length).toBeGreaterThan(100);
    expect(discovered).toEqual(expected.map((c) => c.id));
  });
});

/**
 * A restart whose vector index takes long to start (here its first query waits for a lock another
 * connection holds): the pages served meanwhile defer phase 2 — newest items, counted, logged once —
 * and the same session serves discovery once the index is ready, then ends without a repeat.
 */
describe('discover over HTTP while the vector index starts (PostgreSQL)', () => {
  it('defers phase 2 to the newest items, then serves discovery in the same session once the index is ready', async () => {
    const schema = uniqueSchema();
    const dataDir = mkdtempSync(join(tmpdir(), 'freshet-deferred-'));
    const sql = await openPostgres(TEST_DATABASE_URL, { schema });
    await migrate(sql);
    const locker = await openPostgres(TEST_DATABASE_URL, { schema });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const taken = new Promise<void>((resolve) => (locked = resolve));
    const holding = locker.transaction(async (tx) => {
      await tx.exec('LOCK TABLE discover_index_identity IN ACCESS EXCLUSIVE MODE'); // the index start reads it first
      locked();
      await held;
    });
    await taken;
    const logs: { msg: string }[] = [];
    const log = pino(
      { level: 'info' },
      new Writable({ write: (line, _, done) => (logs.push(JSON.parse(String(line))), done()) }),
    );
    const env = {
      FRESHET_DATA_DIR: dataDir,
      FRESHET_SERVICE_KEY: SERVICE_KEY,
      FRESHET_SECRET: 'test-secret-0123456789abcdef',
      FRESHET_EMBEDDING_DIM: String(DIM),
      FRESHET_MAX_PER_AUTHOR: '0', // one author writes every item: the deferral is the point
    };
    const f = await openFreshet(loadConfig(env), { sql, clock: new ManualClock(T0), defaultMetrics: false, log });
    const app = await buildApp(f);
    try {
      // 25 items all along axis 0, the reader viewed v0 (so it has an embedding) and follows nobody
      const items = Array.from({ length: 25 }, (_, i) =>
        it_(`v${i}`, 'other', 10 + i, [1, 0.1 * (i % 5), 0, 0, 0, 0, 0, 0]),
      );
      expect((await app.inject({ method: 'POST', url: '/v1/items', payload: items, headers: svc })).statusCode).toBe(
        200,
      );
      expect(
        (
          await app.inject({
            method: 'POST',
            url: '/v1/views',
            payload: [{ item_id: 'v0', visitor_id: 'rd', at: T0 - HOUR_MS }],
            headers: svc,
          })
        ).statusCode,
      ).toBe(200);
      const page = async (cursor: string | null) => {
        const res = await app.inject({
          method: 'GET',
          url: `/v1/feeds/discover?limit=10${cursor ? `&cursor=${cursor}` : ''}`,
          headers: { ...svc, 'x-freshet-reader': 'rd', 'x-freshet-now': String(T0) },
        });
        expect(res.statusCode, res.body).toBe(200);
        return res.json().data as { items: { id: string }[]; sources: string[]; next_cursor: string | null };
      };
      const metric = async (name: string) => (await f.metrics.registry.getSingleMetric(name)!.get()).values[0]?.value;
      expect(f.discover.vectors.isReady()).toBe(false);
      expect(await metric('freshet_discover_index_ready')).toBe(0);
      const first = await page(null);
      const second = await page(first.next_cursor);
      for (const p of [first, second]) expect(p.sources).toEqual(Array(10).fill('newest'));
      expect(await metric('freshet_discover_phase2_deferred_total')).toBe(2);
      expect(logs.filter((l) => /phase 2 deferred/.test(l.msg))).toHaveLength(1);
      release();
      await holding;
      await until(async () => f.discover.vectors.isReady(), 60_000);
      expect(await metric('freshet_discover_index_ready')).toBe(1);
      // the same session: the four items neither served nor viewed, by discovery; then nothing is left
      const third = await page(second.next_cursor);
      expect(third.sources).toEqual(Array(4).fill('discovery'));
      expect(third.next_cursor).toBeNull();
      const served = [first, second, third].flatMap((p) => p.items.map((i) => i.id));
      expect(new Set(served).size).toBe(24);
      expect(served).not.toContain('v0');
      expect(await metric('freshet_discover_phase2_deferred_total')).toBe(2);
    } finally {
      release();
      await holding;
      await app.close();
      await f.close();
      await locker.exec(`DROP SCHEMA ${schema} CASCADE`);
      await locker.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const)('a viewed item past the hot retention does not come back ($name)', ({ hot, db }) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ hot, db, env: { FRESHET_EMBEDDING_DIM: String(DIM), FRESHET_HOT_RETENTION_DAYS: '30' } });
  });
  afterAll(async () => t?.close());

  it('a view of an older item (verdict expired) is a recent view: discover does not serve that item back', async () => {
    const items = [
      { ...it_('old0', 'other', 100 * 24 * 60, axis(0)) }, // 100 days old: past the 30-day retention
      ...Array.from({ length: 6 }, (_, i) => it_(`x${i}`, `w${i}`, 10 + i, axis(1 + (i % 3)))),
    ];
    expect((await t.app.inject({ method: 'POST', url: '/v1/items', payload: items, headers: svc })).statusCode).toBe(
      200,
    );
    const view = await t.app.inject({
      method: 'POST',
      url: '/v1/views',
      payload: { item_id: 'old0', visitor_id: 'ex' },
      headers: svc,
    });
    expect(view.json().data).toMatchObject({ verdict: 'expired' });
    await indexReady(t);
    const served: string[] = [];
    let cursor: string | null = null;
    for (let p = 0; p < 5; p++) {
      const res: Awaited<ReturnType<typeof t.app.inject>> = await t.app.inject({
        method: 'GET',
        url: `/v1/feeds/discover?limit=5${cursor ? `&cursor=${cursor}` : ''}`,
        headers: { ...svc, 'x-freshet-reader': 'ex' },
      });
      expect(res.statusCode, res.body).toBe(200);
      served.push(...res.json().data.items.map((i: { id: string }) => i.id));
      cursor = res.json().data.next_cursor;
      if (cursor === null) break;
    }
    expect(served).toHaveLength(6); // the six others, and never the viewed one (its own nearest neighbour)
    expect(served).not.toContain('old0');
    expect((await t.client().as('ex').exclusions.list()).recently_viewed).toContain('old0');
  });
});
