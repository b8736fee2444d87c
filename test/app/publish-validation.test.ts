/**
 * One check of published input (src/kernel/items/validate.ts): the same bad batch gets the same refusal —
 * the same code, the same field — from `POST /v1/items` and from the library's `publishItems`, and a
 * refused batch writes nothing anywhere (items, embeddings). The CLI import's rows go through the same
 * check (test/app/import-hn.test.ts checks its reasons).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FreshetError } from '../../src/kernel/errors.js';
import type { PublishInput } from '../../src/kernel/items/validate.js';
import { itemToRequestJson } from '../../src/cli/import.js';
import { SERVICE_KEY, startTestApp, T0, type TestApp } from '../support/app.js';

const DIM = 32;
const DAY = 86_400_000;

/** A good item at T0. */
function good(id: string, over: Partial<PublishInput> = {}): PublishInput {
  return {
    id,
    authorId: 'author_v',
    title: `title ${id}`,
    text: '',
    url: null,
    tags: [],
    publishedAt: T0 - 1000,
    popularity: 0,
    ...over,
  };
}

/** An item with its fields set apart from the typed shape (what a JavaScript caller can send). */
function raw(id: string, over: Record<string, unknown>): PublishInput {
  return { ...good(id), ...over } as unknown as PublishInput;
}

/** 20 bad batches: the bad item sits at a known place among good ones. */
const BAD: [string, PublishInput[]][] = [
  ['bad id', [good('v1'), raw('a:b', {})]],
  ['id "."', [raw('.', {})]],
  ['bad author', [good('v2'), raw('v3', { authorId: 'x y' })]],
  ['title too long', [raw('v4', { title: 'x'.repeat(1001) })]],
  ['NUL in title', [good('v5'), raw('v6', { title: 'a\u0000b' })]],
  ['NUL in text', [raw('v7', { text: 'a\u0000' })]],
  ['text too long', [raw('v8', { text: 'x'.repeat(100_001) })]],
  ['javascript: url', [raw('v9', { url: 'javascript:alert(1)' })]],
  ['url without host', [good('v10'), raw('v11', { url: 'http://' })]],
  ['url too long', [raw('v12', { url: `https://e.com/${'a'.repeat(2040)}` })]],
  ['33 tags', [raw('v13', { tags: Array.from({ length: 33 }, (_, i) => `t${i}`) })]],
  ['empty tag', [raw('v14', { tags: ['ok', ''] })]],
  ['tag too long', [raw('v15', { tags: ['x'.repeat(65)] })]],
  ['published next week', [good('v16'), raw('v17', { publishedAt: T0 + 7 * DAY })]],
  ['published after 2100', [raw('v18', { publishedAt: Date.UTC(2101, 0, 1) })]],
  ['embedding of the wrong length', [raw('v19', { embedding: [1, 2, 3] })]],
  ['embedding all zeros', [raw('v20', { embedding: new Array(DIM).fill(0) })]],
  ['embedding that overflows', [raw('v21', { embedding: new Array(DIM).fill(1e308) })]],
  ['embedding that underflows', [raw('v22', { embedding: new Array(DIM).fill(1e-320) })]],
  ['an id twice', [good('v23'), good('v24'), good('v23')]],
];

/**
 * The place a refusal names, as [index, field in snake_case]: `items[3].authorId` (library) and
 * `body/3/author_id` (HTTP) are both [3, 'author_id'].
 */
function placeOf(msg: string): [number, string] {
  const m = /^items\[(\d+)\]\.([A-Za-z_]+)/.exec(msg) ?? /^body\/(\d+)\/([A-Za-z_]+)/.exec(msg);
  if (!m) throw new Error(`the refusal names no field: ${msg}`);
  return [Number(m[1]), m[2]!.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

describe('one check of published items, the same refusal from every edge', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { FRESHET_EMBEDDING_DIM: String(DIM) } });
  });
  afterAll(async () => t?.close());

  it.each(BAD)(
    '%s: the library and POST /v1/items refuse it with the same code and field, writing nothing',
    async (_name, batch) => {
      const lib = await t.f.useCases.publishItems(batch, T0).then(
        () => null,
        (err: unknown) => err,
      );
      expect(lib).toBeInstanceOf(FreshetError);
      const libErr = lib as FreshetError;
      const body = batch.map((item) => ({
        ...itemToRequestJson(item),
        ...(item.embedding ? { embedding: [...item.embedding] } : {}),
      }));
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/items',
        payload: body,
        headers: { authorization: `Bearer ${SERVICE_KEY}` },
      });
      expect(res.statusCode).toBe(400);
      const http = res.json() as { code: number; msg: string };
      expect([http.code, placeOf(http.msg)]).toEqual([libErr.code, placeOf(libErr.message)]);
      // nothing of the batch was written: no item, no embedding
      const ids = batch.map((i) => i.id).filter((id) => /^[A-Za-z0-9_-]+$/.test(id));
      expect(await t.f.content.getItems(ids, { fresh: true })).toEqual([]);
      const [vectors] = await t.sql.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM item_embeddings WHERE item_id = ANY($1::text[])',
        [ids],
      );
      expect(vectors!.n).toBe(0);
    },
  );

  it('a good batch still goes through both edges', async () => {
    expect(await t.f.useCases.publishItems([good('ok1', { embedding: new Array(DIM).fill(0.5) })], T0)).toEqual({
      inserted: 1,
      updated: 0,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/items',
      payload: [itemToRequestJson(good('ok2'))],
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
    });
    expect(res.json()).toMatchObject({ code: 0, data: { inserted: 1 } });
  });
});
