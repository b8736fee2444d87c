/**
 * The SocialGraph and TimelineIndex contracts (src/ports/social-graph.ts, timeline-index.ts), one
 * suite for every SQL engine: the factory returns both ports over an EMPTY, migrated database, plus
 * the content store that writes items.
 */
import { describe, expect, it } from 'vitest';
import type { SocialGraph } from '../../src/ports/social-graph.js';
import type { TimelineIndex } from '../../src/ports/timeline-index.js';
import type { ContentStore, ItemInput } from '../../src/ports/content-store.js';
import { ErrorCodes } from '../../src/domain/errors.js';
import { TID_PER_MS } from '../../src/domain/timeline.js';

export interface GraphHarness {
  graph: SocialGraph;
  index: TimelineIndex;
  content: ContentStore;
  cleanup(): Promise<void>;
}

const NOW = Date.UTC(2016, 0, 15, 12);
const code = (name: keyof typeof ErrorCodes) => ({ code: ErrorCodes[name].code });

function item(id: string, authorId: string, ageMs = 0): ItemInput {
  return { id, authorId, title: id, text: '', url: null, tags: [], publishedAt: NOW - ageMs, popularity: 0 };
}

async function withGraph(factory: () => Promise<GraphHarness>, body: (h: GraphHarness) => Promise<void>) {
  const h = await factory();
  try {
    await body(h);
  } finally {
    await h.cleanup();
  }
}

export function socialGraphContract(name: string, factory: () => Promise<GraphHarness>): void {
  describe(`SocialGraph + TimelineIndex contract: ${name}`, () => {
    it('follow: idempotent, counted once, first follow time kept; unfollow idempotent', async () => {
      await withGraph(factory, async ({ graph }) => {
        await graph.ensureUsers(['a', 'b'], NOW);
        expect(await graph.follow('r', 'a', NOW)).toEqual({ created: true });
        expect(await graph.follow('r', 'a', NOW + 5)).toEqual({ created: false });
        expect(await graph.authorInfo('a')).toEqual({ followers: 1, pullTid: null });
        expect((await graph.following('r', 10)).entries).toEqual([{ userId: 'a', sinceMs: NOW }]);
        expect(await graph.unfollow('r', 'a')).toEqual({ removed: true });
        expect(await graph.unfollow('r', 'a')).toEqual({ removed: false });
        expect((await graph.authorInfo('a')).followers).toBe(0);
      });
    });

    it('refuses self follows, unknown targets and follows across a block, writing nothing', async () => {
      await withGraph(factory, async ({ graph }) => {
        await graph.ensureUsers(['a', 'b'], NOW);
        await expect(graph.follow('a', 'a', NOW)).rejects.toMatchObject(code('SELF_REFERENCE'));
        await expect(graph.block('a', 'a', NOW)).rejects.toMatchObject(code('SELF_REFERENCE'));
        await expect(graph.follow('a', 'ghost', NOW)).rejects.toMatchObject(code('UNKNOWN_USER'));
        await expect(graph.follow('a', 'b:c', NOW)).rejects.toMatchObject(code('INVALID_ID'));
        await graph.block('b', 'a', NOW);
        await expect(graph.follow('a', 'b', NOW)).rejects.toMatchObject(code('BLOCKED'));
        await expect(graph.follow('b', 'a', NOW)).rejects.toMatchObject(code('BLOCKED'));
        expect((await graph.following('a', 10)).entries).toEqual([]);
        expect(await graph.exists(['a', 'ghost'])).toEqual([true, false]);
      });
    });

    it('block removes the follows both ways, keeps counts exact, and is idempotent', async () => {
      await withGraph(factory, async ({ graph }) => {
        await graph.ensureUsers(['a', 'b'], NOW);
        await graph.follow('a', 'b', NOW);
        await graph.follow('b', 'a', NOW);
        expect(await graph.block('a', 'b', NOW + 1)).toEqual({ created: true, unfollowed: true, unfollowedBy: true });
        expect(await graph.block('a', 'b', NOW + 2)).toEqual({ created: false, unfollowed: false, unfollowedBy: false });
        expect(await graph.authorInfo('a')).toEqual({ followers: 0, pullTid: null });
        expect((await graph.blocks('a', 10)).entries).toEqual([{ userId: 'b', sinceMs: NOW + 1 }]);
        expect(await graph.unblock('a', 'b')).toEqual({ removed: true });
        expect(await graph.follow('a', 'b', NOW)).toEqual({ created: true });
      });
    });

    it('counts stay exact under concurrent follows and unfollows', async () => {
      await withGraph(factory, async ({ graph }) => {
        const fans = Array.from({ length: 30 }, (_, i) => `f${i}`);
        await graph.ensureUsers(['star', ...fans], NOW);
        await Promise.all([...fans, ...fans].map((f) => graph.follow(f, 'star', NOW)));
        expect((await graph.authorInfo('star')).followers).toBe(30);
        await Promise.all(fans.slice(0, 10).flatMap((f) => [graph.unfollow(f, 'star'), graph.unfollow(f, 'star')]));
        expect((await graph.authorInfo('star')).followers).toBe(20);
        expect((await graph.mostFollowed(1))[0]).toEqual({ userId: 'star', followers: 20 });
      });
    });

    it('lists page newest first without repeats or gaps; a forged cursor is INVALID_INPUT', async () => {
      await withGraph(factory, async ({ graph }) => {
        const authors = Array.from({ length: 7 }, (_, i) => `a${i}`);
        await graph.ensureUsers(authors, NOW);
        for (const [i, a] of authors.entries()) await graph.follow('r', a, NOW + (i % 3)); // ties in time
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await graph.following('r', 3, cursor);
          seen.push(...page.entries.map((e) => e.userId));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        expect(seen).toEqual(['a5', 'a2', 'a4', 'a1', 'a6', 'a3', 'a0']);
        expect((await graph.followers('a0', 10)).entries.map((e) => e.userId)).toEqual(['r']);
        await expect(graph.following('r', 3, 'bm90LWEtY3Vyc29y')).rejects.toMatchObject(code('INVALID_INPUT'));
      });
    });

    it('touch only moves forward; activeFollowers pages active followers by id', async () => {
      await withGraph(factory, async ({ graph }) => {
        await graph.ensureUsers(['a'], NOW);
        for (const f of ['f1', 'f2', 'f3', 'f4']) await graph.follow(f, 'a', NOW);
        await graph.touch('f1', NOW);
        await graph.touch('f1', NOW - 1000);
        await graph.touch('f3', NOW - 10);
        await graph.touch('f4', NOW - 100_000);
        expect((await graph.readerState('f1')).lastActiveAt).toBe(NOW);
        expect((await graph.readerState('nobody')).lastActiveAt).toBeNull();
        expect(await graph.activeFollowers('a', NOW - 50, null, 10)).toEqual(['f1', 'f3']);
        expect(await graph.activeFollowers('a', NOW - 50, 'f1', 1)).toEqual(['f3']);
        expect(await graph.activeFollowers('a', NOW - 50, 'f3', 1)).toEqual([]);
      });
    });

    it('markPulled only raises; readerState lists followed authors with a pull tid', async () => {
      await withGraph(factory, async ({ graph }) => {
        await graph.ensureUsers(['a', 'b', 'c'], NOW);
        await graph.follow('r', 'a', NOW);
        await graph.follow('r', 'b', NOW);
        await graph.markPulled('a', 50);
        await graph.markPulled('a', 40);
        await graph.markPulled('c', 9);
        expect(await graph.readerState('r')).toEqual({ lastActiveAt: null, pulled: [{ authorId: 'a', pullTid: 50 }] });
      });
    });

    it('readView = readerState + watermark in one answer (an unknown reader: no state, watermark 1)', async () => {
      await withGraph(factory, async ({ graph, index, content }) => {
        expect(await index.readView('nobody')).toEqual({ lastActiveAt: null, pulled: [], watermark: 1 });
        await graph.ensureUsers(['a', 'b'], NOW);
        await graph.follow('r', 'a', NOW);
        await graph.follow('r', 'b', NOW);
        await graph.touch('r', NOW + 5);
        await content.upsertItems([item('v1', 'a'), item('v2', 'b')], NOW);
        const [v1, v2] = await index.publish(['v1', 'v2'], NOW);
        await graph.markPulled('a', v1!.tid);
        const view = await index.readView('r');
        expect(view).toEqual({ ...(await graph.readerState('r')), watermark: await index.watermark() });
        expect(view).toEqual({ lastActiveAt: NOW + 5, pulled: [{ authorId: 'a', pullTid: v1!.tid }], watermark: v1!.tid });
        await index.completeFanout(v1!.tid);
        await index.completeFanout(v2!.tid);
        expect((await index.readView('r')).watermark).toBe(v2!.tid + 1);
      });
    });

    it('publish: tids once per item, increasing in commit order, ≥ now × 2^11, with pending rows and a watermark', async () => {
      await withGraph(factory, async ({ index, content, graph }) => {
        await content.upsertItems([item('x2', 'a', 0), item('x1', 'a', 1000), item('y', 'b')], NOW);
        const first = await index.publish(['x2', 'x1', 'nope'], NOW);
        expect(first.map((p) => p.itemId)).toEqual(['x1', 'x2']); // by published_at within a batch
        expect(first[0]!.tid).toBe(NOW * TID_PER_MS);
        expect(first[1]!.tid).toBe(NOW * TID_PER_MS + 1);
        expect(await index.publish(['x1', 'x2'], NOW)).toEqual([]); // idempotent
        const [y] = await index.publish(['y'], NOW - 60_000); // a clock behind: still after the last tid
        expect(y!.tid).toBe(NOW * TID_PER_MS + 2);
        expect(await graph.exists(['a', 'b'])).toEqual([true, true]);
        expect(await index.watermark()).toBe(first[0]!.tid);
        await index.completeFanout(first[0]!.tid);
        expect(await index.watermark()).toBe(first[1]!.tid);
        expect((await index.pendingBefore(Date.now() + 1000, 10)).map((p) => p.itemId)).toEqual(['x2', 'y']);
        await index.completeFanout(first[1]!.tid);
        await index.completeFanout(y!.tid);
        expect(await index.watermark()).toBe(y!.tid + 1); // nothing pending: everything assigned so far
        expect(await index.tidsOf(['y', 'nope'])).toEqual([y!.tid, null]);
      });
    });

    it('watermark: 1 before any publish; a later publish stays out even when its fan-out finishes first', async () => {
      await withGraph(factory, async ({ index, content }) => {
        expect(await index.watermark()).toBe(1);
        await content.upsertItems([item('w1', 'a'), item('w2', 'b')], NOW);
        const [w1] = await index.publish(['w1'], NOW);
        const [w2] = await index.publish(['w2'], NOW);
        await index.completeFanout(w2!.tid); // the newer fan-out is done, the older one is not
        expect(await index.watermark()).toBe(w1!.tid); // w2 is not served above the pending w1
        await index.completeFanout(w1!.tid);
        expect(await index.watermark()).toBe(w2!.tid + 1);
      });
    });

    it('concurrent publishes get distinct tids in commit order', async () => {
      await withGraph(factory, async ({ index, content }) => {
        const items = Array.from({ length: 40 }, (_, i) => item(`c${i}`, `a${i % 4}`));
        await content.upsertItems(items, NOW);
        const results = await Promise.all(items.map((it) => index.publish([it.id], NOW)));
        const tids = results.flat().map((p) => p.tid);
        expect(new Set(tids).size).toBe(40);
      });
    });

    it('timeline = live items of followed, unblocked authors in (lo, hi), newest first; visible() says why others are hidden', async () => {
      await withGraph(factory, async ({ index, content, graph }) => {
        await content.upsertItems([item('a1', 'a'), item('a2', 'a'), item('b1', 'b'), item('c1', 'c'), item('d1', 'd')], NOW);
        const tids = Object.fromEntries((await index.publish(['a1', 'a2', 'b1', 'c1', 'd1'], NOW)).map((p) => [p.itemId, p.tid]));
        await graph.follow('r', 'a', NOW);
        await graph.follow('r', 'b', NOW);
        await graph.follow('r', 'd', NOW);
        await graph.block('r', 'd', NOW);
        await content.deleteItem('b1', NOW);
        expect(await index.timelineTids('r', Infinity, 0, 10)).toEqual([tids.a2, tids.a1]);
        expect((await index.timeline('r', tids.a2!, 0, 10)).map((t) => t.item.id)).toEqual(['a1']);
        expect(await index.timelineTids('r', Infinity, tids.a1!, 10)).toEqual([tids.a2]);
        const vis = await index.visible('r', [tids.d1!, tids.c1!, tids.b1!, tids.a2!, 12345]);
        expect(vis.items.map((t) => t.item.id)).toEqual(['a2']);
        expect(vis.deleted).toEqual([tids.b1, 12345]);
        expect(vis.unfollowed).toEqual([tids.d1, tids.c1]);
        expect(await index.authorTids('a', Infinity, 1)).toEqual([tids.a2]);
      });
    });
  });
}
