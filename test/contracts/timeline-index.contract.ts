/**
 * The TimelineIndex port contract (src/following/timeline-index.ts), one suite for every SQL engine,
 * adopted through test/support/contract.ts. The factory returns the index over an EMPTY, migrated
 * database whose `recorded_at` reads the given wall clock, with the social graph (follows, blocks,
 * pulls) and the content store (items) it joins.
 *
 * Promises kept: tids are handed out once per live item, increasing in commit order, never below
 * now × 2^11; the watermark never lets a read see a tid above a fan-out still running; the timeline is
 * exactly the live items of followed, unblocked authors in (lo, hi), newest first, so paging by its
 * last tid walks it whole; every read answers an empty input, an unknown id and a last page plainly.
 */
import { describe, expect, it } from 'vitest';
import type { SocialGraph } from '../../src/following/social-graph.js';
import type { TimelineIndex } from '../../src/following/timeline-index.js';
import type { ContentStore, ItemInput } from '../../src/kernel/items/content-store.js';
import { MAX_TID_MS, TID_PER_MS } from '../../src/following/domain.js';
import { MAX_TIME_MS } from '../../src/kernel/time-range.js';
import { ManualClock, type Clock } from '../../src/kernel/clock.js';

export interface TimelineIndexHarness {
  index: TimelineIndex;
  graph: SocialGraph;
  content: ContentStore;
}

/** Builds the index over an empty database; `wall` is the clock of its `recorded_at`. */
export type TimelineIndexFactory = (wall: Clock) => Promise<TimelineIndexHarness>;

/** 2016-01-15 12:00 UTC: the publisher's (virtual) time. */
const NOW = Date.UTC(2016, 0, 15, 12);
/** 2026-03-05: the wall clock of the pending rows, far from the publisher's virtual time. */
const WALL = Date.UTC(2026, 2, 5);

function item(id: string, authorId: string, ageMs = 0): ItemInput {
  return { id, authorId, title: id, text: '', url: null, tags: [], publishedAt: NOW - ageMs, popularity: 0 };
}

interface World extends TimelineIndexHarness {
  wall: ManualClock;
  /** Writes items and publishes them in one batch at NOW: item id → tid. */
  publishAll(items: ItemInput[]): Promise<Record<string, number>>;
}

async function withIndex(factory: TimelineIndexFactory, body: (w: World) => Promise<void>): Promise<void> {
  const wall = new ManualClock(WALL);
  const h = await factory(wall);
  const publishAll = async (items: ItemInput[]) => {
    await h.content.upsertItems(items, NOW);
    return Object.fromEntries(
      (
        await h.index.publish(
          items.map((i) => i.id),
          NOW,
        )
      ).map((p) => [p.itemId, p.tid]),
    );
  };
  await body({ ...h, wall, publishAll });
}

/** Registers the contract's tests under `describe(\`TimelineIndex contract: ${name}\`)`. */
export function timelineIndexContract(name: string, factory: TimelineIndexFactory): void {
  describe(`TimelineIndex contract: ${name}`, () => {
    describe('publish', () => {
      it('tids once per item, increasing in commit order, ≥ now × 2^11, with pending rows and a watermark', async () => {
        await withIndex(factory, async ({ index, content, graph }) => {
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
          expect((await index.pendingBefore(WALL + 1, 10)).map((p) => p.itemId)).toEqual(['x2', 'y']);
          await index.completeFanout(first[1]!.tid);
          await index.completeFanout(y!.tid);
          expect(await index.watermark()).toBe(y!.tid + 1); // nothing pending: everything assigned so far
          expect(await index.tidsOf(['y', 'nope'])).toEqual([y!.tid, null]);
        });
      });

      it('orders a batch by published_at, then id; an id given twice gets one tid', async () => {
        await withIndex(factory, async ({ index, content }) => {
          await content.upsertItems([item('b', 'a', 5), item('a', 'a', 5), item('c', 'a', 9), item('d', 'a', 0)], NOW);
          const out = await index.publish(['d', 'b', 'a', 'c', 'b', 'd'], NOW);
          expect(out.map((p) => p.itemId)).toEqual(['c', 'a', 'b', 'd']);
          expect(out.map((p) => p.tid)).toEqual([0, 1, 2, 3].map((k) => NOW * TID_PER_MS + k));
          expect(out.map((p) => p.authorId)).toEqual(['a', 'a', 'a', 'a']);
        });
      });

      it('an empty batch, unknown ids and deleted items publish nothing and change no state', async () => {
        await withIndex(factory, async ({ index, content, graph }) => {
          expect(await index.publish([], NOW)).toEqual([]);
          expect(await index.publish(['ghost'], NOW)).toEqual([]);
          await content.upsertItems([item('gone', 'ghost_author')], NOW);
          await content.deleteItem('gone', NOW);
          expect(await index.publish(['gone'], NOW)).toEqual([]);
          expect(await index.tidsOf(['gone', 'ghost'])).toEqual([null, null]);
          expect(await index.watermark()).toBe(1);
          expect(await index.pendingBefore(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
          expect(await graph.exists(['ghost_author'])).toEqual([false]); // no author registered either
        });
      });

      it('a time beyond the accepted range is clamped to its end; a time that is no number is a RangeError, nothing published', async () => {
        await withIndex(factory, async ({ index, content }) => {
          await content.upsertItems([item('late', 'a'), item('nan', 'a')], NOW);
          await expect(index.publish(['nan'], Number.NaN)).rejects.toThrow(RangeError);
          expect(await index.tidsOf(['nan'])).toEqual([null]);
          expect(await index.watermark()).toBe(1);
          // The tid space cannot run out (issue 10.5): the time is clamped to 2100-01-01, not refused.
          expect(await index.publish(['late'], MAX_TID_MS + 1)).toEqual([
            { itemId: 'late', authorId: 'a', tid: MAX_TIME_MS * TID_PER_MS },
          ]);
        });
      });

      it('concurrent publishes get distinct tids in commit order', async () => {
        await withIndex(factory, async ({ index, content }) => {
          const items = Array.from({ length: 40 }, (_, i) => item(`c${i}`, `a${i % 4}`));
          await content.upsertItems(items, NOW);
          const results = await Promise.all(items.map((it) => index.publish([it.id], NOW)));
          const tids = results.flat().map((p) => p.tid);
          expect(new Set(tids).size).toBe(40);
          expect(Math.max(...tids) - Math.min(...tids)).toBe(39); // consecutive: none lost to a rollback
          expect(await index.watermark()).toBe(Math.min(...tids));
        });
      });
    });

    describe('watermark and pending fan-outs', () => {
      it('watermark: 1 before any publish; a later publish stays out even when its fan-out finishes first', async () => {
        await withIndex(factory, async ({ index, content }) => {
          expect(await index.watermark()).toBe(1);
          await content.upsertItems([item('w1', 'a'), item('w2', 'b')], NOW);
          const [w1] = await index.publish(['w1'], NOW);
          const [w2] = await index.publish(['w2'], NOW);
          await index.completeFanout(w2!.tid); // the newer fan-out is done, the older one is not
          expect(await index.watermark()).toBe(w1!.tid); // w2 is not served above the pending w1
          await index.completeFanout(w1!.tid);
          expect(await index.watermark()).toBe(w2!.tid + 1);
          await index.completeFanout(w1!.tid); // again, and an unknown tid: harmless
          await index.completeFanout(12_345);
          expect(await index.watermark()).toBe(w2!.tid + 1);
        });
      });

      it("isPending, pendingOf and forgetPending: an author's pending fan-outs, and none once done or forgotten", async () => {
        await withIndex(factory, async ({ index, content }) => {
          await content.upsertItems([item('q1', 'qa'), item('q2', 'qa'), item('q3', 'qb')], NOW);
          const [q1] = await index.publish(['q1'], NOW);
          const [q2, q3] = await index.publish(['q2', 'q3'], NOW);
          expect(await index.pendingOf('qa')).toEqual([q1!.tid, q2!.tid]);
          expect(await index.isPending(q1!.tid)).toBe(true);
          await index.completeFanout(q1!.tid);
          expect(await index.isPending(q1!.tid)).toBe(false);
          expect(await index.pendingOf('qa')).toEqual([q2!.tid]);
          expect(await index.forgetPending('qa')).toBe(1);
          expect(await index.forgetPending('qa')).toBe(0);
          expect([await index.isPending(q2!.tid), await index.isPending(q3!.tid)]).toEqual([false, true]);
          expect(await index.pendingOf('qa')).toEqual([]);
        });
      });

      it('pendingBefore: rows recorded strictly before the wall time, oldest tid first, at most `limit`', async () => {
        await withIndex(factory, async ({ index, content, wall }) => {
          await content.upsertItems([item('p1', 'a'), item('p2', 'a'), item('p3', 'b')], NOW);
          const [p1] = await index.publish(['p1'], NOW);
          wall.advance(1_000);
          const [p2] = await index.publish(['p2'], NOW + 5);
          const [p3] = await index.publish(['p3'], NOW + 9);
          expect(await index.pendingBefore(WALL, 10)).toEqual([]);
          expect(await index.pendingBefore(WALL + 1, 10)).toEqual([
            { tid: p1!.tid, itemId: 'p1', authorId: 'a', nowMs: NOW, recordedAtMs: WALL },
          ]);
          const all = await index.pendingBefore(WALL + 1_001, 10);
          expect(all.map((p) => p.tid)).toEqual([p1!.tid, p2!.tid, p3!.tid]);
          expect(all.map((p) => [p.nowMs, p.recordedAtMs])).toEqual([
            [NOW, WALL],
            [NOW + 5, WALL + 1_000],
            [NOW + 9, WALL + 1_000],
          ]);
          expect((await index.pendingBefore(WALL + 1_001, 2)).map((p) => p.itemId)).toEqual(['p1', 'p2']);
          await index.completeFanout(p1!.tid);
          expect((await index.pendingBefore(WALL + 1_001, 2)).map((p) => p.itemId)).toEqual(['p2', 'p3']);
        });
      });

      it('readView = readerState + watermark in one answer (an unknown reader: no state, watermark 1)', async () => {
        await withIndex(factory, async ({ graph, index, content }) => {
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
          expect(view).toEqual({
            lastActiveAt: NOW + 5,
            pulled: [{ authorId: 'a', pullTid: v1!.tid }],
            watermark: v1!.tid,
          });
          await index.completeFanout(v1!.tid);
          await index.completeFanout(v2!.tid);
          expect((await index.readView('r')).watermark).toBe(v2!.tid + 1);
        });
      });
    });

    describe('timeline', () => {
      it('= live items of followed, unblocked authors in (lo, hi), newest first; visible() says why others are hidden', async () => {
        await withIndex(factory, async ({ index, content, graph, publishAll }) => {
          const tids = await publishAll([
            item('a1', 'a'),
            item('a2', 'a'),
            item('b1', 'b'),
            item('c1', 'c'),
            item('d1', 'd'),
          ]);
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

      it('pages by the last tid walk the whole timeline without repeats or gaps; the last page is short, then empty', async () => {
        await withIndex(factory, async ({ index, graph, publishAll }) => {
          const items = Array.from({ length: 11 }, (_, i) => item(`t${i}`, `au${i % 3}`, (11 - i) * 1000));
          const tids = await publishAll(items);
          for (const a of ['au0', 'au1', 'au2']) await graph.follow('r', a, NOW);
          const pages: number[][] = [];
          let hi = Infinity;
          for (;;) {
            const page = await index.timeline('r', hi, 0, 4);
            pages.push(page.map((t) => t.tid));
            if (page.length < 4) break;
            hi = page.at(-1)!.tid;
          }
          expect(pages.map((p) => p.length)).toEqual([4, 4, 3]);
          expect(pages.flat()).toEqual(items.map((i) => tids[i.id]!).reverse());
          expect(await index.timeline('r', pages[2]!.at(-1)!, 0, 4)).toEqual([]); // past the last page
          expect(await index.timelineTids('r', Infinity, 0, 100)).toEqual(pages.flat()); // same rule, tids only
          const [newest] = await index.timeline('r', Infinity, 0, 1);
          expect(newest).toMatchObject({
            tid: tids.t10,
            item: { id: 't10', authorId: 'au1', publishedAt: NOW - 1000 },
          });
        });
      });

      it('a reader who follows nobody, an empty range and a zero limit read empty', async () => {
        await withIndex(factory, async ({ index, graph, publishAll }) => {
          const tids = await publishAll([item('e1', 'a'), item('e2', 'a')]);
          expect(await index.timeline('stranger', Infinity, 0, 10)).toEqual([]);
          await graph.follow('r', 'a', NOW);
          expect(await index.timelineTids('r', tids.e2!, tids.e1!, 10)).toEqual([]); // (e1, e2) holds nothing
          expect(await index.timelineTids('r', tids.e1!, tids.e2!, 10)).toEqual([]); // lo above hi
          expect(await index.timelineTids('r', Infinity, 0, 0)).toEqual([]);
          expect(await index.timelineTids('r', tids.e2! + 1, tids.e1! - 1, 10)).toEqual([tids.e2, tids.e1]); // bounds exclusive
        });
      });

      it('visible keeps the order asked and answers an empty list with nothing', async () => {
        await withIndex(factory, async ({ index, graph, publishAll }) => {
          const tids = await publishAll([item('o1', 'a'), item('o2', 'a'), item('o3', 'a')]);
          await graph.follow('r', 'a', NOW);
          expect(await index.visible('r', [])).toEqual({ items: [], deleted: [], unfollowed: [] });
          const vis = await index.visible('r', [tids.o2!, tids.o3!, tids.o1!]);
          expect(vis.items.map((t) => [t.tid, t.item.id])).toEqual([
            [tids.o2, 'o2'],
            [tids.o3, 'o3'],
            [tids.o1, 'o1'],
          ]);
          expect(vis.deleted).toEqual([]);
          expect(vis.unfollowed).toEqual([]);
          expect((await index.visible('stranger', [tids.o1!])).unfollowed).toEqual([tids.o1]);
        });
      });
    });

    describe('authorTids and tidsOf', () => {
      it("authorTids: the author's live tids below hi, newest first, at most `limit`", async () => {
        await withIndex(factory, async ({ index, content, publishAll }) => {
          const tids = await publishAll([
            item('k1', 'a', 3),
            item('k2', 'a', 2),
            item('k3', 'a', 1),
            item('other', 'b'),
          ]);
          await content.upsertItems([item('draft', 'a')], NOW); // never published: no tid
          await content.deleteItem('k2', NOW);
          expect(await index.authorTids('a', Infinity, 10)).toEqual([tids.k3, tids.k1]);
          expect(await index.authorTids('a', tids.k3!, 10)).toEqual([tids.k1]); // hi exclusive
          expect(await index.authorTids('a', Infinity, 1)).toEqual([tids.k3]);
          expect(await index.authorTids('a', tids.k1!, 10)).toEqual([]);
          expect(await index.authorTids('nobody', Infinity, 10)).toEqual([]);
        });
      });

      it('tidsOf: aligned with the ids asked, null for unknown or unpublished ones, [] for []', async () => {
        await withIndex(factory, async ({ index, content, publishAll }) => {
          const tids = await publishAll([item('s1', 'a'), item('s2', 'a')]);
          await content.upsertItems([item('draft', 'a')], NOW);
          expect(await index.tidsOf([])).toEqual([]);
          expect(await index.tidsOf(['s2', 'draft', 'nope', 's1', 's2'])).toEqual([
            tids.s2,
            null,
            null,
            tids.s1,
            tids.s2,
          ]);
        });
      });
    });
  });
}
