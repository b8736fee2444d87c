/**
 * The exclusions ports' contracts (src/exclusions/ports.ts), one suite per port, run against every
 * adapter (adopted through test/support/contract.ts). Each factory call gives a subject over an empty store.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/kernel/clock.js';
import type { ExclusionCache, ExclusionCacheSettings, ExclusionStore } from '../../src/exclusions/ports.js';
import type { ContentStore } from '../../src/kernel/items/content-store.js';
import type { Preferences } from '../../src/exclusions/preferences.js';

const T = Date.UTC(2026, 2, 5);
const SETTINGS: ExclusionCacheSettings = { recentViews: 10, recentViewsTtlMs: 7 * DAY_MS, durableTtlMs: 3_600_000 };
const DURABLE = { engaged: ['e1'], notInterested: [{ itemId: 'n1', authorId: 'a1', atMs: T }], blockedAuthors: ['b1'] };

export interface CacheHarness {
  cache: ExclusionCache;
  /** Round trips sent to the store so far (omit for in-process stores). */
  commands?: () => number;
}

async function withCache(
  factory: (s: ExclusionCacheSettings) => Promise<CacheHarness>,
  body: (h: CacheHarness) => Promise<void>,
) {
  const h = await factory(SETTINGS);
  try {
    await body(h);
  } finally {
    await h.cache.close();
  }
}

/** Registers the ExclusionCache contract. */
export function exclusionCacheContract(
  name: string,
  factory: (s: ExclusionCacheSettings) => Promise<CacheHarness>,
): void {
  describe(`ExclusionCache contract: ${name}`, () => {
    it('keeps the last N items viewed newest first, each once (a repeat moves to the front), per reader', async () => {
      await withCache(factory, async ({ cache }) => {
        const views = Array.from({ length: 12 }, (_, i) => ({ readerId: 'alice', itemId: `i${i}` }));
        await cache.pushViews(views, T);
        await cache.pushViews(
          [
            { readerId: 'alice', itemId: 'i11' },
            { readerId: 'bob', itemId: 'x' },
          ],
          T + 1,
        );
        const a = await cache.read('alice', T + 2);
        // i11 viewed again moves to the front instead of pushing i2 out: i11, i10, … i2 (10 entries)
        expect(a.recentViews).toEqual(['i11', 'i10', 'i9', 'i8', 'i7', 'i6', 'i5', 'i4', 'i3', 'i2']);
        // an older item viewed again comes first, the others keep their order
        await cache.pushViews([{ readerId: 'alice', itemId: 'i5' }], T + 3);
        expect((await cache.read('alice', T + 4)).recentViews).toEqual([
          'i5',
          'i11',
          'i10',
          'i9',
          'i8',
          'i7',
          'i6',
          'i4',
          'i3',
          'i2',
        ]);
        expect((await cache.read('bob', T + 2)).recentViews).toEqual(['x']);
        expect((await cache.read('carol', T)).recentViews).toEqual([]);
      });
    });

    it('forgets the views 7 days after the last one (virtual time), each view refreshing it', async () => {
      await withCache(factory, async ({ cache }) => {
        await cache.pushViews([{ readerId: 'r', itemId: 'a' }], T);
        await cache.pushViews([{ readerId: 'r', itemId: 'b' }], T + 6 * DAY_MS);
        expect((await cache.read('r', T + 13 * DAY_MS - 1)).recentViews).toEqual(['b', 'a']);
        expect((await cache.read('r', T + 13 * DAY_MS)).recentViews).toEqual([]);
        await cache.pushViews([{ readerId: 'r', itemId: 'c' }], T + 14 * DAY_MS);
        expect((await cache.read('r', T + 14 * DAY_MS)).recentViews).toEqual(['c']);
      });
    });

    it('caches durable exclusions, refuses a fill that raced an invalidation', async () => {
      await withCache(factory, async ({ cache }) => {
        const first = await cache.read('r', T);
        expect(first.durable).toBeNull();
        expect(await cache.fill('r', first.generation, DURABLE)).toBe(true);
        expect((await cache.read('r', T)).durable).toEqual(DURABLE);
        const stale = await cache.read('r', T);
        await cache.invalidate('r');
        expect((await cache.read('r', T)).durable).toBeNull();
        expect(await cache.fill('r', stale.generation, DURABLE)).toBe(false); // loaded before the write
        expect((await cache.read('r', T)).durable).toBeNull();
        const fresh = await cache.read('r', T);
        expect(await cache.fill('r', fresh.generation, { ...DURABLE, engaged: [] })).toBe(true);
        expect((await cache.read('r', T)).durable!.engaged).toEqual([]);
      });
    });

    it('reads a reader in one round trip; invalidation keeps the recent views', async () => {
      await withCache(factory, async ({ cache, commands }) => {
        await cache.pushViews([{ readerId: 'r', itemId: 'a' }], T);
        await cache.invalidate('r');
        const before = commands?.() ?? 0;
        expect((await cache.read('r', T)).recentViews).toEqual(['a']);
        if (commands) expect(commands() - before).toBe(1);
      });
    });

    it('rejects bad ids before writing anything', async () => {
      await withCache(factory, async ({ cache }) => {
        await expect(
          cache.pushViews(
            [
              { readerId: 'ok', itemId: 'a' },
              { readerId: 'u:{x}', itemId: 'b' },
            ],
            T,
          ),
        ).rejects.toMatchObject({ code: 40002 });
        expect((await cache.read('ok', T)).recentViews).toEqual([]);
        await expect(cache.read('no spaces', T)).rejects.toMatchObject({ code: 40002 });
      });
    });
  });
}

export interface StoreHarness {
  store: ExclusionStore;
  content: ContentStore;
  /** Adds a block `blocker → blocked` to the graph (registering both users). */
  block(blocker: string, blocked: string): Promise<void>;
}

async function withStore(factory: () => Promise<StoreHarness>, body: (h: StoreHarness) => Promise<void>) {
  const h = await factory();
  await h.content.upsertItems(
    ['i1', 'i2', 'i3', 'gone'].map((id, n) => ({
      id,
      authorId: `a${n}`,
      title: id,
      text: '',
      url: null,
      tags: [],
      publishedAt: T,
      popularity: 0,
    })),
    T,
  );
  await h.content.deleteItem('gone', T);
  await body(h);
}

/** Registers the ExclusionStore contract. */
export function exclusionStoreContract(name: string, factory: () => Promise<StoreHarness>): void {
  describe(`ExclusionStore contract: ${name}`, () => {
    it('records engagements idempotently and loads them most recent first', async () => {
      await withStore(factory, async ({ store }) => {
        expect(await store.recordEngagement('r', 'i1', 'like', T)).toEqual({ created: true });
        expect(await store.recordEngagement('r', 'i1', 'like', T + 5)).toEqual({ created: false });
        expect(await store.recordEngagement('r', 'i1', 'reply', T + 1)).toEqual({ created: true });
        await store.recordEngagement('r', 'i2', 'share', T + 2);
        expect((await store.load('r', 100)).engaged).toEqual(['i2', 'i1']);
        expect((await store.load('r', 1)).engaged).toEqual(['i2']);
        expect((await store.load('other', 100)).engaged).toEqual([]);
      });
    });

    it('records a batch in one statement: in order, a repeat not new, nothing written when an item is not live', async () => {
      await withStore(factory, async ({ store }) => {
        const e = (readerId: string, itemId: string, nowMs: number, kind: 'like' | 'reply' = 'like') => ({
          readerId,
          itemId,
          kind,
          nowMs,
        });
        expect(await store.recordEngagement('r', 'i1', 'like', T)).toEqual({ created: true });
        for (const missing of ['nope', 'gone'])
          await expect(store.recordEngagements([e('r', 'i2', T), e('s', missing, T)])).rejects.toMatchObject({
            code: 40401,
            message: expect.stringContaining('engagements[1]'),
          });
        expect((await store.load('r', 100)).engaged).toEqual(['i1']); // the refused batches wrote nothing
        const batch = [
          e('r', 'i1', T + 1),
          e('r', 'i2', T + 2),
          e('s', 'i3', T + 3),
          e('r', 'i2', T + 9),
          e('r', 'i2', T + 4, 'reply'),
        ];
        expect(await store.recordEngagements(batch)).toEqual([false, true, true, false, true]);
        expect(await store.recordEngagements(batch)).toEqual([false, false, false, false, false]);
        expect(await store.recordEngagements([])).toEqual([]);
        expect((await store.load('r', 100)).engaged).toEqual(['i2', 'i1']); // i2 at T + 4 (its first like T + 2)
        expect((await store.load('s', 100)).engaged).toEqual(['i3']);
        const times = await store.history('r', 100);
        expect(times.engagements.find((x) => x.itemId === 'i2' && x.kind === 'like')?.atMs).toBe(T + 2); // the first kept
      });
    });

    it('keeps the first time of a "not interested", with the author; delete undoes it', async () => {
      await withStore(factory, async ({ store }) => {
        expect(await store.setFeedback('r', 'i2', 'not_interested', T + 10)).toEqual({
          created: true,
          authorId: 'a1',
          atMs: T + 10,
        });
        expect(await store.setFeedback('r', 'i2', 'not_interested', T + 99)).toEqual({
          created: false,
          authorId: 'a1',
          atMs: T + 10,
        });
        expect((await store.load('r', 100)).notInterested).toEqual([{ itemId: 'i2', authorId: 'a1', atMs: T + 10 }]);
        expect(await store.deleteFeedback('r', 'i2', 'not_interested')).toEqual({ removed: true });
        expect(await store.deleteFeedback('r', 'i2', 'not_interested')).toEqual({ removed: false });
        expect((await store.load('r', 100)).notInterested).toEqual([]);
      });
    });

    it('refuses unknown and deleted items with NOT_FOUND and writes nothing', async () => {
      await withStore(factory, async ({ store }) => {
        await expect(store.recordEngagement('r', 'nope', 'like', T)).rejects.toMatchObject({ code: 40401 });
        await expect(store.setFeedback('r', 'gone', 'not_interested', T)).rejects.toMatchObject({ code: 40401 });
        expect(await store.load('r', 100)).toEqual({
          engaged: [],
          notInterested: [],
          blockedAuthors: [],
          showLess: [],
          preferences: null,
        });
      });
    });

    it('loads blocked users in both directions', async () => {
      await withStore(factory, async ({ store, block }) => {
        await block('r', 'x');
        await block('y', 'r');
        await block('x', 'z');
        expect((await store.load('r', 100)).blockedAuthors.sort()).toEqual(['x', 'y']);
        expect((await store.load('z', 100)).blockedAuthors).toEqual(['x']);
      });
    });

    it('edits preferences atomically: concurrent edits all land; an edit that throws stores nothing', async () => {
      await withStore(factory, async ({ store }) => {
        const mute = (authorId: string) => (p: Preferences) => ({
          ...p,
          mutedAuthors: [...p.mutedAuthors, { authorId, expiresAtMs: null }],
        });
        await expect(
          store.updatePreferences(
            'r',
            () => {
              throw new Error('refused');
            },
            T,
          ),
        ).rejects.toThrow('refused');
        expect((await store.load('r', 100)).preferences).toBeNull(); // not even the row of the defaults
        // two devices at once, from a reader with no document yet: every edit lands
        await Promise.all(Array.from({ length: 12 }, (_, i) => store.updatePreferences('r', mute(`m${i}`), T + i)));
        const got = (await store.load('r', 100)).preferences!;
        expect(got.mutedAuthors.map((a) => a.authorId).sort()).toEqual(
          Array.from({ length: 12 }, (_, i) => `m${i}`).sort(),
        );
        expect(got.languages).toBeNull();
        const after = await store.updatePreferences('r', (p) => ({ ...p, languages: ['de'] }), T + 20);
        expect(after.mutedAuthors).toHaveLength(12);
        expect((await store.load('r', 100)).preferences).toEqual(after);
      });
    });
  });
}
