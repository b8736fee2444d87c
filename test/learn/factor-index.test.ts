/**
 * The factor model served (src/learn/factor-model.ts): a reader's candidates are the items of highest dot
 * product with its folded-in vector, best first, its own items left out — equal to a brute-force ranking;
 * a newer model is picked up when its version changes.
 */
import { describe, expect, it } from 'vitest';
import { prng } from '../../src/kernel/prng.js';
import { PostgresModelStore } from '../../src/learn/adapters/postgres-model-store.js';
import { foldIn, gram } from '../../src/learn/als.js';
import { FactorIndex, FactorTrainer } from '../../src/learn/factor-model.js';
import { PostgresInteractionStore } from '../../src/learn/adapters/postgres-interactions.js';
import { LearnBuilder } from '../../src/learn/builder.js';
import { pino } from 'pino';
import { pglite } from '../support/contract.js';

const engine = pglite();
const F = 8;
const S = { regularization: 2, alpha: 1 };

describe('factor index', () => {
  it('ranks by dot product with the folded-in reader, leaves out the history, and follows a new model', async () => {
    const { sql } = await engine.place();
    const models = new PostgresModelStore(sql);
    const rand = prng(9);
    const ids = Array.from({ length: 300 }, (_, k) => `i${k}`);
    const vectors = Float32Array.from({ length: 300 * F }, () => rand() * 2 - 1);
    await models.saveModel({ version: 1, factors: F, trainedAtMs: 1, settings: {} }, ids, vectors);
    let now = 0;
    const index = new FactorIndex(models, { ...S, pollMs: 1000 }, () => now);
    const history = new Map([
      ['i3', 4],
      ['i77', 1],
      ['i150', 3],
    ]);
    const got = await index.candidates(history, 20);
    // brute force over the model as stored (ids sorted: loadVectors reads them by id)
    const loaded = await models.loadVectors(1);
    const row = new Map(loaded.itemIds.map((id, k) => [id, k]));
    const x = foldIn(
      loaded.vectors,
      gram(loaded.vectors, 300, F),
      [...history].map(([id, w]) => ({ row: row.get(id)!, weight: w })),
      { ...S, factors: F },
    )!;
    const dot = (k: number) => x.reduce((s, v, a) => s + v * loaded.vectors[k * F + a]!, 0);
    const expected = loaded.itemIds
      .map((id, k) => ({ id, s: dot(k) }))
      .filter((c) => !history.has(c.id))
      .sort((a, b) => b.s - a.s)
      .slice(0, 20);
    expect(got.map((c) => c.itemId)).toEqual(expected.map((c) => c.id));
    got.forEach((c, k) => expect(c.score).toBeCloseTo(expected[k]!.s, 4));
    // a newer model: picked up once the poll interval passed
    await models.saveModel(
      { version: 2, factors: F, trainedAtMs: 2, settings: {} },
      ['only'],
      Float32Array.from({ length: F }, () => 1),
    );
    expect((await index.candidates(new Map([['i3', 1]]), 5)).length).toBe(5);
    now = 2000;
    await index.candidates(new Map([['only', 1]]), 5);
    expect(index.current?.version).toBe(2);
    expect(await index.candidates(new Map([['i3', 1]]), 5)).toEqual([]);
  });

  it('a training saves a newer model whatever the clock did since the stored one, and a stopped one saves nothing', async () => {
    const { sql } = await engine.place();
    const models = new PostgresModelStore(sql);
    const store = new PostgresInteractionStore(sql);
    const log = pino({ level: 'silent' });
    const builder = new LearnBuilder(
      store,
      models,
      { k: 5, shrink: 0, historyCap: 50, budget: 1e9, popularityHalfLifeMs: 1e6 },
      log,
    );
    const als = { factors: 2, regularization: 1, alpha: 1, iterations: 2, cgSteps: 2, seed: 1 };
    await store.add([
      { readerId: 'a', itemId: 'x', kind: 'like', atMs: 1 },
      { readerId: 'a', itemId: 'y', kind: 'like', atMs: 1 },
    ]);
    await builder.settle(1);
    // a model of a later clock is stored (another run, a replay's virtual time); this process restarts earlier
    await models.saveModel(
      { version: 5_000, factors: 2, trainedAtMs: 5_000, settings: {} },
      ['x'],
      Float32Array.from([1, 0]),
    );
    const saved = await new FactorTrainer(builder, models, als, log).train(100);
    expect(saved?.version).toBe(5_001);
    expect((await models.currentModel())?.version).toBe(5_001);
    const stopped = new FactorTrainer(builder, models, als, log);
    stopped.stop();
    expect(await stopped.train(200)).toBeNull();
    expect((await models.currentModel())?.version).toBe(5_001);
  });
});
