/**
 * Numbers in query strings, on both store pairs: every integer or number query parameter of the served
 * OpenAPI document documents a range, and a value outside it — written as an exponent that overflows to
 * Infinity (`1e400`, `-1e400`), as `Infinity`, or as a finite number past a bound — is 400 / 40001 naming
 * the parameter, never served (`?limit=1e400` once answered the whole catalog on discover and a 500 on hot).
 * The routes are read from the document, so a new route with a number in its query is checked too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_KEY, item, startTestApp, type TestApp, type TestAppOptions } from '../support/app.js';
import { loadOperations, type Operation, type Param } from '../support/openapi.js';

const svc = { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-reader': 'qn_reader' };

/** The operation's URL with its path parameters filled in and `query` appended. */
function urlOf(op: Operation, query: Record<string, string>): string {
  const path = op.path.replace('{feed}', 'discover').replace(/\{[a-z_]+\}/g, 'qn_reader');
  const required = op.params.filter((p) => p.in === 'query' && p.required && !(p.name in query));
  const all = { ...Object.fromEntries(required.map((p) => [p.name, 'qn_1'])), ...query };
  return `${path}?${new URLSearchParams(all).toString()}`;
}

/** The query parameters typed integer or number. */
function numberParams(op: Operation): Param[] {
  return op.params.filter((p) => p.in === 'query' && (p.schema.type === 'integer' || p.schema.type === 'number'));
}

describe.each<[string, TestAppOptions]>([
  ['PGlite + in-process', { db: 'pglite', hot: 'memory' }],
  ['PostgreSQL + Redis', { db: 'postgres', hot: 'redis' }],
])('query-string numbers on %s', (_name, opts) => {
  let t: TestApp;
  let ops: Operation[];
  beforeAll(async () => {
    t = await startTestApp(opts);
    await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      headers: svc,
      payload: Array.from({ length: 30 }, (_, i) => item(`qn_${i + 1}`, 60_000 * (i + 1), { author_id: `a${i % 4}` })),
    });
    ops = (await loadOperations(t.app)).filter((op) => numberParams(op).length > 0);
  });
  afterAll(async () => t?.close());

  it('every number in a query string documents its range', () => {
    expect(ops.length).toBeGreaterThanOrEqual(7);
    for (const op of ops)
      for (const p of numberParams(op)) {
        expect(typeof p.schema.minimum, `${op.key} ${p.name}: minimum`).toBe('number');
        expect(typeof p.schema.maximum, `${op.key} ${p.name}: maximum`).toBe('number');
      }
  });

  it('1e400, -1e400, Infinity and values past a bound are 400 / 40001 naming the parameter', async () => {
    for (const op of ops)
      for (const p of numberParams(op)) {
        const max = p.schema.maximum as number;
        const min = p.schema.minimum as number;
        for (const value of [
          '1e400',
          '-1e400',
          'Infinity',
          '-Infinity',
          '1e309',
          String(max + 1),
          `${max}1`,
          String(min - 1),
        ]) {
          const res = await t.app.inject({ method: op.method, url: urlOf(op, { [p.name]: value }), headers: svc });
          const where = `${op.key}?${p.name}=${value}`;
          expect(res.statusCode, `${where}: ${res.body.slice(0, 200)}`).toBe(400);
          expect(res.json(), where).toMatchObject({ code: 40001, data: null });
          expect(res.json().msg, where).toContain(`query parameter ${p.name}`);
        }
        // a value inside the range, in exponent form, is still that number
        const ok = await t.app.inject({ method: op.method, url: urlOf(op, { [p.name]: '1e1' }), headers: svc });
        expect(ok.statusCode, `${op.key}?${p.name}=1e1: ${ok.body.slice(0, 200)}`).not.toBe(400);
      }
  });

  it('the message says what is allowed and what was sent', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/hot?limit=1e400', headers: svc });
    expect(res.statusCode).toBe(400);
    expect(res.json().msg).toBe('query parameter limit must be an integer from 1 to 100 (got "1e400")');
    const page = await t.app.inject({ method: 'GET', url: '/v1/feeds/discover?limit=1e1', headers: svc });
    expect(page.statusCode).toBe(200);
    expect(page.json().data.items).toHaveLength(10);
  });
});
