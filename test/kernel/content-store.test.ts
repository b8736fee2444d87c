/**
 * The ContentStore contract on both SQL engines — PGlite in memory (the embedded default) and the
 * PostgreSQL server (TEST_DATABASE_URL, in a schema of its own, dropped afterwards) — plus what is
 * specific to the SQL layer: migrations, English full-text search, persistence of a PGlite data
 * folder, schema isolation and error mapping.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import { CachedContentStore } from '../../src/content/cached-content-store.js';
import { LocalItemChanges } from '../../src/kernel/items/item-changes.js';
import { systemClock } from '../../src/kernel/clock.js';
import { PostgresRecall } from '../../src/for-you/adapters/postgres-recall.js';
import { appliedMigrations, migrate, MIGRATIONS } from '../../src/compose/migrations.js';
import { openPglite, openPostgres } from '../../src/kernel/sql/sql.js';
import { ErrorCodes } from '../../src/kernel/errors.js';
import { contentStoreContract, type ContentStoreUnderTest } from '../contracts/content-store.contract.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../support/env.js';
import { adopt, sqlEngines, type SqlPlace } from '../support/contract.js';
import { openTestPglite, seedPgliteDataDir } from '../support/pglite.js';

const HOUR = 3_600_000;
const NOW = Date.UTC(2016, 0, 15, 12);
const DECAY = { scaleMs: 48 * HOUR, offsetMs: 6 * HOUR, decay: 0.5 };

/** Both ports over the place's database (the store does not own the shared handle). */
function contentStore({ sql }: SqlPlace): ContentStoreUnderTest {
  const recall = new PostgresRecall(sql);
  return Object.assign(new PostgresContentStore(sql, { ownsSql: false }), { recall: recall.recall.bind(recall) });
}

/** The same, behind the item cache (src/content/cached-content-store.ts): it must keep the contract. */
function cachedContentStore(place: SqlPlace): ContentStoreUnderTest {
  const recall = new PostgresRecall(place.sql);
  const cached = new CachedContentStore(
    new PostgresContentStore(place.sql, { ownsSql: false }),
    new LocalItemChanges(),
    { maxItems: 1000, ttlMs: 60_000 },
    systemClock,
  );
  return Object.assign(cached, { recall: recall.recall.bind(recall) });
}

for (const engine of sqlEngines()) {
  adopt(contentStoreContract, engine, contentStore);
  // the cache's logic does not depend on the engine: once, on the embedded default's
  if (engine.name === 'PGlite')
    adopt(contentStoreContract, engine, cachedContentStore, `${engine.name} behind the item cache`);

  describe(`the SQL layer on ${engine.name}`, () => {
    it('migrate is idempotent and recorded', async () => {
      const { sql } = await engine.place();
      expect(await appliedMigrations(sql)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await migrate(sql)).toEqual([]);
      const rows = await sql.query<{ n: number | string }>('SELECT count(*) AS n FROM freshet_migrations');
      expect(Number(rows[0]?.n)).toBe(MIGRATIONS.length);
    });

    it('full-text search is English: stems and ignores stop words', async () => {
      const store = contentStore(await engine.place());
      await store.upsertItems(
        [
          {
            id: 'a',
            authorId: 'x',
            title: 'Running databases',
            text: '',
            url: null,
            tags: [],
            publishedAt: NOW - HOUR,
            popularity: 0,
            lang: 'en',
          },
          {
            id: 'b',
            authorId: 'x',
            title: 'Gardening',
            text: 'the and of',
            url: null,
            tags: ['ran'],
            publishedAt: NOW,
            popularity: 0,
            lang: 'en',
          },
        ],
        NOW,
      );
      const q = { readerId: 'r', nowMs: NOW, limit: 1, decay: DECAY, horizonMs: 100 * HOUR };
      expect(await store.recall({ ...q, interests: ['runs'] })).toEqual(['a']); // run ← running, runs
      expect(await store.recall({ ...q, interests: ['database'] })).toEqual(['a']);
      // Only stop words: no relevance query, so the fill (fresher item first) decides.
      expect(await store.recall({ ...q, interests: ['the', 'and'] })).toEqual(['b']);
    });

    it('a title match outranks a tag match, which outranks a body match', async () => {
      const store = contentStore(await engine.place());
      const base = { authorId: 'x', url: null, publishedAt: NOW - HOUR, popularity: 0, lang: 'en' };
      await store.upsertItems(
        [
          { ...base, id: 'body', title: 'x', text: 'about kayaks', tags: [] },
          { ...base, id: 'tag', title: 'y', text: '', tags: ['kayaks'] },
          { ...base, id: 'title', title: 'kayaks', text: '', tags: [] },
        ],
        NOW,
      );
      const q = { readerId: 'r', nowMs: NOW, limit: 3, decay: DECAY, horizonMs: 100 * HOUR };
      expect(await store.recall({ ...q, interests: ['kayak'] })).toEqual(['title', 'tag', 'body']);
    });

    it('rolls back a whole transaction when the callback throws', async () => {
      const { sql } = await engine.place();
      await expect(
        sql.transaction(async (tx) => {
          await tx.query(
            `INSERT INTO items (id, author_id, published_at, update_time, tsv) VALUES ('t', 'a', 1, 1, ''::tsvector)`,
          );
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await sql.query('SELECT id FROM items')).toEqual([]);
    });
  });
}

describe('PGlite data folder', () => {
  it('persists items across close and reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'freshet-pglite-'));
    seedPgliteDataDir(dir); // a migrated database (the bootstrap of an empty folder: import-hn.test.ts)
    try {
      const first = await openPglite(join(dir, 'pgdata'));
      await migrate(first);
      const store = new PostgresContentStore(first);
      const it0 = {
        id: 'p',
        authorId: 'a',
        title: 'kept',
        text: '',
        url: null,
        tags: ['t'],
        publishedAt: NOW,
        popularity: 1,
        lang: 'und',
      };
      await store.upsertItems([it0], NOW);
      await store.close();

      const second = await openPglite(join(dir, 'pgdata'));
      expect(await migrate(second)).toEqual([]);
      const reopened = new PostgresContentStore(second);
      expect(await reopened.getItems(['p'])).toEqual([{ ...it0, updateTime: NOW }]);
      await reopened.close();
      await reopened.close(); // closing twice is harmless
      await expect(second.query('SELECT 1')).rejects.toMatchObject({ code: ErrorCodes.STORE_UNAVAILABLE.code });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('PGlite statistics', () => {
  it('analyzes items after a bulk upsert, so hydration uses the primary key, not a scan of live rows', async () => {
    const sql = await openTestPglite();
    try {
      await migrate(sql);
      const store = new PostgresContentStore(sql, { ownsSql: false });
      const stats = async () =>
        Number(
          (await sql.query<{ n: number | string }>(`SELECT count(*) AS n FROM pg_stats WHERE tablename = 'items'`))[0]
            ?.n,
        );
      expect(await stats()).toBe(0);
      await store.upsertItems(
        [{ id: 'one', authorId: 'a', title: 't', text: '', url: null, tags: [], publishedAt: NOW, popularity: 0 }],
        NOW,
      );
      expect(await stats()).toBe(0); // 1 row is under the trigger (50 + 10 % of the table)

      const items = Array.from({ length: 3000 }, (_, i) => ({
        id: `i${i}`,
        authorId: `a${i % 50}`,
        title: `title ${i}`,
        text: 'body',
        url: null,
        tags: [],
        publishedAt: NOW - i * 1000,
        popularity: i % 7,
      }));
      await store.upsertItems(items, NOW);
      expect(await stats()).toBeGreaterThan(0);
      const plan = await sql.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM items WHERE id = ANY(ARRAY['i1','i2']::text[]) AND deleted_at IS NULL`,
      );
      const text = plan.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toContain('items_pkey');
      expect(text).not.toContain('items_live_published_idx');
    } finally {
      await sql.close();
    }
  });
});

describe('PostgreSQL server', () => {
  it('keeps schemas apart: one schema does not see the tables of another', async () => {
    const [s1, s2] = [uniqueSchema(), uniqueSchema()];
    const a = await openPostgres(TEST_DATABASE_URL, { schema: s1 });
    const b = await openPostgres(TEST_DATABASE_URL, { schema: s2 });
    try {
      await migrate(a);
      expect(await appliedMigrations(a)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await appliedMigrations(b)).toEqual([]);
      const rows = await a.query<{ s: string }>('SELECT current_schema() AS s');
      expect(rows[0]?.s).toBe(s1);
    } finally {
      await a.exec(`DROP SCHEMA ${s1} CASCADE`);
      await b.exec(`DROP SCHEMA ${s2} CASCADE`);
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('maps an unreachable server to STORE_UNAVAILABLE', async () => {
    const url = new URL(TEST_DATABASE_URL);
    url.port = '1'; // nothing listens on port 1
    await expect(openPostgres(url.toString())).rejects.toMatchObject({ code: ErrorCodes.STORE_UNAVAILABLE.code });
  });

  it('maps a missing database to STORE_UNAVAILABLE', async () => {
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = '/freshet_no_such_database';
    await expect(openPostgres(url.toString())).rejects.toMatchObject({ code: ErrorCodes.STORE_UNAVAILABLE.code });
  });

  it('rejects a schema name that is not a plain identifier', async () => {
    await expect(openPostgres(TEST_DATABASE_URL, { schema: 'x; DROP TABLE y' })).rejects.toMatchObject({
      code: ErrorCodes.INVALID_INPUT.code,
    });
  });
});
