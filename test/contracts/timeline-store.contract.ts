/**
 * The TimelineStore port contract (src/following/timeline-store.ts), one suite for every adapter:
 * a test file adopts it through test/support/contract.ts.
 */
import { describe, expect, it } from 'vitest';
import { MISSING_FLOOR, type TimelineStore } from '../../src/following/timeline-store.js';

/** A fresh, empty store with its own keys. */
export interface TimelineStoreHarness {
  store: TimelineStore;
}

export type TimelineStoreFactory = () => Promise<TimelineStoreHarness>;

const TTL = 7 * 86_400_000;
const ALL = { hi: Infinity, lo: 0, count: 1_000 };
const T = 1_000_000_000_000; // a base tid

async function withStore(factory: TimelineStoreFactory, body: (s: TimelineStore) => Promise<void>) {
  const h = await factory();
  try {
    await body(h.store);
  } finally {
    await h.store.close();
  }
}

/** Prepares a ready, empty inbox. */
async function ready(s: TimelineStore, reader: string, maxLen = 800) {
  await s.beginRebuild(reader, TTL);
  await s.completeRebuild(reader, [], 0, maxLen, TTL);
}

export function timelineStoreContract(name: string, factory: TimelineStoreFactory): void {
  describe(`TimelineStore contract: ${name}`, () => {
    it('an inbox never prepared reads as missing and receives no push', async () => {
      await withStore(factory, async (s) => {
        expect(await s.pushToInboxes(['r1'], T, 800)).toBe(0);
        expect(await s.readInbox('r1', ALL)).toEqual({ state: 'missing', floor: 0, tids: [] });
        expect(await s.mergeIntoInbox('r1', [T], 0, 800)).toBe(false);
        expect(await s.readInbox('r1', ALL)).toEqual({ state: 'missing', floor: 0, tids: [] });
      });
    });

    it('pushes land in building and ready inboxes only, idempotently, newest first', async () => {
      await withStore(factory, async (s) => {
        await s.beginRebuild('r1', TTL);
        await ready(s, 'r2');
        expect(await s.pushToInboxes(['r1', 'r2', 'r3'], T + 2, 800)).toBe(2);
        expect(await s.pushToInboxes(['r1', 'r2', 'r3'], T + 1, 800)).toBe(2);
        expect(await s.pushToInboxes(['r2'], T + 2, 800)).toBe(1); // again: no duplicate
        expect(await s.readInbox('r1', ALL)).toEqual({ state: 'building', floor: 0, tids: [T + 2, T + 1] });
        expect(await s.readInbox('r2', ALL)).toEqual({ state: 'ready', floor: 0, tids: [T + 2, T + 1] });
        expect((await s.readInbox('r3', ALL)).state).toBe('missing');
      });
    });

    it('keeps exact integer tids up to 2^53 - 1', async () => {
      await withStore(factory, async (s) => {
        await ready(s, 'r1');
        const big = Number.MAX_SAFE_INTEGER;
        await s.pushToInboxes(['r1'], big, 800);
        await s.pushToInboxes(['r1'], big - 1, 800);
        expect((await s.readInbox('r1', ALL)).tids).toEqual([big, big - 1]);
        expect((await s.readInbox('r1', { hi: big, lo: 0, count: 5 })).tids).toEqual([big - 1]);
      });
    });

    it('reads strictly inside (lo, hi), at most count', async () => {
      await withStore(factory, async (s) => {
        await ready(s, 'r1');
        for (let i = 1; i <= 10; i++) await s.pushToInboxes(['r1'], T + i, 800);
        expect((await s.readInbox('r1', { hi: T + 8, lo: T + 3, count: 100 })).tids).toEqual([
          T + 7,
          T + 6,
          T + 5,
          T + 4,
        ]);
        expect((await s.readInbox('r1', { hi: T + 8, lo: 0, count: 2 })).tids).toEqual([T + 7, T + 6]);
      });
    });

    it('trims to maxLen and raises the floor to the highest tid removed; pushes at or below it are dropped', async () => {
      await withStore(factory, async (s) => {
        await ready(s, 'r1', 3);
        for (let i = 1; i <= 5; i++) await s.pushToInboxes(['r1'], T + i, 3);
        expect(await s.readInbox('r1', ALL)).toEqual({ state: 'ready', floor: T + 2, tids: [T + 5, T + 4, T + 3] });
        expect(await s.pushToInboxes(['r1'], T + 1, 3)).toBe(0);
        expect(await s.pushToInboxes(['r1'], T + 2, 3)).toBe(0);
        expect((await s.readInbox('r1', ALL)).tids).toEqual([T + 5, T + 4, T + 3]);
      });
    });

    it('a rebuild merges with pushes that landed meanwhile, raises the floor and trims', async () => {
      await withStore(factory, async (s) => {
        await s.beginRebuild('r1', TTL);
        await s.pushToInboxes(['r1'], T + 50, 4);
        await s.completeRebuild('r1', [T + 40, T + 30, T + 20, T + 10], T + 5, 4, TTL);
        expect(await s.readInbox('r1', ALL)).toEqual({
          state: 'ready',
          floor: T + 10,
          tids: [T + 50, T + 40, T + 30, T + 20],
        });
        // a second rebuild with a lower floor never lowers it
        await s.beginRebuild('r1', TTL);
        expect((await s.readInbox('r1', ALL)).state).toBe('building');
        await s.completeRebuild('r1', [T + 60], 0, 4, TTL);
        expect(await s.readInbox('r1', ALL)).toEqual({
          state: 'ready',
          floor: T + 20,
          tids: [T + 60, T + 50, T + 40, T + 30],
        });
      });
    });

    it('a raised floor drops entries at or below it (backfill cut short)', async () => {
      await withStore(factory, async (s) => {
        await ready(s, 'r1');
        await s.pushToInboxes(['r1'], T + 3, 800);
        await s.pushToInboxes(['r1'], T + 1, 800);
        expect(await s.mergeIntoInbox('r1', [T + 9, T + 8], T + 2, 800)).toBe(true);
        expect(await s.readInbox('r1', ALL)).toEqual({ state: 'ready', floor: T + 2, tids: [T + 9, T + 8, T + 3] });
      });
    });

    it('removes tids from inboxes and outboxes', async () => {
      await withStore(factory, async (s) => {
        await ready(s, 'r1');
        await s.mergeIntoInbox('r1', [T + 1, T + 2, T + 3], 0, 800);
        await s.removeFromInbox('r1', [T + 2, T + 99]);
        expect((await s.readInbox('r1', ALL)).tids).toEqual([T + 3, T + 1]);
        await s.appendToOutbox('a1', T + 1, 800, TTL);
        await s.appendToOutbox('a1', T + 2, 800, TTL);
        await s.removeFromOutbox('a1', [T + 1]);
        expect(await s.readOutboxes(['a1'], ALL)).toEqual([{ floor: T, tids: [T + 2] }]); // a new outbox: floor = first tid - 1
      });
    });

    it('drops inboxes with their state (a bulk follow import): they read as missing and get no push until rebuilt', async () => {
      await withStore(factory, async (s) => {
        await ready(s, 'r1');
        await s.beginRebuild('r2', TTL);
        await ready(s, 'r3');
        await s.pushToInboxes(['r1', 'r2', 'r3'], T + 1, 800);
        await s.dropInboxes(['r1', 'r2', 'nobody']);
        expect(await s.readInbox('r1', ALL)).toEqual({ state: 'missing', floor: 0, tids: [] });
        expect(await s.readInbox('r2', ALL)).toEqual({ state: 'missing', floor: 0, tids: [] });
        expect(await s.pushToInboxes(['r1', 'r2', 'r3'], T + 2, 800)).toBe(1);
        expect(await s.readInbox('r3', ALL)).toEqual({ state: 'ready', floor: 0, tids: [T + 2, T + 1] });
        await expect(s.dropInboxes(['a:b'])).rejects.toMatchObject({ name_: 'INVALID_ID' });
      });
    });

    it('outboxes: idempotent appends, trimming with a floor, reads in the order asked', async () => {
      await withStore(factory, async (s) => {
        for (let i = 1; i <= 4; i++) await s.appendToOutbox('a1', T + i, 3, TTL);
        await s.appendToOutbox('a1', T + 4, 3, TTL);
        await s.appendToOutbox('a2', T + 10, 3, TTL);
        expect(await s.readOutboxes(['a2', 'nobody', 'a1'], { hi: Infinity, lo: 0, count: 2 })).toEqual([
          { floor: T + 9, tids: [T + 10] },
          { floor: MISSING_FLOOR, tids: [] }, // no outbox: nothing trusted, never "complete and empty"
          { floor: T + 1, tids: [T + 4, T + 3] },
        ]);
        // older tids than the first one are refused: below the floor PostgreSQL answers
        await s.appendToOutbox('a2', T + 5, 3, TTL);
        expect(await s.readOutboxes(['a2'], ALL)).toEqual([{ floor: T + 9, tids: [T + 10] }]);
      });
    });

    it('keeps readers apart and rejects invalid ids', async () => {
      await withStore(factory, async (s) => {
        await ready(s, 'alice');
        await ready(s, 'bob');
        await s.pushToInboxes(['alice'], T, 800);
        expect((await s.readInbox('bob', ALL)).tids).toEqual([]);
        await expect(s.readInbox('a:b', ALL)).rejects.toThrow(/readerId/);
        await expect(s.pushToInboxes(['ok', '{x}'], T, 800)).rejects.toThrow(/readerId/);
        await expect(s.appendToOutbox('a b', T, 800, TTL)).rejects.toThrow(/authorId/);
      });
    });

    it('reports what the inboxes hold: each inbox once, its tids, and on Redis its bytes and a time to live', async () => {
      await withStore(factory, async (s) => {
        expect(await s.inboxStats()).toMatchObject({ count: 0, entries: 0 });
        await ready(s, 'r1');
        await ready(s, 'r2');
        await s.pushToInboxes(['r1', 'r2'], T + 1, 800);
        await s.pushToInboxes(['r1'], T + 2, 800);
        await s.appendToOutbox('a1', T + 3, 800, TTL); // an outbox is not an inbox
        const stats = await s.inboxStats();
        expect(stats).toMatchObject({ count: 2, entries: 3 });
        if (stats.bytes !== null) expect(stats.bytes).toBeGreaterThan(0);
        if (stats.withoutTtl !== null) expect(stats.withoutTtl).toBe(0);
      });
    });

    it('fans out to many readers at once (1,200) and counts only prepared ones', async () => {
      await withStore(factory, async (s) => {
        const readers = Array.from({ length: 1_200 }, (_, i) => `r${i}`);
        for (const r of readers.filter((_, i) => i % 3 === 0)) await ready(s, r);
        expect(await s.pushToInboxes(readers, T + 7, 800)).toBe(400);
        expect((await s.readInbox('r999', ALL)).tids).toEqual([T + 7]);
        expect((await s.readInbox('r1000', ALL)).tids).toEqual([]);
      });
    });
  });
}
