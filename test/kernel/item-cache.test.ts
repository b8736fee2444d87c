/**
 * The item cache in front of hydration (src/content/cached-content-store.ts) with its change channel
 * over Redis pub/sub (redis-item-changes.ts): two stores over one database stand for two processes
 * (`serve --workers 2`), each with its own subscriber connection to a throwaway redis-server that the
 * outage test stops and starts again. What a reader relies on: a deleted or edited item is never served
 * from a copy by the process that changed it, and by another one once the change has arrived; a copy is
 * never kept from a read that raced a change; while the channel is down nothing is served from memory.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { CachedContentStore } from '../../src/content/cached-content-store.js';
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import { LocalItemChanges } from '../../src/kernel/items/item-changes.js';
import { RedisItemChanges } from '../../src/content/redis-item-changes.js';
import type { ItemInput } from '../../src/kernel/items/content-store.js';
import type { Sql } from '../../src/kernel/sql/sql.js';
import { closeRedis, createRedis, reconnectDelayMs, type RedisClient } from '../../src/kernel/redis/client.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { openTestPglite } from '../support/pglite.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { until } from '../support/faults.js';

const NOW = Date.UTC(2026, 10, 27, 12);
const CHANNEL = 'test:items:changes';
const SETTINGS = { maxItems: 100, ttlMs: 60_000 };

function item(id: string, title = `title ${id}`): ItemInput {
  return {
    id,
    authorId: 'author',
    title,
    text: 'text',
    url: null,
    tags: ['t'],
    publishedAt: NOW - 3_600_000,
    popularity: 1,
  };
}

/** `sql` whose hydration reads (`SELECT … FROM items WHERE id = ANY`) are counted and may be held. */
function watched(sql: Sql): { sql: Sql; reads: () => number; hold: () => () => void } {
  let reads = 0;
  let gate: Promise<void> | null = null;
  const isRead = (text: string) => /FROM items WHERE id = ANY/.test(text);
  const query = async <T>(text: string, params?: readonly unknown[]): Promise<T[]> => {
    if (isRead(text)) {
      reads++;
      const rows = await sql.query<T>(text, params);
      if (gate) await gate; // the rows predate whatever happens while the read is held
      return rows;
    }
    return sql.query<T>(text, params);
  };
  return {
    sql: { ...sql, query },
    reads: () => reads,
    hold: () => {
      let release!: () => void;
      gate = new Promise<void>((r) => (release = r));
      return () => {
        gate = null;
        release();
      };
    },
  };
}

describe('item cache, one process', () => {
  let db: Sql;
  beforeAll(async () => {
    db = await openTestPglite();
    await new PostgresContentStore(db, { ownsSql: false }).upsertItems([item('a'), item('b'), item('c')], NOW);
  });
  afterAll(() => db.close());

  it('serves hydrated items from memory: the same ids again cost no read, in the order asked, each once', async () => {
    const w = watched(db);
    const store = new CachedContentStore(
      new PostgresContentStore(w.sql, { ownsSql: false }),
      new LocalItemChanges(),
      SETTINGS,
      new ManualClock(NOW),
    );
    expect((await store.getItems(['a', 'b'])).map((i) => i.id)).toEqual(['a', 'b']);
    expect(w.reads()).toBe(1);
    expect((await store.getItems(['b', 'a', 'b', 'unknown'])).map((i) => i.id)).toEqual(['b', 'a']);
    expect(w.reads()).toBe(2); // only 'unknown' was read: unknown ids are not cached
    expect((await store.getItems(['c', 'a'])).map((i) => i.id)).toEqual(['c', 'a']);
    expect(w.reads()).toBe(3);
    expect(store.size).toBe(3);
    await store.getItems(['a'], { fresh: true }); // the item API's read: the store of record
    expect(w.reads()).toBe(4);
  });

  it('an entry lapses after the ttl on the injected clock', async () => {
    const w = watched(db);
    const clock = new ManualClock(NOW);
    const store = new CachedContentStore(
      new PostgresContentStore(w.sql, { ownsSql: false }),
      new LocalItemChanges(),
      SETTINGS,
      clock,
    );
    await store.getItems(['a']);
    clock.advance(SETTINGS.ttlMs - 1);
    await store.getItems(['a']);
    expect(w.reads()).toBe(1);
    clock.advance(2);
    await store.getItems(['a']);
    expect(w.reads()).toBe(2);
  });

  it('a read in flight when its item is edited is returned as read, but the next hydration reads the edit', async () => {
    const own = await openTestPglite();
    try {
      const w = watched(own);
      const store = new CachedContentStore(
        new PostgresContentStore(w.sql, { ownsSql: false }),
        new LocalItemChanges(),
        SETTINGS,
        new ManualClock(NOW),
      );
      await store.upsertItems([item('x', 'before')], NOW);
      const release = w.hold();
      const racing = store.getItems(['x']); // its rows are read now, before the edit
      await until(async () => w.reads() === 1, 1000);
      await store.upsertItems([item('x', 'after')], NOW + 1);
      release();
      expect((await racing)[0]?.title).toBe('before');
      expect((await store.getItems(['x']))[0]?.title).toBe('after');
      expect(w.reads()).toBe(2);
    } finally {
      await own.close();
    }
  });

  it('cached items are frozen: a caller cannot change what the next reader gets', async () => {
    const store = new CachedContentStore(
      new PostgresContentStore(db, { ownsSql: false }),
      new LocalItemChanges(),
      SETTINGS,
      new ManualClock(NOW),
    );
    await store.getItems(['a']);
    const [copy] = await store.getItems(['a']);
    expect(() => copy!.tags.push('mutated')).toThrow(TypeError);
    expect((await store.getItems(['a']))[0]?.tags).toEqual(['t']);
  });
});

describe('item cache, two processes over one database and Redis pub/sub', () => {
  let db: Sql;
  let server: RedisServer;
  const opened: { changes: RedisItemChanges; publisher: RedisClient }[] = [];

  /** One "process": its store and its change channel (own publisher and subscriber connections). */
  function processOver(sql: Sql, settings = SETTINGS): { store: CachedContentStore; changes: RedisItemChanges } {
    const publisher = createRedis({ url: server.url, commandTimeoutMs: 500 });
    publisher.on('error', () => {}); // the outage test stops the server: reconnect attempts are expected
    const changes = new RedisItemChanges(
      publisher,
      () => new Redis(server.url, { maxRetriesPerRequest: null, retryStrategy: reconnectDelayMs }),
      CHANNEL,
      silentLogger,
    );
    opened.push({ changes, publisher });
    return {
      store: new CachedContentStore(
        new PostgresContentStore(sql, { ownsSql: false }),
        changes,
        settings,
        new ManualClock(NOW),
      ),
      changes,
    };
  }

  beforeAll(async () => {
    server = await startRedisServer();
    db = await openTestPglite();
  });
  afterEach(async () => {
    for (const { changes, publisher } of opened.splice(0)) {
      await changes.close();
      await closeRedis(publisher);
    }
  });
  afterAll(async () => {
    await server.stop();
    await db.close();
  });

  it('a delete is never served by the process that made it, and by the other one once the change arrives', async () => {
    const a = processOver(db);
    const w = watched(db);
    const b = processOver(w.sql);
    await until(async () => a.changes.live && b.changes.live, 2000);
    await new PostgresContentStore(db, { ownsSql: false }).upsertItems([item('d1'), item('d2')], NOW); // no message
    await a.store.getItems(['d1', 'd2']);
    await b.store.getItems(['d1', 'd2']);
    const readsBefore = w.reads();
    expect((await b.store.getItems(['d1', 'd2'])).map((i) => i.id)).toEqual(['d1', 'd2']);
    expect(w.reads()).toBe(readsBefore); // served from b's memory

    expect(await a.store.deleteItem('d1', NOW + 1)).toBe(true);
    expect((await a.store.getItems(['d1', 'd2'])).map((i) => i.id)).toEqual(['d2']);
    const ms = await until(async () => (await b.store.getItems(['d1', 'd2'])).length === 1, 1000, 1);
    expect((await b.store.getItems(['d1', 'd2'])).map((i) => i.id)).toEqual(['d2']);
    console.log(`[item-cache] a delete reached the other process in ${ms.toFixed(1)} ms`);
  });

  it('a process that keeps no copies (maxItems 0) reads the database every time, and still tells the others', async () => {
    const w = watched(db);
    const a = processOver(w.sql, { ...SETTINGS, maxItems: 0 });
    const b = processOver(db);
    await until(async () => a.changes.live && b.changes.live, 2000);
    await new PostgresContentStore(db, { ownsSql: false }).upsertItems([item('z1')], NOW); // no message
    await a.store.getItems(['z1']);
    await a.store.getItems(['z1']);
    expect(w.reads()).toBe(2);
    expect(a.store.size).toBe(0);
    await b.store.getItems(['z1']);
    expect(await a.store.deleteItem('z1', NOW + 1)).toBe(true);
    await until(async () => (await b.store.getItems(['z1'])).length === 0, 1000, 1);
  });

  it("an edit replaces the other process's copy", async () => {
    const a = processOver(db);
    const b = processOver(db);
    await until(async () => a.changes.live && b.changes.live, 2000);
    await a.store.upsertItems([item('e1', 'first')], NOW);
    expect((await b.store.getItems(['e1']))[0]?.title).toBe('first');
    await a.store.upsertItems([item('e1', 'second')], NOW + 1);
    await until(async () => (await b.store.getItems(['e1']))[0]?.title === 'second', 1000, 1);
  });

  it('while the channel is down nothing is served from memory, and after it is back the cache starts empty', async () => {
    const a = processOver(db);
    const w = watched(db);
    const b = processOver(w.sql);
    await until(async () => a.changes.live && b.changes.live, 2000);
    // written without a message, so that no late message of the write drops b's copies
    await new PostgresContentStore(db, { ownsSql: false }).upsertItems([item('o1'), item('o2')], NOW);
    await b.store.getItems(['o1', 'o2']);
    expect(b.store.size).toBe(2);

    const port = server.port;
    await server.stop();
    await until(async () => !b.changes.live, 2000);
    // the delete commits although its message cannot be sent (a logged warning)
    expect(await a.store.deleteItem('o1', NOW + 1)).toBe(true);
    const before = w.reads();
    expect((await b.store.getItems(['o1', 'o2'])).map((i) => i.id)).toEqual(['o2']);
    expect(w.reads()).toBe(before + 1); // bypassed: read from the database

    server = await startRedisServer([], { port });
    await until(async () => a.changes.live && b.changes.live, 5000);
    expect(b.store.size).toBe(0); // the copies kept before the outage were dropped
    expect((await b.store.getItems(['o1', 'o2'])).map((i) => i.id)).toEqual(['o2']);
  });
});
