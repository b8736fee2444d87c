/**
 * The InteractionStore port contract (src/learn/interactions.ts), for every SQL engine. The factory
 * returns a store over an EMPTY, migrated database.
 *
 * Promises kept: kinds are OR-ed per pair and the later time kept, also across concurrent adds; a removal clears kinds and leaves a
 * tombstone the change feed still carries; the change feed misses nothing written after its watermark
 * and pages through more than one page; a reader's history is its positive pairs, newest first; an
 * erase removes every pair of the reader, keeps no id and moves the erasure count; retention tombstones
 * old pairs, then deletes old tombstones.
 */
import { describe, expect, it } from 'vitest';
import {
  interactionWeight,
  kindBit,
  type InteractionRow,
  type InteractionStore,
} from '../../src/learn/interactions.js';

const T0 = Date.UTC(2026, 11, 1);

/** Every change after `since`, as one list. */
async function changesOf(store: InteractionStore, since: string | null): Promise<InteractionRow[]> {
  const out: InteractionRow[] = [];
  await store.changes(since, (rows) => {
    out.push(...rows);
  });
  return out;
}

export function interactionStoreContract(name: string, open: () => Promise<InteractionStore>): void {
  describe(`InteractionStore contract: ${name}`, () => {
    it('ORs kinds per pair, keeps the later time, and weighs a view and a like 1 + 3', async () => {
      const s = await open();
      await s.add([
        { readerId: 'r1', itemId: 'i1', kind: 'view', atMs: T0 + 10 },
        { readerId: 'r1', itemId: 'i1', kind: 'like', atMs: T0 + 5 },
        { readerId: 'r1', itemId: 'i2', kind: 'view', atMs: T0 },
      ]);
      await s.add([{ readerId: 'r1', itemId: 'i1', kind: 'view', atMs: T0 + 1 }]);
      const h = await s.history('r1', 10);
      expect(h.map((r) => [r.itemId, r.kinds, r.atMs])).toEqual([
        ['i1', kindBit('view') | kindBit('like'), T0 + 10],
        ['i2', kindBit('view'), T0],
      ]);
      expect(interactionWeight(h[0]!.kinds)).toBe(4);
      expect(await s.history('nobody', 10)).toEqual([]);
    });

    it('concurrent adds (a view each, as concurrent requests send them) all land, one pair OR-ed across callers', async () => {
      const s = await open();
      const kinds = ['view', 'like', 'share', 'reply'] as const;
      await Promise.all([
        ...Array.from({ length: 40 }, (_, i) =>
          s.add([{ readerId: `c${i}`, itemId: 'i1', kind: 'view', atMs: T0 + i }]),
        ),
        ...kinds.map((kind, i) => s.add([{ readerId: 'c0', itemId: 'i2', kind, atMs: T0 + 100 + i }])),
      ]);
      for (let i = 0; i < 40; i++) expect((await s.history(`c${i}`, 10)).some((r) => r.itemId === 'i1')).toBe(true);
      const both = (await s.history('c0', 10)).find((r) => r.itemId === 'i2');
      expect([both?.kinds, both?.atMs]).toEqual([kinds.reduce((k, kind) => k | kindBit(kind), 0), T0 + 103]);
    });

    it('a removal leaves a tombstone in the change feed and the pair out of the history', async () => {
      const s = await open();
      await s.add([{ readerId: 'r1', itemId: 'i1', kind: 'like', atMs: T0 }]);
      const w = await s.watermark();
      expect(await s.remove('r1', 'i1', kindBit('like'))).toBe(1);
      expect(await s.remove('r1', 'i1', kindBit('like'))).toBe(0);
      expect(await s.history('r1', 10)).toEqual([]);
      expect(await changesOf(s, w)).toEqual([{ readerId: 'r1', itemId: 'i1', kinds: 0, atMs: T0 }]);
    });

    it('the change feed gives every pair written after the watermark, over several pages, and nothing before', async () => {
      const s = await open();
      await s.add([{ readerId: 'old', itemId: 'i0', kind: 'view', atMs: T0 }]);
      const w = await s.watermark();
      const signals = Array.from({ length: 5200 }, (_, k) => ({
        readerId: `r${k % 50}`,
        itemId: `i${k}`,
        kind: 'view' as const,
        atMs: T0 + k,
      }));
      await s.add(signals);
      const after = await changesOf(s, w);
      expect(after.length).toBe(5200);
      expect(new Set(after.map((r) => r.itemId)).size).toBe(5200);
      expect((await changesOf(s, null)).length).toBe(5201);
    });

    it('an erase removes the reader’s pairs (none left, not even tombstones) and counts an erasure', async () => {
      const s = await open();
      await s.add([
        { readerId: 'gone', itemId: 'i1', kind: 'view', atMs: T0 },
        { readerId: 'gone', itemId: 'i2', kind: 'share', atMs: T0 },
        { readerId: 'kept', itemId: 'i1', kind: 'view', atMs: T0 },
      ]);
      const before = await s.erasures();
      expect(await s.eraseReader('gone')).toBe(2);
      expect(await s.erasures()).toBe(before + 1);
      const all = await changesOf(s, null);
      expect(all.map((r) => r.readerId)).toEqual(['kept']);
      expect(await s.exportReader('gone', 10)).toEqual([]);
      expect((await s.exportReader('kept', 10)).map((r) => r.itemId)).toEqual(['i1']);
    });

    it('retention tombstones pairs older than the cut, then deletes old tombstones', async () => {
      const s = await open();
      await s.add([
        { readerId: 'r', itemId: 'old', kind: 'view', atMs: T0 - 100 },
        { readerId: 'r', itemId: 'new', kind: 'view', atMs: T0 },
      ]);
      expect(await s.expire(T0 - 50, T0 - 1000)).toEqual([1, 0]);
      expect((await s.history('r', 10)).map((r) => r.itemId)).toEqual(['new']);
      expect(await s.expire(T0 - 50, T0 - 50)).toEqual([0, 1]);
      expect((await changesOf(s, null)).map((r) => r.itemId)).toEqual(['new']);
    });
  });
}
