/**
 * The SocialGraph port contract (src/following/social-graph.ts), one suite for every SQL engine,
 * adopted through test/support/contract.ts: the factory returns the graph over an EMPTY, migrated
 * database. (The TimelineIndex, which reads the graph, has its own: timeline-index.contract.ts.)
 */
import { describe, expect, it } from 'vitest';
import type { SocialGraph } from '../../src/following/social-graph.js';
import { ErrorCodes } from '../../src/kernel/errors.js';

export interface GraphHarness {
  graph: SocialGraph;
}

const NOW = Date.UTC(2016, 0, 15, 12);
const code = (name: keyof typeof ErrorCodes) => ({ code: ErrorCodes[name].code });

async function withGraph(factory: () => Promise<GraphHarness>, body: (h: GraphHarness) => Promise<void>) {
  await body(await factory());
}

export function socialGraphContract(name: string, factory: () => Promise<GraphHarness>): void {
  describe(`SocialGraph contract: ${name}`, () => {
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
        expect(await graph.block('a', 'b', NOW + 2)).toEqual({
          created: false,
          unfollowed: false,
          unfollowedBy: false,
        });
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

    it('touch only moves forward; readingFollowers pages the followers who ever read, by id', async () => {
      await withGraph(factory, async ({ graph }) => {
        await graph.ensureUsers(['a'], NOW);
        for (const f of ['f1', 'f2', 'f3', 'f4', 'f5']) await graph.follow(f, 'a', NOW);
        await graph.touch('f1', NOW);
        await graph.touch('f1', NOW - 1000);
        await graph.touch('f3', NOW - 10);
        await graph.touch('f4', NOW - 100_000);
        expect((await graph.readerState('f1')).lastActiveAt).toBe(NOW);
        expect((await graph.readerState('nobody')).lastActiveAt).toBeNull();
        // f2 and f5 never read: they cannot hold an inbox; f4 read long ago and still may
        expect(await graph.readingFollowers('a', null, 10)).toEqual(['f1', 'f3', 'f4']);
        expect(await graph.readingFollowers('a', 'f1', 1)).toEqual(['f3']);
        expect(await graph.readingFollowers('a', 'f3', 1)).toEqual(['f4']);
        expect(await graph.readingFollowers('a', 'f4', 1)).toEqual([]);
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
  });
}
