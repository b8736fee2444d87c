/**
 * The ModelStore port contract (src/learn/model-store.ts), for every SQL engine. The factory returns a
 * store over an EMPTY, migrated database.
 *
 * Promises kept: neighbour rows read back as written (order, scores to float32, shared counts) and an
 * empty row deletes; popularity reads back and ranks by log score; a saved model is current and its
 * vectors read back bit for bit; an older model goes when a newer one is saved; an item's rows go
 * when it is erased.
 */
import { describe, expect, it } from 'vitest';
import type { ModelStore } from '../../src/learn/model-store.js';

export function modelStoreContract(name: string, open: () => Promise<ModelStore>): void {
  describe(`ModelStore contract: ${name}`, () => {
    it('neighbour rows read back as written; an empty row deletes', async () => {
      const s = await open();
      const row = [
        { itemId: 'b', score: 0.75, shared: 3 },
        { itemId: 'c', score: 0.5, shared: 1 },
      ];
      await s.writeNeighbours(
        [
          { itemId: 'a', neighbours: row },
          { itemId: 'x', neighbours: [{ itemId: 'a', score: 0.25, shared: 2 }] },
        ],
        1,
      );
      expect((await s.neighbours(['a', 'zz'])).get('a')).toEqual(row);
      expect((await s.neighbourItems()).sort()).toEqual(['a', 'x']);
      await s.writeNeighbours([{ itemId: 'a', neighbours: [] }], 2);
      expect((await s.neighbours(['a'])).size).toBe(0);
    });

    it('popularity reads back, ranks by log score, and null deletes', async () => {
      const s = await open();
      await s.writePopularity([
        { itemId: 'a', logScore: 3.5 },
        { itemId: 'b', logScore: 10.25 },
        { itemId: 'c', logScore: -2 },
      ]);
      expect(await s.topPopular(2)).toEqual([
        { itemId: 'b', logScore: 10.25 },
        { itemId: 'a', logScore: 3.5 },
      ]);
      await s.writePopularity([{ itemId: 'b', logScore: null }]);
      expect([...(await s.popularityOf(['a', 'b']))]).toEqual([['a', 3.5]]);
    });

    it('a saved model is current, its vectors read back bit for bit, and an older model goes', async () => {
      const s = await open();
      expect(await s.currentModel()).toBeNull();
      const v1 = Float32Array.from([1, 2, 3, 4, 0.5, -0.25]);
      await s.saveModel({ version: 10, factors: 2, trainedAtMs: 10, settings: { kind: 'als' } }, ['a', 'b', 'c'], v1);
      const v2 = Float32Array.from([Math.PI, -1e-7, 7, 8]);
      await s.saveModel({ version: 20, factors: 2, trainedAtMs: 20, settings: { kind: 'als' } }, ['p', 'q'], v2);
      expect(await s.currentModel()).toEqual({ version: 20, factors: 2, trainedAtMs: 20, settings: { kind: 'als' } });
      const loaded = await s.loadVectors(20);
      expect(loaded.itemIds).toEqual(['p', 'q']);
      expect(loaded.vectors).toEqual(v2);
      expect((await s.loadVectors(10)).itemIds).toEqual([]);
    });

    it('an erased item leaves its neighbour row, popularity and vectors', async () => {
      const s = await open();
      await s.writeNeighbours([{ itemId: 'a', neighbours: [{ itemId: 'b', score: 1, shared: 1 }] }], 1);
      await s.writePopularity([{ itemId: 'a', logScore: 1 }]);
      await s.saveModel(
        { version: 1, factors: 1, trainedAtMs: 1, settings: {} },
        ['a', 'b'],
        Float32Array.from([1, 2]),
      );
      expect(await s.eraseItems(['a'])).toBe(3);
      expect((await s.neighbours(['a'])).size).toBe(0);
      expect((await s.popularityOf(['a'])).size).toBe(0);
      expect((await s.loadVectors(1)).itemIds).toEqual(['b']);
    });
  });
}
