/**
 * The ContentStore + CandidateRecall contract (src/kernel/items/content-store.ts, src/for-you/recall.ts), one suite for every
 * adapter (adopted through test/support/contract.ts). The factory must return a store over an
 * EMPTY dataset each time it is called (before each test); the suite closes it after each test.
 *
 * Everything runs on virtual time (a fixed `NOW` in 2016, like the HN replays): nothing here
 * reads the wall clock, so "future" items are future relative to the query's `nowMs`.
 * Text matching uses exact words only (no stemming), so any reasonable relevance function passes.
 */
import { itemInput } from '../support/items.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContentStore, ItemInput } from '../../src/kernel/items/content-store.js';
import type { CandidateRecall, RecallQuery } from '../../src/for-you/recall.js';
import type { GaussDecay } from '../../src/for-you/decay.js';
import { ErrorCodes } from '../../src/kernel/errors.js';

/** What the contract needs: both ports on one object. */
export type ContentStoreUnderTest = ContentStore & Pick<CandidateRecall, 'recall'>;

const HOUR = 3_600_000;
const NOW = Date.UTC(2016, 0, 15, 12, 0, 0);
/** The config defaults: scale 48 h, offset 6 h, decay 0.5. */
const DECAY: GaussDecay = { scaleMs: 48 * HOUR, offsetMs: 6 * HOUR, decay: 0.5 };
/** A steep decay (no offset) where age dominates. */
const STEEP: GaussDecay = { scaleMs: 10 * HOUR, offsetMs: 0, decay: 0.5 };

function item(id: string, o: Partial<ItemInput> & { ageH?: number } = {}): ItemInput {
  // lang en: English stemming (migration 12: an item's vector is built in its language's configuration)
  return itemInput(id, NOW, { url: `https://example.com/${id}`, lang: 'en', ...o });
}

function query(o: Partial<RecallQuery> = {}): RecallQuery {
  return { readerId: 'reader', interests: [], nowMs: NOW, limit: 500, decay: DECAY, horizonMs: 100 * HOUR, ...o };
}

const invalidInput = { code: ErrorCodes.INVALID_INPUT.code };

export function contentStoreContract(name: string, factory: () => Promise<ContentStoreUnderTest>): void {
  describe(`ContentStore contract: ${name}`, () => {
    let store: ContentStoreUnderTest;
    beforeEach(async () => {
      store = await factory();
    });
    afterEach(async () => {
      await store.close();
    });

    describe('upsertItems', () => {
      it('counts inserts, then updates when the same ids come again (idempotent by id)', async () => {
        const batch = [item('a'), item('b'), item('c')];
        expect(await store.upsertItems(batch, NOW)).toEqual({ inserted: 3, updated: 0 });
        expect(await store.upsertItems(batch, NOW + 1)).toEqual({ inserted: 0, updated: 3 });
        expect(await store.upsertItems([item('c'), item('d')], NOW + 2)).toEqual({ inserted: 1, updated: 1 });
        expect(await store.countItems()).toBe(4);
        expect(await store.upsertItems([], NOW)).toEqual({ inserted: 0, updated: 0 });
      });

      it('stores every field and sets updateTime to nowMs', async () => {
        const a = item('a', {
          authorId: 'u_1',
          title: 'Héllo wörld',
          text: 'body',
          url: null,
          tags: ['x', 'y'],
          popularity: 12.5,
        });
        await store.upsertItems([a], NOW + 7);
        expect(await store.getItems(['a'])).toEqual([{ ...a, updateTime: NOW + 7 }]);
      });

      it('an update replaces the fields and the updateTime', async () => {
        await store.upsertItems([item('a', { title: 'old', tags: ['t'], popularity: 1 })], NOW);
        const next = item('a', {
          title: 'new',
          text: 'more',
          url: null,
          tags: [],
          popularity: 9,
          ageH: 3,
          authorId: 'u2',
        });
        await store.upsertItems([next], NOW + 60_000);
        expect(await store.getItems(['a'])).toEqual([{ ...next, updateTime: NOW + 60_000 }]);
      });

      it('an id repeated inside one batch refuses the batch (the one batch rule), writing nothing', async () => {
        await expect(
          store.upsertItems([item('a', { title: 'first' }), item('b'), item('a', { title: 'second' })], NOW),
        ).rejects.toMatchObject({
          ...invalidInput,
          message: expect.stringMatching(/^items\[2\]\.id "a" repeats items\[0\]\.id/),
        });
        expect(await store.countItems()).toBe(0);
      });

      it('is all-or-nothing: one row with a missing required field writes nothing', async () => {
        await store.upsertItems([item('a', { title: 'kept' })], NOW);
        const bad = { ...item('bad'), authorId: null } as unknown as ItemInput;
        await expect(
          store.upsertItems([item('a', { title: 'changed' }), item('b'), bad, item('c')], NOW + 1),
        ).rejects.toMatchObject(invalidInput);
        expect(await store.countItems()).toBe(1);
        expect(await store.getItems(['a', 'b', 'bad', 'c'])).toEqual([
          { ...item('a', { title: 'kept' }), updateTime: NOW },
        ]);
      });

      it('is all-or-nothing for a large batch whose bad row comes late (non-integer publishedAt)', async () => {
        const batch = Array.from({ length: 1200 }, (_, i) => item(`i${i}`));
        batch[1100] = item('i1100', { publishedAt: NOW + 0.5 });
        await expect(store.upsertItems(batch, NOW)).rejects.toMatchObject(invalidInput);
        expect(await store.countItems()).toBe(0);
        batch[1100] = item('i1100');
        expect(await store.upsertItems(batch, NOW)).toEqual({ inserted: 1200, updated: 0 });
        expect(await store.countItems()).toBe(1200);
      });

      it('rejects negative, NaN and infinite popularity and malformed ids', async () => {
        for (const bad of [
          item('p1', { popularity: -1 }),
          item('p2', { popularity: Number.NaN }),
          item('p3', { popularity: Number.POSITIVE_INFINITY }),
          item('has space'),
          item('x', { authorId: 'a:b' }),
        ]) {
          await expect(store.upsertItems([item('ok'), bad], NOW)).rejects.toMatchObject(invalidInput);
        }
        expect(await store.countItems()).toBe(0);
      });
    });

    describe('deleteItem', () => {
      it('soft-deletes: true once, then false; unknown ids false; hidden from getItems and countItems', async () => {
        await store.upsertItems([item('a'), item('b')], NOW);
        expect(await store.deleteItem('a', NOW + 1)).toBe(true);
        expect(await store.deleteItem('a', NOW + 2)).toBe(false);
        expect(await store.deleteItem('nope', NOW + 2)).toBe(false);
        expect((await store.getItems(['a', 'b'])).map((i) => i.id)).toEqual(['b']);
        expect(await store.countItems()).toBe(1);
      });

      it('a deleted id is never reused: an upsert naming it is refused whole (ITEM_DELETED) and writes nothing', async () => {
        await store.upsertItems([item('a')], NOW);
        await store.deleteItem('a', NOW + 1);
        await expect(store.upsertItems([item('b'), item('a', { title: 'again' })], NOW + 2)).rejects.toMatchObject({
          name_: 'ITEM_DELETED',
          code: 40901,
        });
        expect(await store.getItems(['a', 'b'])).toEqual([]);
        expect(await store.recall(query())).toEqual([]);
        expect(await store.upsertItems([item('b')], NOW + 3)).toEqual({ inserted: 1, updated: 0 });
      });
    });

    describe('getItems', () => {
      it('returns items in the order asked, skipping unknown ids', async () => {
        await store.upsertItems([item('a'), item('b'), item('c')], NOW);
        expect((await store.getItems(['c', 'zz', 'a', 'b'])).map((i) => i.id)).toEqual(['c', 'a', 'b']);
        expect(await store.getItems([])).toEqual([]);
        expect(await store.getItems(['zz'])).toEqual([]);
      });
    });

    describe('interests', () => {
      it('normalizes to lower-case [a-z0-9]+ words, deduplicated, in order', async () => {
        await store.setInterests('r1', ['Rust', 'rust', 'Go-Lang', 'C++', '  ', 'Émigré', '&|!:*()', 'web3'], NOW);
        expect(await store.getInterests('r1')).toEqual(['rust', 'go', 'lang', 'c', 'emigre', 'web3']);
      });

      it('replaces the previous terms, keeps readers apart, and [] when none', async () => {
        await store.setInterests('r1', ['one', 'two'], NOW);
        await store.setInterests('r2', ['other'], NOW);
        await store.setInterests('r1', ['three'], NOW + 1);
        expect(await store.getInterests('r1')).toEqual(['three']);
        expect(await store.getInterests('r2')).toEqual(['other']);
        expect(await store.getInterests('r3')).toEqual([]);
        await store.setInterests('r2', [], NOW + 2);
        expect(await store.getInterests('r2')).toEqual([]);
      });

      it('keeps at most 100 terms', async () => {
        const terms = Array.from({ length: 150 }, (_, i) => `w${i}`);
        expect(await store.getInterests('r1')).toEqual([]);
        await store.setInterests('r1', terms, NOW);
        expect(await store.getInterests('r1')).toEqual(terms.slice(0, 100));
      });
    });

    describe('recall', () => {
      it('keeps only [now - horizon, now]: future items are never recalled', async () => {
        const h = 50 * HOUR;
        await store.upsertItems(
          [
            item('future', { publishedAt: NOW + 1, title: 'rust' }),
            item('now', { publishedAt: NOW, title: 'rust' }),
            item('edge', { publishedAt: NOW - h, title: 'rust' }),
            item('old', { publishedAt: NOW - h - 1, title: 'rust' }),
          ],
          NOW,
        );
        expect(await store.recall(query({ horizonMs: h }))).toEqual(['now', 'edge']);
        expect(await store.recall(query({ horizonMs: h, interests: ['rust'] }))).toEqual(['now', 'edge']);
        // One ms later, the "future" item is in range and "edge" has aged out.
        expect(await store.recall(query({ horizonMs: h, nowMs: NOW + 1 }))).toEqual(['future', 'now']);
      });

      it("never returns the reader's own items", async () => {
        await store.upsertItems(
          [item('mine', { authorId: 'reader', title: 'rust' }), item('theirs', { title: 'rust' })],
          NOW,
        );
        expect(await store.recall(query())).toEqual(['theirs']);
        expect(await store.recall(query({ interests: ['rust'] }))).toEqual(['theirs']);
        expect(await store.recall(query({ readerId: 'someone' }))).toHaveLength(2);
      });

      it('never returns deleted items', async () => {
        await store.upsertItems([item('a', { title: 'rust' }), item('b', { title: 'rust' })], NOW);
        await store.deleteItem('a', NOW);
        expect(await store.recall(query({ interests: ['rust'] }))).toEqual(['b']);
        expect(await store.recall(query())).toEqual(['b']);
      });

      it('relevance beats recency when both are within the offset (equal decay)', async () => {
        await store.upsertItems(
          [
            item('both', { title: 'rust wasm', ageH: 3 }),
            item('one', { title: 'rust cooking', ageH: 1 }),
            item('none', { title: 'gardening', ageH: 0, popularity: 1000 }),
          ],
          NOW,
        );
        expect(await store.recall(query({ interests: ['rust', 'wasm'] }))).toEqual(['both', 'one', 'none']);
      });

      it('decay beats relevance when the better match is far older', async () => {
        await store.upsertItems(
          [item('both', { title: 'rust wasm', ageH: 60 }), item('one', { title: 'rust cooking', ageH: 1 })],
          NOW,
        );
        expect(await store.recall(query({ interests: ['rust', 'wasm'], decay: STEEP }))).toEqual(['one', 'both']);
      });

      it('orders equally relevant items by decay: newer first', async () => {
        const ages = [30, 2, 17, 9, 50];
        await store.upsertItems(
          ages.map((ageH) => item(`age${ageH}`, { title: 'rust news', ageH })),
          NOW,
        );
        expect(await store.recall(query({ interests: ['rust'], decay: STEEP }))).toEqual([
          'age2',
          'age9',
          'age17',
          'age30',
          'age50',
        ]);
      });

      it('without interests ranks by decay × log(2 + popularity)', async () => {
        await store.upsertItems(
          [
            item('popular', { ageH: 3, popularity: 100 }),
            item('fresh', { ageH: 0, popularity: 0 }),
            item('mid', { ageH: 5, popularity: 5 }),
            item('stale', { ageH: 90, popularity: 1e6 }),
          ],
          NOW,
        );
        // Default decay: within the 6 h offset G = 1, so ln(2 + popularity) decides (popular 4.62,
        // mid 1.95, fresh 0.69); at 90 h G ≈ 0.120, so stale scores 0.120 × ln(1e6 + 2) ≈ 1.65.
        expect(await store.recall(query())).toEqual(['popular', 'mid', 'stale', 'fresh']);
        // Steep decay (scale 10 h, no offset): G(90 h) ≈ 4e-25, so stale is worth nothing.
        expect(await store.recall(query({ decay: STEEP }))).toEqual(['popular', 'mid', 'fresh', 'stale']);
      });

      it('fills with decay × popularity when the interests match fewer than limit, without repeats', async () => {
        await store.upsertItems(
          [
            item('m1', { title: 'rust', ageH: 2 }),
            item('m2', { title: 'rust', ageH: 4, popularity: 0 }),
            item('p-low', { title: 'go', ageH: 0, popularity: 1 }),
            item('p-high', { title: 'go', ageH: 3, popularity: 500 }),
            item('p-mid', { title: 'go', ageH: 1, popularity: 20 }),
          ],
          NOW,
        );
        const ids = await store.recall(query({ interests: ['rust'], limit: 4 }));
        expect(ids).toEqual(['m1', 'm2', 'p-high', 'p-mid']);
        const all = await store.recall(query({ interests: ['rust'], limit: 50 }));
        expect(all).toEqual(['m1', 'm2', 'p-high', 'p-mid', 'p-low']);
        expect(new Set(all).size).toBe(all.length);
      });

      it('takes interests from the titles and tags of interestItemIds too (viewed or engaged items)', async () => {
        await store.upsertItems(
          [
            item('seen-rust', { title: 'Rust borrow checker explained', ageH: 30 }),
            item('seen-tag', { title: 'Weekly notes', tags: ['compilers'], ageH: 30 }),
            item('rust-new', { title: 'Async rust in practice', ageH: 2 }),
            item('compiler-new', { title: 'Writing compilers for fun', ageH: 3 }),
            item('popular', { title: 'Gardening', ageH: 1, popularity: 900 }),
          ],
          NOW,
        );
        // without them, popularity leads; with them, the items sharing their words come first
        expect((await store.recall(query({ limit: 5 })))[0]).toBe('popular');
        const ids = await store.recall(query({ interestItemIds: ['seen-rust', 'seen-tag'], limit: 5 }));
        expect(ids.slice(0, 4).sort()).toEqual(['compiler-new', 'rust-new', 'seen-rust', 'seen-tag']);
        // as a feed asks: the viewed items themselves excluded
        const exclusions = {
          authorIds: [],
          itemIds: ['seen-rust', 'seen-tag'],
          authorWeights: new Map<string, number>(),
        };
        const fresh = await store.recall(query({ interestItemIds: ['seen-rust', 'seen-tag'], exclusions, limit: 5 }));
        expect(fresh).toEqual(expect.arrayContaining(['compiler-new', 'rust-new']));
        expect(fresh.slice(0, 2).sort()).toEqual(['compiler-new', 'rust-new']);
        expect(fresh).toHaveLength(3);
        // OR-ed with explicit interests; unknown ids add nothing and break nothing
        const both = await store.recall(
          query({ interests: ['gardening'], interestItemIds: ['seen-rust', 'nope'], limit: 5 }),
        );
        expect(both.slice(0, 3).sort()).toEqual(['popular', 'rust-new', 'seen-rust']);
        expect(await store.recall(query({ interestItemIds: ['nope'], limit: 1 }))).toEqual(['popular']);
      });

      it('interests together with a "not interested" author weight: the weighted author sinks, nothing fails', async () => {
        await store.upsertItems(
          [
            item('meh', { authorId: 'dull', title: 'rust', ageH: 1 }),
            item('ok', { authorId: 'fine', title: 'rust', ageH: 2 }),
          ],
          NOW,
        );
        const exclusions = { authorIds: [], itemIds: [], authorWeights: new Map([['dull', 0.3]]) };
        expect(await store.recall(query({ interests: ['rust'], exclusions }))).toEqual(['ok', 'meh']);
        expect(await store.recall(query({ interestItemIds: ['ok'], exclusions }))).toEqual(['ok', 'meh']);
      });

      it('respects the limit and never repeats an id', async () => {
        const items = Array.from({ length: 40 }, (_, i) =>
          item(`i${String(i).padStart(2, '0')}`, { title: i % 4 === 0 ? 'rust' : 'other', ageH: i, popularity: i }),
        );
        await store.upsertItems(items, NOW);
        for (const limit of [1, 5, 10, 15, 39, 40, 100]) {
          const ids = await store.recall(query({ interests: ['rust'], limit }));
          expect(ids).toHaveLength(Math.min(limit, 40));
          expect(new Set(ids).size).toBe(ids.length);
          expect(ids.slice(0, Math.min(limit, 10)).every((id) => Number(id.slice(1)) % 4 === 0)).toBe(true);
        }
        expect(await store.recall(query({ limit: 0 }))).toEqual([]);
      });

      it('is deterministic: ties break by publishedAt desc, then id asc', async () => {
        await store.upsertItems(
          [item('b', { ageH: 1 }), item('a', { ageH: 1 }), item('c', { ageH: 2 }), item('d', { ageH: 0.5 })],
          NOW,
        );
        expect(await store.recall(query())).toEqual(['d', 'a', 'b', 'c']);
        expect(await store.recall(query({ interests: ['title'] }))).toEqual(['d', 'a', 'b', 'c']);
      });

      it('treats tsquery syntax in interests as plain text (no injection, no error)', async () => {
        await store.upsertItems([item('r', { title: 'rust' }), item('o', { title: 'other', popularity: 50 })], NOW);
        const odd = ['rust & | ! :* ( )', "'); DROP TABLE items; --", '\\', '<->', "o'"];
        expect(await store.recall(query({ interests: odd }))).toEqual(['r', 'o']);
        expect(await store.recall(query({ interests: ['& | ! :* ( ) <-> \\'] }))).toEqual(['o', 'r']);
        await store.setInterests('reader', odd, NOW);
        expect(await store.getInterests('reader')).toEqual(['rust', 'drop', 'table', 'items', 'o']);
        expect(await store.countItems()).toBe(2);
      });
    });
  });
}
