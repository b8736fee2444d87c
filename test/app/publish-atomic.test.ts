/**
 * A refused publish writes nothing anywhere (issue 21.3): items and their discover embeddings commit in
 * one PostgreSQL transaction. The scenario on PGlite and on the PostgreSQL server — publish L
 * (with a client embedding), delete D, then `POST /v1/items [L with another embedding, NEW, D]` —
 * answers 409 and leaves L's vector and source, D's row and the absence of NEW's row exactly as they
 * were; a batch refused by the item check (a NUL in a title) names the field and writes no vector; and
 * embedding rows without an item (left by crashes of earlier versions) are swept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_KEY, item, startTestApp, type TestApp, type TestAppOptions } from '../support/app.js';

const svc = { authorization: `Bearer ${SERVICE_KEY}` };
const DIM = 8;

/** Every embedding row, as text (vector bytes in hex), by item id. */
async function vectors(t: TestApp): Promise<Record<string, string>> {
  const rows = await t.sql.query<{ item_id: string; row: string }>(
    `SELECT item_id, encode(vec, 'hex') || ' ' || source || ' ' || update_time AS row FROM item_embeddings ORDER BY item_id`,
  );
  return Object.fromEntries(rows.map((r) => [r.item_id, r.row]));
}

const unit = (i: number) => Array.from({ length: DIM }, (_, k) => (k === i ? 1 : 0));

describe.each<[string, TestAppOptions]>([
  ['PGlite', { db: 'pglite' }],
  ['PostgreSQL', { db: 'postgres' }],
])('publish is all or nothing, vectors included, on %s', (_name, opts) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ...opts, env: { FRESHET_EMBEDDING_DIM: String(DIM) } });
  });
  afterAll(async () => t?.close());

  const post = (payload: object) => t.app.inject({ method: 'POST', url: '/v1/items', headers: svc, payload });

  it('a batch refused for a deleted id (409) leaves every vector as it was: L unchanged, no NEW, D unchanged', async () => {
    expect((await post([item('L', 1000, { embedding: unit(0) }), item('D', 2000)])).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/items/D', headers: svc })).statusCode).toBe(200);
    const before = await vectors(t);
    expect(Object.keys(before)).toEqual(['D', 'L']);
    expect(before.L).toMatch(/ client /);

    const res = await post([item('L', 1000, { embedding: unit(1) }), item('NEW', 500), item('D', 2000)]);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 40901 });
    expect(res.json().msg).toMatch(/nothing of this batch was written/);
    expect(await vectors(t)).toEqual(before);
    const items = await t.sql.query<{ id: string }>(`SELECT id FROM items ORDER BY id`);
    expect(items.map((r) => r.id)).toEqual(['D', 'L']);
  });

  it('a batch refused by the item check (a NUL in a title) names the field and writes no vector', async () => {
    const before = await vectors(t);
    const res = await post([item('L', 1000, { embedding: unit(2) }), item('NUL', 500, { title: 'a\u0000b' })]);
    expect(res.statusCode).toBe(400);
    expect(res.json().msg).toMatch(/title/);
    expect(await vectors(t)).toEqual(before);
  });

  it('a batch whose vectors fail to write writes no item either', async () => {
    const before = await vectors(t);
    const count = async () => (await t.sql.query<{ n: string }>(`SELECT count(*)::text AS n FROM items`))[0]!.n;
    const itemsBefore = await count();
    // the store refuses the vector row (a trigger, a real PostgreSQL error) after the items were written
    await t.sql.query(`CREATE FUNCTION refuse_vector() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.item_id = 'FAILS' THEN RAISE EXCEPTION 'vector refused'; END IF; RETURN NEW; END $$`);
    await t.sql.query(
      `CREATE TRIGGER refuse_vector BEFORE INSERT ON item_embeddings FOR EACH ROW EXECUTE FUNCTION refuse_vector()`,
    );
    try {
      const res = await post([item('OK_TOO', 100), item('FAILS', 200, { embedding: unit(3) })]);
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
    } finally {
      await t.sql.query(`DROP TRIGGER refuse_vector ON item_embeddings`);
      await t.sql.query(`DROP FUNCTION refuse_vector()`);
    }
    expect(await count()).toBe(itemsBefore);
    expect(await vectors(t)).toEqual(before);
  });

  it('embedding rows whose item does not exist are swept; the others stay', async () => {
    const before = await vectors(t);
    await t.sql.query(
      `INSERT INTO item_embeddings (item_id, dim, vec, source, update_time, changed)
       SELECT 'orphan_' || g, ${DIM}, '\\x0102030405060708'::bytea, 'client', 0, pg_current_xact_id()
       FROM generate_series(1, 1500) g`,
    );
    expect(Object.keys(await vectors(t))).toHaveLength(Object.keys(before).length + 1500);
    expect(await t.f.discover.embeddings.sweepOrphans()).toBe(1500);
    expect(await vectors(t)).toEqual(before);
  });
});
