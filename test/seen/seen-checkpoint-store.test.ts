/**
 * The PostgreSQL side of the seen-filter checkpoints (migration 8), on PGlite and on the PostgreSQL
 * server: journals appended and loaded in order, folded into a base once with exactly the folded rows
 * deleted, subjects expired with their rows, a reader forgotten.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/compose/migrations.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { openTestPglite } from '../support/pglite.js';
import { PostgresSeenCheckpoints, type SubjectCheckpoint } from '../../src/seen/postgres-seen-checkpoints.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../support/env.js';

const engines: { name: string; open: () => Promise<Sql>; cleanup?: (sql: Sql) => Promise<void> }[] = [
  { name: 'PGlite', open: () => openTestPglite() },
  (() => {
    const schema = uniqueSchema();
    return {
      name: `PostgreSQL server (schema ${schema})`,
      open: () => openPostgres(TEST_DATABASE_URL, { schema }),
      cleanup: (sql: Sql) => sql.exec(`DROP SCHEMA ${schema} CASCADE`),
    };
  })(),
];

/** `n` packed pairs whose bytes all equal `byte`. */
const pairs = (n: number, byte: number) => new Uint8Array(8 * n).fill(byte);

for (const engine of engines) {
  describe(`seen checkpoints on ${engine.name}`, () => {
    let sql: Sql;
    let store: PostgresSeenCheckpoints;
    beforeAll(async () => {
      sql = await engine.open();
      await migrate(sql);
      store = new PostgresSeenCheckpoints(sql);
    });
    afterAll(async () => {
      await engine.cleanup?.(sql);
      await sql.close();
    });

    it('keeps every journal of a subject in order, with the latest expiry and activity, and reports its bytes', async () => {
      const bytes = await store.append([
        { subject: 'r:g:alice', expiresAt: 1_000, atMs: 10, pairs: pairs(1, 1) },
        { subject: 'd:g:0:20260306', expiresAt: 5_000, atMs: 0, pairs: pairs(3, 9) },
        { subject: 'r:g:alice', expiresAt: 2_000, atMs: 20, pairs: pairs(2, 2) },
        { subject: 'r:g:empty', expiresAt: 2_000, atMs: 20, pairs: new Uint8Array(0) },
      ]);
      expect(Object.fromEntries(bytes)).toEqual({
        'd:g:0:20260306': { log: 24, base: 0 },
        'r:g:alice': { log: 24, base: 0 },
      });
      expect(
        Object.fromEntries(
          await store.append([{ subject: 'r:g:alice', expiresAt: 1_500, atMs: 15, pairs: pairs(1, 3) }]),
        ),
      ).toEqual({
        'r:g:alice': { log: 32, base: 0 },
      });

      const loaded = await store.load(['r:g:alice', 'r:g:nobody', 'r:g:empty']);
      expect([...loaded.keys()]).toEqual(['r:g:alice']);
      const alice = loaded.get('r:g:alice')!;
      expect(alice).toMatchObject({ expiresAt: 2_000, atMs: 20, base: null });
      expect(alice.log.map((r) => [r.atMs, [...r.pairs]])).toEqual([
        [20, [...pairs(1, 1), ...pairs(2, 2)]],
        [15, [...pairs(1, 3)]],
      ]);
      expect(await store.known(['r:g:alice', 'd:g:0:20260306', 'r:g:nobody'])).toEqual(
        new Set(['r:g:alice', 'd:g:0:20260306']),
      );
    });

    it('folds the rows into a base once and deletes exactly the rows it folded', async () => {
      const seen: SubjectCheckpoint[] = [];
      const folded = await store.compact('d:g:0:20260306', (c) => {
        seen.push(c);
        return { bitmap: new Uint8Array([7, 7]), state: 'folded' };
      });
      expect(folded).toBe(1);
      expect(seen[0]!.log).toHaveLength(1);
      expect(await store.withLog(['d:g:0:20260306', 'r:g:alice'])).toEqual(['r:g:alice']);
      expect(await store.compact('d:g:0:20260306', () => ({ bitmap: new Uint8Array(), state: 'never' }))).toBe(0);
      // a row appended after the fold stays beside the base until the next fold
      expect(
        Object.fromEntries(
          await store.append([{ subject: 'd:g:0:20260306', expiresAt: 5_000, atMs: 0, pairs: pairs(1, 4) }]),
        ),
      ).toEqual({
        'd:g:0:20260306': { log: 8, base: 2 },
      });
      const day = (await store.load(['d:g:0:20260306'])).get('d:g:0:20260306')!;
      expect(day.base).toEqual({ bitmap: new Uint8Array([7, 7]), state: 'folded' });
      expect(day.log.map((r) => [...r.pairs])).toEqual([[...pairs(1, 4)]]);
    });

    it('two folds of one subject at once fold each row once (the second finds nothing left)', async () => {
      await store.append([{ subject: 'r:g:bob', expiresAt: 9_000, atMs: 1, pairs: pairs(2, 5) }]);
      const counts = await Promise.all(
        [0, 1].map(() => store.compact('r:g:bob', (c) => ({ bitmap: new Uint8Array([c.log.length]), state: 's' }))),
      );
      expect(counts.sort()).toEqual([0, 1]);
      expect((await store.load(['r:g:bob'])).get('r:g:bob')!.base!.bitmap).toEqual(new Uint8Array([1]));
    });

    it('deletes expired subjects with their rows, and a forgotten one', async () => {
      expect(await store.expire(1_999)).toBe(0);
      expect(await store.expire(2_000)).toBe(1); // alice (expires at 2,000)
      expect((await store.load(['r:g:alice'])).size).toBe(0);
      await store.forget('r:g:bob');
      expect(await store.known(['r:g:bob', 'd:g:0:20260306'])).toEqual(new Set(['d:g:0:20260306']));
      const orphans = await sql.query<{ n: number | string }>(
        `SELECT count(*) AS n FROM seen_checkpoint_log WHERE subject NOT IN (SELECT subject FROM seen_checkpoints)`,
      );
      expect(Number(orphans[0]!.n)).toBe(0);
    });
  });
}
