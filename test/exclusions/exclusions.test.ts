/**
 * Note 5's exclusions below HTTP: the ExclusionCache contract on memory and Redis, the ExclusionStore
 * contract on PGlite and PostgreSQL, and the Exclusions service (one round trip, cold-cache load,
 * invalidation on writes, the author penalty window) over real stores, and the recall with the
 * exclusions pushed into its SQL.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/kernel/clock.js';
import { buildReaderExclusions, NO_DURABLE, type DurableExclusions } from '../../src/exclusions/domain.js';
import { parsePreferences } from '../../src/exclusions/preferences.js';
import { MemoryExclusionCache } from '../../src/exclusions/adapters/memory-exclusion-cache.js';
import { EXCLUSION_SCRIPTS, RedisExclusionCache } from '../../src/exclusions/adapters/redis-exclusion-cache.js';
import { PostgresExclusionStore } from '../../src/exclusions/adapters/postgres-exclusion-store.js';
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import { PostgresRecall } from '../../src/for-you/adapters/postgres-recall.js';
import { PostgresSocialGraph } from '../../src/following/adapters/postgres-social-graph.js';
import type { Sql } from '../../src/kernel/sql/sql.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { Exclusions } from '../../src/exclusions/service.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { fileRedis } from '../support/redis.js';
import { adopt, memory, pglite, postgres, redisEngine, type SqlPlace } from '../support/contract.js';
import { exclusionCacheContract, exclusionStoreContract, type StoreHarness } from '../contracts/exclusions.contract.js';

const file = fileRedis();
const { redis, commands } = file;
const lite = pglite();
const server = postgres();
const T = Date.UTC(2026, 2, 5);

adopt(exclusionCacheContract, memory, (_, s) => ({ cache: new MemoryExclusionCache(s) }));
adopt(exclusionCacheContract, redisEngine(file), ({ redis, keys, commands }, s) => ({
  cache: new RedisExclusionCache(redis, keys, s),
  commands,
}));

function exclusionStore({ sql }: SqlPlace): StoreHarness {
  const graph = new PostgresSocialGraph(sql);
  return {
    store: new PostgresExclusionStore(sql),
    content: new PostgresContentStore(sql, { ownsSql: false }),
    block: async (a, b) => {
      await graph.ensureUsers([a, b], T);
      await graph.block(a, b, T);
    },
  };
}

adopt(exclusionStoreContract, lite, exclusionStore);
adopt(exclusionStoreContract, server, exclusionStore);

describe('ReaderExclusions snapshot', () => {
  const penalty = { weight: 0.3, durationMs: 30 * DAY_MS };
  const durable = {
    engaged: ['e'],
    notInterested: [{ itemId: 'n', authorId: 'meh', atMs: T }],
    blockedAuthors: ['bad'],
  };

  it('gives each rule its reason, own and blocked authors first', () => {
    const ex = buildReaderExclusions('me', ['v', 'v', 'w'], durable, T, penalty);
    expect(ex.recentViews).toEqual(['v', 'w']);
    expect(ex.reason('x', 'me')).toBe('own');
    expect(ex.reason('x', 'bad')).toBe('blocked_author');
    expect(ex.reason('n', 'meh')).toBe('not_interested');
    expect(ex.reason('e')).toBe('engaged');
    expect(ex.reason('w')).toBe('recently_viewed');
    expect(ex.reason('ok', 'someone')).toBeNull();
    expect([...ex.itemIds].sort()).toEqual(['e', 'n', 'v', 'w']);
    expect([...ex.blockedAuthors].sort()).toEqual(['bad', 'me']);
  });

  it("explain's findings and the feeds' filter read one rule table: the first finding is always the filter's reason", () => {
    const prefs = parsePreferences(
      {
        muted_words: [{ phrase: 'spoiler' }, { phrase: 'rumour', action: 'warn' }],
        muted_authors: [{ author_id: 'loud' }],
        languages: ['en'],
      },
      T,
    );
    const ex = buildReaderExclusions('me', ['v'], { ...durable, preferences: prefs }, T, penalty);
    // every rule alone and in pairs: ids × authors × texts × languages
    const ids = ['ok', 'n', 'e', 'v'];
    const authors = ['someone', 'me', 'bad', 'loud'];
    const texts = ['plain', 'a spoiler here', 'a rumour'];
    const langs = ['en', 'de', 'und'];
    let excluded = 0;
    for (const id of ids)
      for (const authorId of authors)
        for (const text of texts)
          for (const lang of langs)
            for (const feed of ['for-you', 'discover', 'following', 'hot'] as const) {
              const item = {
                id,
                authorId,
                title: text,
                text: '',
                url: null,
                tags: [],
                publishedAt: T,
                updateTime: T,
                popularity: 0,
                lang,
              };
              const filter = ex.reason(id, authorId) ?? ex.itemReason(item, feed);
              const found = ex.findings(item, feed).rules;
              expect(found[0]?.rule ?? null, `${id} by ${authorId}, "${text}" (${lang}) in ${feed}`).toBe(filter);
              expect(ex.filterItems([item], feed).length === 0).toBe(filter !== null);
              if (filter !== null) excluded++;
            }
    expect(excluded).toBeGreaterThan(500); // most combinations hit some rule
  });

  it('down-weights a not-interested author for the configured time only', () => {
    expect(buildReaderExclusions('me', [], durable, T + 30 * DAY_MS - 1, penalty).authorWeight('meh')).toBe(0.3);
    expect(buildReaderExclusions('me', [], durable, T + 30 * DAY_MS, penalty).authorWeight('meh')).toBe(1);
    expect(buildReaderExclusions('me', [], durable, T, { weight: 1, durationMs: DAY_MS }).authorWeights.size).toBe(0);
  });
});

describe('Exclusions service on Redis + PostgreSQL', () => {
  it('reads in one Redis round trip and no SQL once cached; writes invalidate', async () => {
    const { sql } = await server.place();
    let queries = 0;
    const counted: Sql = Object.assign(Object.create(sql) as Sql, {
      query: (text: string, params?: readonly unknown[]) => {
        queries++;
        return sql.query(text, params);
      },
    });
    const content = new PostgresContentStore(sql, { ownsSql: false });
    await content.upsertItems(
      [{ id: 'i1', authorId: 'a1', title: 't', text: '', url: null, tags: [], publishedAt: T, popularity: 0 }],
      T,
    );
    const cache = new RedisExclusionCache(redis, new Keys(file.nextPrefix()), {
      recentViews: 10,
      recentViewsTtlMs: 7 * DAY_MS,
      durableTtlMs: 60_000,
    });
    const ex = new Exclusions(
      { store: new PostgresExclusionStore(counted), cache, log: silentLogger },
      { penalty: { weight: 0.3, durationMs: DAY_MS }, cap: 100 },
    );

    let [c0, q0] = [commands(), queries];
    expect((await ex.forReader('r', T)).itemIds.size).toBe(0); // cold: 1 round trip + 1 query (+ the fill)
    expect(queries - q0).toBe(1);
    await new Promise((r) => setImmediate(r));
    await redis.ping(); // the fill was sent before this PING, so it has landed
    [c0, q0] = [commands(), queries];
    await ex.forReader('r', T);
    expect([commands() - c0, queries - q0]).toEqual([1, 0]);

    await ex.notInterested('r', 'i1', T);
    const after = await ex.forReader('r', T + 1);
    expect(after.reason('i1', 'a1')).toBe('not_interested');
    expect(after.authorWeight('a1')).toBe(0.3);
    await ex.undoNotInterested('r', 'i1');
    expect((await ex.forReader('r', T + 2)).excludes('i1', 'a1')).toBe(false);
    await ex.recordEngagement('r', 'i1', 'reply', T);
    expect((await ex.forReader('r', T + 3)).reason('i1')).toBe('engaged');
    await ex.recordViews([{ readerId: 'r', itemId: 'v1' }], T);
    expect((await ex.forReader('r', T + 4)).recentViews).toEqual(['v1']);
  });
});

describe('the Redis cache keeps what it parsed (a full preferences document is 62 KB of JSON)', () => {
  const settings = { recentViews: 10, recentViewsTtlMs: 7 * DAY_MS, durableTtlMs: 60_000 };
  const durable = (phrase: string): DurableExclusions => ({
    ...NO_DURABLE,
    preferences: parsePreferences(
      {
        muted_words: Array.from({ length: 200 }, (_, i) => ({ phrase: `${phrase} ${i}` })),
        muted_authors: Array.from({ length: 1000 }, (_, i) => ({ author_id: `author_${i}` })),
      },
      T,
    ),
  });

  it('an unchanged snapshot is not sent nor parsed again; a write by another process is seen at once', async () => {
    const keys = new Keys(file.nextPrefix());
    const a = new RedisExclusionCache(redis, keys, settings); // two processes on one Redis
    const b = new RedisExclusionCache(redis, keys, settings);
    const first = durable('first');
    expect(await a.fill('r', (await a.read('r', T)).generation, first)).toBe(true);
    const stored = (await redis.get(keys.exclusionCache('r')))!;
    expect(stored).toMatch(/^\{"fill":"[0-9a-f]{16}",/); // still plain JSON: an earlier version parses it
    const head = stored.slice(0, 27);
    const reply = (await EXCLUSION_SCRIPTS.on(redis).exRead(
      [keys.recentViews('r'), keys.recentViewsAt('r'), keys.exclusionCache('r'), keys.exclusionGeneration('r')],
      [T, 7 * DAY_MS, head],
    )) as unknown[];
    expect(reply[1]).toBe(1); // the holder of that head gets 1, not the JSON
    expect((await a.read('r', T)).durable).toBe(first); // the very object it filled
    const fromB = (await b.read('r', T)).durable!;
    expect(fromB).toEqual(first); // parsed once (without the fill id) …
    expect((await b.read('r', T)).durable).toBe(fromB); // … and kept

    await b.invalidate('r'); // a write in process b, then its next page fills again
    const second = durable('second');
    expect(await b.fill('r', (await b.read('r', T)).generation, second)).toBe(true);
    expect((await a.read('r', T)).durable).toEqual(second); // a holds the old head: it gets the new JSON
    await a.invalidate('r');
    expect((await b.read('r', T)).durable).toBeNull(); // and an invalidation anywhere drops it everywhere
  });

  it('reads a snapshot written by an earlier version (no fill id) and keeps nothing beyond its budget', async () => {
    const keys = new Keys(file.nextPrefix());
    const old = durable('old');
    await redis.set(keys.exclusionCache('r'), JSON.stringify(old), 'PX', 60_000);
    const cache = new RedisExclusionCache(redis, keys, settings);
    const one = (await cache.read('r', T)).durable;
    expect(one).toEqual(old);
    expect((await cache.read('r', T)).durable).not.toBe(one); // parsed each time, as before
    const tiny = new RedisExclusionCache(redis, new Keys(file.nextPrefix()), { ...settings, memoBytes: 1000 });
    const big = durable('big');
    await tiny.fill('r', '0', big);
    const got = (await tiny.read('r', T)).durable;
    expect(got).toEqual(big);
    expect(got).not.toBe(big); // 62 KB over a 1,000-byte budget: not kept
  });
});

describe('recall with exclusions pushed into SQL (PGlite)', () => {
  it('never returns excluded items or authors, and sinks down-weighted authors', async () => {
    const { sql } = await lite.place();
    const content = new PostgresContentStore(sql, { ownsSql: false });
    const recall = new PostgresRecall(sql);
    const H = 3_600_000;
    await content.upsertItems(
      ['a', 'b', 'c', 'd', 'e'].map((id, i) => ({
        id,
        authorId: `au_${id}`,
        title: id,
        text: '',
        url: null,
        tags: [],
        publishedAt: T - i * H,
        popularity: 10,
      })),
      T,
    );
    const q = {
      readerId: 'r',
      interests: [],
      nowMs: T,
      limit: 10,
      decay: { scaleMs: 48 * H, offsetMs: 6 * H, decay: 0.5 },
      horizonMs: 5 * DAY_MS,
    };
    expect(await recall.recall(q)).toEqual(['a', 'b', 'c', 'd', 'e']);
    const exclusions = {
      authorIds: new Set(['au_b']),
      itemIds: new Set(['d']),
      authorWeights: new Map([['au_a', 0.3]]),
    };
    expect(await recall.recall({ ...q, exclusions })).toEqual(['c', 'e', 'a']);
  });
});
