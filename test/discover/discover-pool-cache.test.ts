/**
 * The discover feed's per-session phase-2 pool cache (src/discover/pool-cache.ts) on both store
 * pairs (PGlite + in-process, PostgreSQL + Redis): a session's later phase-2 pages issue no vector search,
 * the pages are identical to those of a feed without the cache, an item deleted mid-session is not served
 * (and the page stays full), the entry goes when the session leaves phase 2, and the bounds hold.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { openFreshet, type Freshet } from '../../src/compose/open.js';
import { hotTrending } from '../../src/compose/bridges.js';
import { PostgresDiscoverIndex } from '../../src/discover/adapters/postgres-discover-index.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { openTestPglite } from '../support/pglite.js';
import { ManualClock } from '../../src/kernel/clock.js';
import type { DiscoverIndex } from '../../src/discover/discover-index.js';
import { CursorCodec } from '../../src/discover/cursor.js';
import { DiscoverFeed } from '../../src/discover/service.js';
import { DiscoverPoolCache } from '../../src/discover/pool-cache.js';
import { noDiscoverMetrics } from '../../src/discover/discover-metrics.js';
import { dropPrefix } from '../support/app.js';
import { until } from '../support/faults.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniquePrefix, uniqueSchema } from '../support/env.js';

const NOW = Date.UTC(2026, 2, 6, 12);
const SECRET = 'pool-cache-secret-0123456789abcdef';
const WORDS = Array.from({ length: 12 }, (_, i) => `topic${i}`);

/** The real index, counting `nearest` (vector searches) and `live` calls. */
function counting(index: DiscoverIndex): { index: DiscoverIndex; calls: { nearest: number; live: number } } {
  const calls = { nearest: 0, live: 0 };
  const wrapped = Object.create(index) as DiscoverIndex;
  wrapped.nearest = (q) => (calls.nearest++, index.nearest(q));
  wrapped.live = (ids) => (calls.live++, index.live(ids));
  return { index: wrapped, calls };
}

describe.each([
  { name: 'PGlite + in-process', db: 'pglite' },
  { name: 'PostgreSQL + Redis', db: 'postgres' },
] as const)('discover pool cache on $name', ({ db }) => {
  let sql: Sql;
  let f: Freshet;
  const schema = uniqueSchema();
  const prefix = uniquePrefix();
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-pool-cache-'));

  /** A feed over `f`'s stores with its own counting index and, optionally, a pool cache. */
  const feedOf = (pool?: DiscoverPoolCache) => {
    const c = counting(new PostgresDiscoverIndex(sql, f.discover.vectors));
    const deps = {
      index: c.index,
      embeddings: f.discover.embeddings,
      content: f.content,
      seen: f.readerSeen,
      exclusions: f.exclusions,
      trending: hotTrending(f.hot),
      cursors: new CursorCodec(SECRET, 86_400_000),
      log: f.log,
      metrics: noDiscoverMetrics,
      pool,
    };
    return { feed: new DiscoverFeed(deps, f.discover.feed.settings), calls: c.calls };
  };
  /** Every page of a session of `reader` (limit 10) as [ids, sources]. */
  const walk = async (feed: DiscoverFeed, reader: string) => {
    const pages: { ids: string[]; sources: string[] }[] = [];
    let cursor: string | undefined;
    for (let p = 0; p < 50; p++) {
      const page = await feed.page(reader, 10, cursor, NOW);
      pages.push({ ids: page.items.map((i) => i.id), sources: page.sources });
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    return pages;
  };

  beforeAll(async () => {
    sql = db === 'postgres' ? await openPostgres(TEST_DATABASE_URL, { schema }) : await openTestPglite();
    const env = {
      LOG_LEVEL: 'silent',
      FRESHET_SERVICE_KEY: 'test-service-key-0123456789',
      FRESHET_SECRET: SECRET,
      FRESHET_KEY_PREFIX: prefix,
      FRESHET_DATA_DIR: dataDir,
      FRESHET_DISCOVER_POOL: '300',
      FRESHET_MAX_PER_AUTHOR: '0', // the subject is the pool cache; author diversity has its own tests
      ...(db === 'postgres' ? { FRESHET_REDIS_URL: TEST_REDIS_URL } : {}),
    };
    f = await openFreshet(loadConfig(env), {
      sql,
      clock: new ManualClock(NOW),
      defaultMetrics: false,
      recoverHot: false,
    });
    const items = Array.from({ length: 120 }, (_, i) => ({
      id: `i${String(i).padStart(3, '0')}`,
      authorId: `a${i % 7}`,
      title: `${WORDS[i % 12]} ${WORDS[(i * 5) % 12]} ${WORDS[(i * 7 + 3) % 12]} story`,
      text: '',
      url: null,
      tags: [],
      publishedAt: NOW - (i + 1) * 60_000,
      popularity: 0,
    }));
    await f.content.upsertItems(items, NOW);
    await f.discover.embeddings.embedMissing(NOW);
    // readers with identical signals: the same reader embedding, hence the same ranked pool
    const signals = [];
    for (const r of ['ra', 'rb', 'rc', 'rd'])
      for (const k of [0, 1, 2, 13])
        signals.push({ readerId: r, itemId: items[k]!.id, atMs: NOW - (k + 1) * 3_600_000, weight: 1 });
    await f.discover.embeddings.addSignals(signals);
    await until(async () => f.discover.vectors.isReady(), 60_000); // warmed at open: phase 2 is never deferred here
  });
  afterAll(async () => {
    await f?.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (db === 'postgres') {
      const admin = await openPostgres(TEST_DATABASE_URL);
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.close();
      await dropPrefix(prefix);
    }
  });

  it('later phase-2 pages of a session run no vector search, and serve exactly what an uncached feed serves', async () => {
    const cache = new DiscoverPoolCache();
    const cached = feedOf(cache);
    const plain = feedOf();
    const a = await walk(cached.feed, 'ra');
    const b = await walk(plain.feed, 'rb');
    expect(a).toEqual(b);
    const phase2Pages = a.filter((p) => p.sources.includes('discovery')).length;
    expect(phase2Pages).toBeGreaterThan(2);
    expect(plain.calls.nearest).toBe(phase2Pages);
    expect(cached.calls.nearest).toBe(1);
    expect(cached.calls.live).toBeGreaterThanOrEqual(phase2Pages - 1);
    // the session left phase 2: its pool is gone
    expect(cache.stats()).toEqual({ entries: 0, bytes: 0 });
  });

  it('an item deleted mid-session is not served from the cached pool, and the page stays full', async () => {
    const cache = new DiscoverPoolCache();
    const { feed, calls } = feedOf(cache);
    const first = await feed.page('rc', 10, undefined, NOW);
    expect(first.sources).toEqual(Array(10).fill('discovery'));
    const pool = cache.get('rc', NOW)!;
    const served = new Set(first.items.map((i) => i.id));
    const next = pool.entries.filter((c) => !served.has(c.id)).slice(0, 3);
    for (const c of next) expect(await f.content.deleteItem(c.id, NOW)).toBe(true);
    const second = await feed.page('rc', 10, first.nextCursor!, NOW);
    expect(calls.nearest).toBe(1);
    expect(second.items).toHaveLength(10);
    const ids = second.items.map((i) => i.id);
    for (const c of next) expect(ids).not.toContain(c.id);
    for (const id of ids) expect(served.has(id)).toBe(false);
  });

  it('holds its bounds: entries and bytes evict the least recently used; an expired entry is a miss', () => {
    const pool = (n: number) => ({
      entries: Array.from({ length: n }, (_, i) => ({ id: `item${i}`, authorId: 'author', key: 1 - i / n })),
      done: true,
    });
    const byEntries = new DiscoverPoolCache({ entries: 2 });
    byEntries.set('r1', 1, pool(3), 0);
    byEntries.set('r2', 1, pool(3), 0);
    expect(byEntries.get('r1', 1, 0)).toMatchObject({ entries: { length: 3 } }); // r1 is now the most recent
    byEntries.set('r3', 1, pool(3), 0);
    expect(byEntries.get('r2', 1, 0)).toBeUndefined();
    expect(byEntries.get('r1', 1, 0)).toMatchObject({ entries: { length: 3 } });
    expect(byEntries.stats().entries).toBe(2);
    const small = new DiscoverPoolCache({ bytes: 6_000 }); // a pool of 40 is ~3.6 kB
    small.set('r1', 1, pool(40), 0);
    small.set('r2', 1, pool(40), 0);
    expect(small.stats().bytes).toBeLessThanOrEqual(6_000);
    expect(small.get('r1', 1, 0)).toBeUndefined();
    small.set('big', 1, pool(1000), 0);
    expect(small.get('big', 1, 0)).toBeUndefined();
    const ttl = new DiscoverPoolCache({ ttlMs: 1000 });
    ttl.set('r1', 1, pool(3), 0);
    expect(ttl.get('r1', 1, 999)).toMatchObject({ entries: { length: 3 } });
    expect(ttl.get('r1', 1, 1000)).toBeUndefined();
    expect(ttl.stats()).toEqual({ entries: 0, bytes: 0 });
  });
});
