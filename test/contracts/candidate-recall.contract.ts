/**
 * The CandidateRecall contract (src/for-you/recall.ts) for the parts the for-you feed serves from —
 * `fill` (the shared pool's build), `older` (the keyset walk), `matches` (`FRESHET_FOR_YOU_INTERESTS=index`),
 * `interestLexemes` and `pooled` (a publish patching the pool) — one suite for every adapter, adopted
 * through test/support/contract.ts. (`recall`, the single-statement window recall, has its contract in
 * content-store.contract.ts.) The factory returns both ports over an EMPTY dataset each time.
 *
 * Virtual time: a fixed `NOW` in 2016 (12:00 UTC, on a 6-hour band boundary); nothing reads the wall clock.
 */
import { itemInput } from '../support/items.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContentStore, ItemInput } from '../../src/kernel/items/content-store.js';
import {
  INTEREST_ITEM_WORDS,
  MATCH_SCAN_FACTOR,
  type CandidateRecall,
  type MatchQuery,
} from '../../src/for-you/recall.js';
import type { GaussDecay } from '../../src/for-you/decay.js';

/** What the contract needs: the content store to write items, the recall under test over the same data. */
export interface CandidateRecallHarness {
  content: ContentStore;
  recall: CandidateRecall;
  close(): Promise<void>;
}

const HOUR = 3_600_000;
const NOW = Date.UTC(2016, 0, 15, 12, 0, 0);
/** The config defaults: scale 48 h, offset 6 h, decay 0.5. */
const DECAY: GaussDecay = { scaleMs: 48 * HOUR, offsetMs: 6 * HOUR, decay: 0.5 };
const HORIZON = 100 * HOUR;

function item(id: string, o: Partial<ItemInput> & { ageH?: number } = {}): ItemInput {
  return itemInput(id, NOW, o);
}

const at = (ageH: number) => NOW - ageH * HOUR;
const ids = (list: readonly { id: string }[]) => list.map((c) => c.id);

export function candidateRecallContract(name: string, factory: () => Promise<CandidateRecallHarness>): void {
  describe(`CandidateRecall contract: ${name}`, () => {
    let h: CandidateRecallHarness;
    beforeEach(async () => {
      h = await factory();
    });
    afterEach(async () => {
      await h.close();
    });
    const put = (items: ItemInput[]) => h.content.upsertItems(items, NOW);
    const match = (o: Partial<MatchQuery>) =>
      h.recall.matches({
        readerId: 'reader',
        lexemes: [],
        nowMs: NOW,
        limit: 10,
        decay: DECAY,
        horizonMs: HORIZON,
        ...o,
      });

    describe('fill', () => {
      it('the window by decay × ln(2 + popularity), then the newest older items; the keyset continues below them', async () => {
        await put([
          item('w-pop', { ageH: 3, popularity: 100 }),
          item('w-fresh', { ageH: 0 }),
          item('w-mid', { ageH: 5, popularity: 5 }),
          item('old1', { ageH: 150 }),
          item('old2', { ageH: 200 }),
          item('old3', { ageH: 300 }),
          item('future', { ageH: -1, popularity: 1e6 }),
          item('gone', { ageH: 1, popularity: 1e6 }),
        ]);
        await h.content.deleteItem('gone', NOW);
        const q = { nowMs: NOW, decay: DECAY, horizonMs: HORIZON };
        const five = await h.recall.fill({ ...q, size: 5 });
        expect(ids(five.entries)).toEqual(['w-pop', 'w-mid', 'w-fresh', 'old1', 'old2']);
        expect(five.windowComplete).toBe(true);
        expect(five.next).toEqual([at(200), 'old2']);
        // window entries carry their score (within the offset the decay is 1) and every entry its lexemes
        expect(five.entries[0]!.score).toBeCloseTo(Math.log(102), 6);
        expect(five.entries.slice(3).every((e) => e.score === undefined)).toBe(true);
        expect(five.entries.every((e) => (e.lexemes ?? []).includes('titl'))).toBe(true);
        // a window larger than the pool: the pool is its best part and the keyset walk starts at now
        expect(await h.recall.fill({ ...q, size: 2 })).toMatchObject({ windowComplete: false, next: null });
        expect(ids((await h.recall.fill({ ...q, size: 2 })).entries)).toEqual(['w-pop', 'w-mid']);
        // the whole catalog fits: the keyset continues below the oldest entry
        expect((await h.recall.fill({ ...q, size: 50 })).next).toEqual([at(300), 'old3']);
      });

      it('a window without older items continues at its lower edge', async () => {
        await put([item('a', { ageH: 2 })]);
        expect(await h.recall.fill({ nowMs: NOW, decay: DECAY, horizonMs: HORIZON, size: 10 })).toMatchObject({
          windowComplete: true,
          next: [NOW - HORIZON, ''],
        });
      });
    });

    describe('older', () => {
      it('walks (published_at, id) desc in pages without overlap; never future or deleted items', async () => {
        await put([
          item('a', { ageH: 1 }),
          item('b', { ageH: 1 }),
          item('c', { ageH: 2 }),
          item('d', { ageH: 500 }),
          item('future', { ageH: -1 }),
          item('gone', { ageH: 3 }),
        ]);
        await h.content.deleteItem('gone', NOW);
        const first = await h.recall.older(NOW, null, 2);
        expect(ids(first)).toEqual(['b', 'a']); // equal times: id desc
        expect(first[0]).toEqual({ id: 'b', authorId: 'author', publishedAt: at(1) });
        expect(ids(await h.recall.older(NOW, [at(1), 'a'], 2))).toEqual(['c', 'd']);
        expect(await h.recall.older(NOW, [at(500), 'd'], 5)).toEqual([]);
        // a cursor after now (a request at an earlier virtual time) starts at now
        expect(ids(await h.recall.older(NOW, [NOW + 10 * HOUR, 'zz'], 1))).toEqual(['b']);
        expect(await h.recall.older(NOW, null, 0)).toEqual([]);
      });

      it("with the reader's lexemes, each row says how many of them it holds", async () => {
        await put([
          item('t1', { title: 'Rust compilers' }),
          item('t2', { title: 'Rust', ageH: 2 }),
          item('t3', { title: 'Gardening', ageH: 3 }),
        ]);
        const rows = await h.recall.older(NOW, null, 10, ['rust', 'compil', 'unused']);
        expect(rows.map((r) => [r.id, r.matched])).toEqual([
          ['t1', 2],
          ['t2', 1],
          ['t3', 0],
        ]);
        expect((await h.recall.older(NOW, null, 10)).every((r) => r.matched === undefined)).toBe(true);
      });
    });

    describe('matches', () => {
      it('window items holding a lexeme, best first by ts_rank × decay; never own, excluded, deleted or outside the window', async () => {
        await put([
          item('best', { title: 'Rust compilers in rust' }),
          item('good', { title: 'Rust', ageH: 2 }),
          item('body', { title: 'Weekly notes', text: 'some rust inside', ageH: 1 }),
          item('old', { title: 'Rust', ageH: 150 }),
          item('future', { title: 'Rust', ageH: -1 }),
          item('mine', { title: 'Rust', authorId: 'reader' }),
          item('blocked', { title: 'Rust', authorId: 'bad' }),
          item('dismissed', { title: 'Rust' }),
          item('gone', { title: 'Rust' }),
          item('other', { title: 'Gardening' }),
        ]);
        await h.content.deleteItem('gone', NOW);
        const lexemes = await h.recall.interestLexemes(['Rust', 'compilers'], []);
        expect(lexemes).toEqual(['compil', 'rust']);
        const exclusions = { authorIds: ['bad'], itemIds: ['dismissed'], authorWeights: new Map<string, number>() };
        const found = await match({ lexemes, exclusions });
        expect(ids(found)).toEqual(['best', 'good', 'body']);
        expect(found[0]).toEqual({ id: 'best', authorId: 'author', publishedAt: at(1) });
        expect(ids(await match({ lexemes }))).toEqual(expect.arrayContaining(['blocked', 'dismissed']));
        expect(ids(await match({ lexemes, exclusions, limit: 1 }))).toEqual(['best']);
        expect(await match({ lexemes: [] })).toEqual([]);
        expect(await match({ lexemes, limit: 0 })).toEqual([]);
      });

      it('a "not interested" author weighs less', async () => {
        await put([
          item('meh', { authorId: 'dull', title: 'rust', ageH: 1 }),
          item('ok', { authorId: 'fine', title: 'rust', ageH: 2 }),
        ]);
        const exclusions = { authorIds: [], itemIds: [], authorWeights: new Map([['dull', 0.3]]) };
        expect(ids(await match({ lexemes: ['rust'] }))).toEqual(['meh', 'ok']);
        expect(ids(await match({ lexemes: ['rust'], exclusions }))).toEqual(['ok', 'meh']);
      });

      it('a rare word is found at the far end of the window behind many newer items', async () => {
        await put([
          ...Array.from({ length: 40 }, (_, i) => item(`n${i}`, { title: 'common words', ageH: i * 2 })),
          item('far', { title: 'common niche', ageH: 95 }),
        ]);
        expect(ids(await match({ lexemes: ['nich'], limit: 5 }))).toEqual(['far']);
      });

      it(`ranks the first ${MATCH_SCAN_FACTOR} × limit matches met newest band first: a better, older match needs a larger limit`, async () => {
        // `strong` ranks first over the whole window (four title hits at 30 h against one hit within the
        // offset), but it sits three 6-hour bands below the two newest matches
        await put([
          item('new1', { title: 'common', ageH: 0.5 }),
          item('new2', { title: 'common', ageH: 0.5 }),
          item('strong', { title: 'common common common common', tags: ['common'], ageH: 30 }),
        ]);
        const all = await match({ lexemes: ['common'], limit: 3 });
        expect(ids(all)[0]).toBe('strong');
        const one = await match({ lexemes: ['common'], limit: 1 });
        expect(ids(one)).not.toContain('strong');
        expect(one).toHaveLength(1);
      });
    });

    describe('interestLexemes', () => {
      it('stems interest terms and drops stop words; adds the most frequent words of the given items', async () => {
        await put([item('seen', { title: 'Rust borrow checker', tags: ['compilers'] })]);
        expect(await h.recall.interestLexemes(['Running', 'the', 'databases'], [])).toEqual(['databas', 'run']);
        expect(await h.recall.interestLexemes(['running'], ['seen', 'unknown'])).toEqual([
          'borrow',
          'checker',
          'compil',
          'run',
          'rust',
        ]);
        expect(await h.recall.interestLexemes([], ['seen'])).toEqual(['borrow', 'checker', 'compil', 'rust']);
        expect(await h.recall.interestLexemes(['the', 'and'], [])).toEqual([]);
        expect(await h.recall.interestLexemes([], [])).toEqual([]);
      });

      it(`takes at most ${INTEREST_ITEM_WORDS} words from the items, the most frequent first`, async () => {
        const words = Array.from({ length: INTEREST_ITEM_WORDS + 10 }, (_, i) => `w${String(i).padStart(3, '0')}x`);
        await put([item('wordy', { title: words.join(' ') }), item('again', { title: 'w073x zeta' })]);
        const got = await h.recall.interestLexemes([], ['wordy', 'again']);
        expect(got).toHaveLength(INTEREST_ITEM_WORDS);
        expect(got).toContain('w073x'); // twice: ahead of the words met once
        expect(got).not.toContain('zeta');
      });
    });

    describe('pooled', () => {
      it('reads live items by id with popularity and lexemes; deleted and unknown ids are left out', async () => {
        await put([item('a', { title: 'Rust', popularity: 7.5 }), item('b', { ageH: 3 }), item('gone')]);
        await h.content.deleteItem('gone', NOW);
        const rows = await h.recall.pooled(['a', 'gone', 'nope', 'a', 'b']);
        expect(rows.map((r) => r.id).sort()).toEqual(['a', 'b']);
        const a = rows.find((r) => r.id === 'a')!;
        expect(a).toMatchObject({ authorId: 'author', publishedAt: at(1), popularity: 7.5 });
        expect(a.lexemes).toEqual(['rust']);
        expect(await h.recall.pooled([])).toEqual([]);
      });
    });
  });
}
