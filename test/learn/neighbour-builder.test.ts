/**
 * The learning room's builder (src/learn/builder.ts) over a real store: rows it keeps current
 * incrementally equal a full rebuild's, whatever came in between (new pairs, kinds taken back, readers
 * past the history cap, an erase); a tick spends at most its budget and the rest follows; a new
 * engagement reaches its items' rows at the next tick; popularity follows the pairs.
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { prng } from '../../src/kernel/prng.js';
import { PostgresInteractionStore } from '../../src/learn/adapters/postgres-interactions.js';
import { PostgresModelStore } from '../../src/learn/adapters/postgres-model-store.js';
import { LearnBuilder, type BuilderSettings } from '../../src/learn/builder.js';
import { EngagementGraph } from '../../src/learn/engagement-graph.js';
import { interactionWeight, kindBit, SIGNAL_KINDS, type Signal } from '../../src/learn/interactions.js';
import { allRows } from '../../src/learn/neighbours.js';
import { logAdd, logContribution } from '../../src/learn/popularity.js';
import { pglite, postgres } from '../support/contract.js';

const T0 = Date.UTC(2026, 11, 1);
const SETTINGS: BuilderSettings = { k: 6, shrink: 2, historyCap: 8, budget: 1e9, popularityHalfLifeMs: 3_600_000 };
const log = pino({ level: 'silent' });

/** The full rebuild: every pair read afresh into a new graph, every row computed. */
async function fullRebuild(store: PostgresInteractionStore) {
  const g = new EngagementGraph(SETTINGS.historyCap);
  await store.changes(null, (rows) => {
    g.apply(
      rows.map((r) => ({ readerId: r.readerId, itemId: r.itemId, weight: interactionWeight(r.kinds), atMs: r.atMs })),
    );
  });
  const rows = allRows(g.compact(), SETTINGS);
  const popularity = new Map<string, number>();
  for (let i = 0; i < g.items.size; i++) {
    let s = Number.NEGATIVE_INFINITY;
    for (const u of g.readersOf(i)) {
      const e = g.itemsOf(u).get(i)!;
      s = logAdd(s, logContribution(e.w, e.at, SETTINGS.popularityHalfLifeMs));
    }
    if (g.readersOf(i).size > 0) popularity.set(g.items.ids[i]!, s);
  }
  return { rows, popularity };
}

async function expectEqualsRebuild(store: PostgresInteractionStore, models: PostgresModelStore): Promise<void> {
  const { rows, popularity } = await fullRebuild(store);
  const stored = await models.neighbours([...rows.keys()]);
  expect((await models.neighbourItems()).sort()).toEqual([...rows.keys()].sort());
  for (const [item, row] of rows) {
    const got = stored.get(item) ?? [];
    expect(
      got.map((n) => n.itemId),
      `row of ${item}`,
    ).toEqual(row.map((n) => n.itemId));
    got.forEach((n, x) => expect(n.score).toBeCloseTo(row[x]!.score, 5)); // stored as float32
  }
  const pop = await models.popularityOf([...popularity.keys()]);
  for (const [item, s] of popularity) expect(pop.get(item), `popularity of ${item}`).toBeCloseTo(s, 9);
}

/** A random batch of signals over 12 readers and 25 items. */
function batch(rand: () => number, n: number, t: number): Signal[] {
  return Array.from({ length: n }, () => ({
    readerId: `r${Math.floor(rand() * 12)}`,
    itemId: `i${Math.floor(rand() * 25)}`,
    kind: SIGNAL_KINDS[Math.floor(rand() * 4)]!,
    atMs: t + Math.floor(rand() * 1000),
  }));
}

for (const engine of [pglite(), postgres()]) {
  describe(`learning builder on ${engine.name}`, () => {
    it('rows kept current incrementally equal a full rebuild after adds, take-backs, the history cap and an erase', async () => {
      const { sql } = await engine.place();
      const store = new PostgresInteractionStore(sql);
      const models = new PostgresModelStore(sql);
      const builder = new LearnBuilder(store, models, SETTINGS, log);
      const rand = prng(17);
      await store.add(batch(rand, 60, T0));
      await builder.settle(T0);
      await expectEqualsRebuild(store, models);
      for (let round = 1; round <= 4; round++) {
        const t = T0 + round * 10_000;
        await store.add(batch(rand, 25, t)); // pushes some readers past the cap of 8
        for (let k = 0; k < 4; k++)
          await store.remove(
            `r${Math.floor(rand() * 12)}`,
            `i${Math.floor(rand() * 25)}`,
            kindBit('view') | kindBit('like'),
          );
        const report = await builder.tick(t);
        expect(report.reloaded).toBe(false);
        await builder.settle(t);
        await expectEqualsRebuild(store, models);
      }
      await store.eraseReader('r3');
      const report = await builder.tick(T0 + 100_000);
      expect(report.reloaded).toBe(true);
      await builder.settle(T0 + 100_000);
      await expectEqualsRebuild(store, models);
    });

    it('a tick spends at most its budget (one row past it at least), and the next ticks finish the work', async () => {
      const { sql } = await engine.place();
      const store = new PostgresInteractionStore(sql);
      const models = new PostgresModelStore(sql);
      const builder = new LearnBuilder(store, models, { ...SETTINGS, budget: 40 }, log);
      await store.add(batch(prng(5), 80, T0));
      const first = await builder.tick(T0);
      expect(first.rows).toBeGreaterThan(0);
      expect(first.stale).toBeGreaterThan(0);
      expect(first.work).toBeLessThanOrEqual(40 + 8 * 12); // one row may pass it: a row's cost ≤ readers × cap
      const ticks = await builder.settle(T0);
      expect(ticks).toBeGreaterThan(1);
      await expectEqualsRebuild(store, models);
    });

    it('a reader trimmed by the history cap who takes a pair back gets its older pair back, as a rebuild reads it', async () => {
      const { sql } = await engine.place();
      const store = new PostgresInteractionStore(sql);
      const models = new PostgresModelStore(sql);
      const builder = new LearnBuilder(store, models, SETTINGS, log);
      const items = Array.from({ length: 10 }, (_, k) => `i${k}`); // 10 pairs: the cap of 8 drops i0 and i1
      await store.add(items.map((itemId, k) => ({ readerId: 'heavy', itemId, kind: 'like' as const, atMs: T0 + k })));
      await store.add(items.map((itemId) => ({ readerId: 'other', itemId, kind: 'like' as const, atMs: T0 })));
      await builder.settle(T0);
      await store.remove('heavy', 'i9', kindBit('like'));
      await builder.settle(T0 + 1);
      expect(builder.current.itemsOf(builder.current.readers.get('heavy')!).has(builder.current.items.get('i1')!)).toBe(
        true,
      );
      await expectEqualsRebuild(store, models);
    });

    it('a new engagement reaches its items’ rows at the next tick', async () => {
      const { sql } = await engine.place();
      const store = new PostgresInteractionStore(sql);
      const models = new PostgresModelStore(sql);
      const builder = new LearnBuilder(store, models, SETTINGS, log);
      await store.add([
        { readerId: 'a', itemId: 'x', kind: 'view', atMs: T0 },
        { readerId: 'a', itemId: 'y', kind: 'view', atMs: T0 },
      ]);
      await builder.settle(T0);
      expect((await models.neighbours(['x'])).get('x')?.map((n) => n.itemId)).toEqual(['y']);
      await store.add([
        { readerId: 'b', itemId: 'x', kind: 'like', atMs: T0 + 1 },
        { readerId: 'b', itemId: 'z', kind: 'like', atMs: T0 + 1 },
      ]);
      await builder.tick(T0 + 1);
      expect(
        (await models.neighbours(['x']))
          .get('x')
          ?.map((n) => n.itemId)
          .sort(),
      ).toEqual(['y', 'z']);
      expect((await models.neighbours(['z'])).get('z')?.map((n) => n.itemId)).toEqual(['x']);
    });
  });
}
