/**
 * Feeds that learn from what readers do (docs/learning.md), end to end through the library on both store
 * pairs: a reader's for-you and discover pages lead with what readers who engaged with the same items
 * engaged with, and explain names that evidence; an item nobody engaged with still reaches for-you
 * inside its decay window, with no repeat; the engine's own popularity orders the fill for a reader with
 * no history; a re-rank hook orders a page but never brings back a seen or excluded item.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS, MINUTE_MS } from '../../src/kernel/clock.js';
import type { RankedCandidate } from '../../src/for-you/sources.js';
import { startTestApp, T0, type TestApp } from '../support/app.js';
import { itemInput } from '../support/items.js';

/** 40 items by 8 authors, published an hour before T0: `a0..a4` a taste group, `b0` its hidden gem. */
const CATALOG = [...['a0', 'a1', 'a2', 'a3', 'a4', 'b0'], ...Array.from({ length: 34 }, (_, i) => `x${i}`)].map(
  (id, i) => itemInput(id, T0, { authorId: `au${i % 8}`, title: `Title of ${id}`, ageH: 1 }),
);

/** Readers r0..r7 liked a0..a4 and b0; `me` liked a0..a4; the x items had a view each from `crowd`. */
async function engage(t: TestApp): Promise<void> {
  const u = t.f.useCases;
  await u.publishItems(CATALOG, T0);
  let at = T0 + MINUTE_MS;
  for (const reader of [...Array.from({ length: 8 }, (_, i) => `r${i}`), 'me'])
    for (const id of reader === 'me' ? ['a0', 'a1', 'a2', 'a3', 'a4'] : ['a0', 'a1', 'a2', 'a3', 'a4', 'b0']) {
      at += 1000;
      await u.recordEngagement(reader, id, 'like', at);
    }
  // a view each (spaced past the per-visitor rate limit): the x items are known, but no one's gem
  for (let i = 0; i < 34; i++)
    await u.recordViews([{ itemId: `x${i}`, visitorId: 'crowd', nowMs: at + i * MINUTE_MS }]);
  t.clock.set(at + HOUR_MS);
  await t.f.learn.settle(t.clock.now());
}

for (const pair of [
  { name: 'PGlite + in-process', db: 'pglite' as const, hot: 'memory' as const },
  { name: 'PostgreSQL + Redis', db: 'postgres' as const, hot: 'redis' as const },
]) {
  describe(`feeds that learn on ${pair.name}`, () => {
    let t: TestApp;
    const hookSaw: RankedCandidate[][] = [];
    beforeAll(async () => {
      t = await startTestApp({
        db: pair.db,
        hot: pair.hot,
        ranking: {
          // reverses the page and slips in items the reader must never get back
          forYou: {
            rerank: (_q, c) => {
              hookSaw.push([...c]);
              return ['a0', 'missing', ...c.map((x) => x.itemId).reverse(), 'a1'];
            },
          },
        },
      });
      await engage(t);
    });
    afterAll(() => t?.close());

    it('discover’s first page leads with the co-engaged item, and so would for-you’s before its re-rank', async () => {
      const page = await t.f.discover.feed.page('me', 5, undefined, t.clock.now());
      expect(page.items[0]?.id).toBe('b0');
      expect(page.sources[0]).toBe('discovery');
      const seenByHook = hookSaw.length;
      const fy = await t.f.forYou.page('me2', 'refresh', 5, t.clock.now()); // a reader with no history: no learned part
      expect(fy.items.length).toBe(5);
      expect(hookSaw.length).toBe(seenByHook + 1);
    });

    it('for-you: the learned candidate comes first to the hook; the hook orders the page but never brings back an excluded item', async () => {
      hookSaw.length = 0;
      const page = await t.f.forYou.page('me', 'refresh', 5, t.clock.now());
      expect(hookSaw[0]?.[0]?.itemId).toBe('b0'); // the feed's own order, before the hook
      const ids = page.items.map((i) => i.id);
      expect(ids).not.toContain('a0'); // engaged: excluded, though the hook named it
      expect(ids).not.toContain('a1');
      expect(ids).not.toContain('missing');
      expect(ids.length).toBe(5);
      // scrolled to the end: never a repeat, never an excluded item, and b0 served once
      const all = [...ids];
      for (let n = 0; n < 20; n++) {
        const more = await t.f.forYou.page('me', 'load_more', 5, t.clock.now());
        if (more.items.length === 0) break;
        all.push(...more.items.map((i) => i.id));
      }
      expect(new Set(all).size).toBe(all.length);
      expect(all.filter((id) => id.startsWith('a'))).toEqual([]);
      expect(all).toContain('b0');
    });

    it('explain names the evidence: the reader’s items that readers of this one also engaged with', async () => {
      const e = await t.f.explain({ feed: 'for-you', readerId: 'fresh', itemId: 'b0', nowMs: t.clock.now() });
      expect(e.score?.parts.source).not.toBe('learned'); // no history: no learned evidence
      await t.f.useCases.recordEngagement('fresh', 'a2', 'like', t.clock.now());
      t.clock.advance(MINUTE_MS);
      await t.f.learn.settle(t.clock.now());
      const x = await t.f.explain({ feed: 'for-you', readerId: 'fresh', itemId: 'b0', nowMs: t.clock.now() });
      expect(x.score?.parts.source).toBe('learned');
      expect(String(x.score?.parts.because)).toContain('“Title of a2”');
      expect(Number(x.score?.parts.neighbour_score)).toBeGreaterThan(0);
    });

    it('an item nobody engaged with reaches for-you inside its decay window; the engine’s popularity orders the fill', async () => {
      const now = t.clock.now();
      await t.f.useCases.publishItems([itemInput('fresh1', now, { authorId: 'newcomer', ageH: 0 })], now);
      await t.f.forYouPool.settled();
      const all: string[] = [];
      for (let n = 0; n < 30; n++) {
        const p = await t.f.forYou.page('scroller', n === 0 ? 'refresh' : 'load_more', 5, now);
        if (p.items.length === 0) break;
        all.push(...p.items.map((i) => i.id));
      }
      expect(all).toContain('fresh1');
      expect(new Set(all).size).toBe(all.length);
      // a reader with no history: the fill (the feed's order, as the hook is given it) puts the items liked
      // 8 or 9 times above the once-viewed ones, though every publisher prior is 0
      hookSaw.length = 0;
      await t.f.forYou.page('newbie', 'refresh', 6, now);
      expect(
        hookSaw[0]!
          .slice(0, 6)
          .map((c) => c.itemId)
          .sort(),
      ).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'b0']);
    });
  });
}
