/**
 * Group commit (src/kernel/sql/coalesced-writes.ts) on a real PostgreSQL table: writes handed in while a
 * statement is in flight leave together in the next one, every caller resolves once its rows are in,
 * and a group that fails is written again caller by caller, so only the caller with the bad row fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { CoalescedWrites } from '../../src/kernel/sql/coalesced-writes.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../support/env.js';

const schema = uniqueSchema();
let sql: Sql;

beforeAll(async () => {
  sql = await openPostgres(TEST_DATABASE_URL, { schema });
  await sql.exec('CREATE TABLE cw (id int PRIMARY KEY CHECK (id >= 0))');
});

afterAll(async () => {
  await sql.exec(`DROP SCHEMA ${schema} CASCADE`);
  await sql.close();
});

/** A writer that inserts ids (ignoring repeats) and records the size of every statement. */
function writer(statements: number[], maxRows?: number): CoalescedWrites<number> {
  return new CoalescedWrites<number>(async (ids) => {
    statements.push(ids.length);
    await sql.query(`INSERT INTO cw (id) SELECT unnest($1::int[]) ON CONFLICT DO NOTHING`, [ids]);
  }, maxRows);
}

describe('CoalescedWrites', () => {
  it('joins the writes that wait behind a statement, and resolves each once written', async () => {
    const statements: number[] = [];
    const w = writer(statements);
    await Promise.all(Array.from({ length: 50 }, (_, i) => w.write([1000 + i])));
    const rows = await sql.query<{ n: string }>('SELECT count(*) AS n FROM cw WHERE id BETWEEN 1000 AND 1049');
    expect(Number(rows[0]!.n)).toBe(50);
    expect(statements.reduce((a, b) => a + b, 0)).toBe(50);
    expect(statements[0]).toBe(1); // the first write starts at once
    expect(statements.length).toBeLessThan(10); // the other 49 shared a few statements
  });

  it('keeps groups within maxRows', async () => {
    const statements: number[] = [];
    const w = writer(statements, 3);
    await Promise.all(Array.from({ length: 10 }, (_, i) => w.write([2000 + 2 * i, 2001 + 2 * i])));
    expect(Math.max(...statements)).toBeLessThanOrEqual(3);
    expect(statements.reduce((a, b) => a + b, 0)).toBe(20);
  });

  it('fails only the caller whose row is refused', async () => {
    const statements: number[] = [];
    const w = writer(statements);
    const first = w.write([3000]); // in flight while the others queue
    const results = await Promise.allSettled([first, w.write([3001]), w.write([-1]), w.write([3002, 3003])]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const rows = await sql.query<{ id: number }>('SELECT id FROM cw WHERE id BETWEEN 3000 AND 3999 ORDER BY id');
    expect(rows.map((r) => r.id)).toEqual([3000, 3001, 3002, 3003]);
  });
});
