/**
 * The shared in-process vector index (src/discover/adapters/viewed-vector-index.ts): a snapshot's HNSW
 * graph viewed memory-mapped plus the process's changes since. It answers as the private index it was
 * saved from; upserts, updates and removals since the base are served and never the superseded codes;
 * an exact search (k a quarter of the index or more) scans the codes file; a rebase folds the changes
 * into a new generation that answers the same; and two searches of one data folder (two worker
 * processes) both end up viewing one generation, each holding a fraction of a private copy's bytes,
 * one rebasing at a time, the other switching to it on its catch-up.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdTable } from '../../src/discover/adapters/id-table.js';
import { InProcessSearch, type InProcessSettings } from '../../src/discover/adapters/in-process-search.js';
import { MemoryVectorIndex, type MemoryIndexSettings } from '../../src/discover/adapters/memory-vector-index.js';
import type { PostgresDiscoverIndex } from '../../src/discover/adapters/postgres-discover-index.js';
import { PostgresEmbeddingFeed } from '../../src/discover/adapters/postgres-embedding-feed.js';
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import { VectorSnapshots } from '../../src/discover/adapters/vector-snapshot.js';
import { ViewedVectorIndex } from '../../src/discover/adapters/viewed-vector-index.js';
import { cosine, quantize } from '../../src/discover/embedding.js';
import type { Sql } from '../../src/kernel/sql/sql.js';
import { until } from '../support/faults.js';
import {
  clientEmbedding,
  openWriterFixture,
  randomVectors,
  searchSettings,
  type WriterFixture,
} from '../support/vectors.js';

const DIM = 24;
const NOW = Date.UTC(2026, 10, 28);
const { unit: randomVec } = randomVectors(20, DIM);
const GRAPH: MemoryIndexSettings = { exactMax: 100, connectivity: 16, expansionAdd: 64, expansionSearch: 200 };
const META = { identity: 'db', watermark: 'w', dim: DIM, settings: GRAPH };

/** The int8 query's cosine to codes `v` (what usearch's int8 scan measures; the exact scan's order). */
const cos8 = (q: Float32Array, v: Int8Array) => cosine(Float32Array.from(quantize(q)), v);

/**
 * Whether `hits` are an exact k nearest of `held` to `q` as an exact scan picks them: k distinct held
 * items, none farther than the exact k-th (within float rounding: usearch measures in float32).
 */
const exactly = (hits: { itemId: string }[], held: Map<string, Int8Array>, q: Float32Array, k: number) => {
  const all = [...held.values()].map((v) => cos8(q, v)).sort((a, b) => b - a);
  const cutoff = all[Math.min(k, all.length) - 1]!;
  expect(hits).toHaveLength(Math.min(k, held.size));
  expect(new Set(hits.map((h) => h.itemId)).size).toBe(hits.length);
  for (const h of hits) expect(cos8(q, held.get(h.itemId)!)).toBeGreaterThanOrEqual(cutoff - 1e-5);
};

describe('IdTable', () => {
  it('maps slots to ids and back, free slots included, unicode ids too', () => {
    const ids = ['a', null, 'héllo-✓', 'b', null, ...Array.from({ length: 500 }, (_, i) => `item-${i}`)];
    const t = IdTable.from(ids);
    expect(t.slots).toBe(ids.length);
    expect(t.live).toBe(ids.length - 2);
    ids.forEach((id, slot) => {
      expect(t.idOf(slot)).toBe(id);
      if (id) expect(t.slotOf(id)).toBe(slot);
    });
    expect(t.slotOf('missing')).toBe(-1);
    expect(t.slotOf('')).toBe(-1);
    expect(t.idOf(ids.length)).toBeNull();
    expect(t.toArray()).toEqual(ids);
  });

  it("packs a snapshot's ids.json straight from its bytes, the same table; anything else is left to JSON.parse", () => {
    const ids = ['a', null, 'b-c.d_e', null, ...Array.from({ length: 300 }, (_, i) => `x${i}`)];
    const fromJson = IdTable.fromJson(Buffer.from(JSON.stringify(ids)))!;
    expect(fromJson.toArray()).toEqual(ids);
    expect(fromJson.live).toBe(ids.length - 2);
    ids.forEach((id, slot) => id && expect(fromJson.slotOf(id)).toBe(slot));
    expect(IdTable.fromJson(Buffer.from('[]'))!.slots).toBe(0);
    for (const other of ['["a\\"b"]', '["a"', '[""]', '["a",]', '[nul]', '{"a":1}', '["a" ,"b"]'])
      expect(IdTable.fromJson(Buffer.from(other)), other).toBeNull();
  });
});

describe.each(['memory', 'file'] as const)('ViewedVectorIndex, codes in %s', (codesAt) => {
  const dir = mkdtempSync(join(tmpdir(), 'freshet-viewed-'));
  const snapshots = new VectorSnapshots(dir);
  const held = new Map<string, Int8Array>();
  let privateIndex: MemoryVectorIndex;
  let viewed: ViewedVectorIndex;

  beforeAll(async () => {
    privateIndex = new MemoryVectorIndex(DIM, GRAPH);
    for (let i = 0; i < 1500; i++) {
      const codes = quantize(randomVec());
      held.set(`v${i}`, codes);
      privateIndex.upsert(`v${i}`, codes);
    }
    privateIndex.remove('v7'); // a free slot in the base
    held.delete('v7');
    await privateIndex.built();
    expect(privateIndex.mode).toBe('hnsw');
    await snapshots.save(privateIndex.snapshot(), META);
    const snap = (await snapshots.load('db', DIM, GRAPH))!;
    expect(snap.hasGraph).toBe(true);
    viewed = await ViewedVectorIndex.open(snap, GRAPH, codesAt);
  });
  afterAll(() => {
    viewed.close();
    privateIndex.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers what the private index it was saved from answers, from a fraction of its private bytes', () => {
    expect(viewed.size).toBe(1499);
    for (let i = 0; i < 20; i++) {
      const q = randomVec();
      const ids = (hits: { itemId: string }[]) => hits.map((h) => h.itemId).sort();
      expect(ids(viewed.search(q, 20))).toEqual(ids(privateIndex.search(q, 20)));
    }
    const hit = viewed.search(randomVec(), 1)[0]!;
    expect(hit.vector).toEqual(held.get(hit.itemId)); // the exact codes, read from the codes file
    // the graph file, and the codes file when read from it, are the host's: not in bytes()
    expect(viewed.sharedBytes()).toBeGreaterThan(1500 * (codesAt === 'file' ? 2 * DIM : DIM));
    expect(viewed.bytes() * 5).toBeLessThan(privateIndex.bytes());
  });

  it('serves upserts, updates and removals since the base, never a superseded vector; an exact search scans the file', () => {
    const fresh = randomVec();
    const moved = randomVec();
    viewed.upsert('new', quantize(fresh));
    viewed.upsert('v1', quantize(moved));
    viewed.remove('v2');
    viewed.remove('v7'); // never held: a no-op
    held.set('new', quantize(fresh));
    held.set('v1', quantize(moved));
    held.delete('v2');
    expect(viewed.size).toBe(held.size);
    expect(viewed.search(fresh, 1)[0]!.itemId).toBe('new');
    expect(viewed.search(moved, 1)[0]!.itemId).toBe('v1');
    expect(viewed.holds('v1', quantize(moved))).toBe(true);
    expect(viewed.holds('v3', held.get('v3')!)).toBe(true);
    expect(viewed.holds('v2', quantize(randomVec()))).toBe(false);
    for (const k of [400, 1000, 5000]) {
      const q = randomVec();
      const all = viewed.search(q, k); // a quarter of the index or more: exact, base file + delta
      exactly(all, held, q, k);
      if (k >= held.size) expect(all.find((h) => h.itemId === 'v1')?.vector).toEqual(quantize(moved));
      expect(all.every((h) => cosine(Float32Array.from(h.vector), held.get(h.itemId)!) > 0.9999)).toBe(true);
    }
    expect(() => viewed.upsert('bad', new Int8Array(DIM - 1))).toThrow(/components/);
  });

  it('a rebase folds the changes into a new generation that answers the same, the free slots reused', async () => {
    const writer = viewed.snapshot();
    expect(writer.graph).toBe(true);
    const generation = await snapshots.save(writer, { ...META, watermark: 'w2' });
    const snap = (await snapshots.load('db', DIM, GRAPH))!;
    expect(snap.generation).toBe(generation);
    expect(snap.watermark).toBe('w2');
    expect(snap.ids.slots).toBe(1500); // 'new' took a freed slot: no slot added
    const next = await ViewedVectorIndex.open(snap, GRAPH, codesAt);
    try {
      expect(next.size).toBe(held.size);
      expect(next.bytes()).toBeLessThan(viewed.bytes()); // no delta left
      for (let i = 0; i < 5; i++) {
        const q = randomVec();
        exactly(next.search(q, 1000), held, q, 1000);
        // the graph (k 10): approximate, but on 1,500 items with ef 200 the 10 it finds are the nearest
        // ones up to an odd miss
        const best = [...held]
          .sort((a, b) => cos8(q, b[1]) - cos8(q, a[1]))
          .slice(0, 10)
          .map((e) => e[0]);
        const top = next.search(q, 10).map((h) => h.itemId);
        expect(top.filter((id) => best.includes(id)).length).toBeGreaterThanOrEqual(9);
      }
      expect(next.holds('v1', held.get('v1')!)).toBe(true);
    } finally {
      next.close();
    }
  });

  it("an erase's scrubbed rebase builds the graph afresh: a removed item's node is not in the file, the answers the same", async () => {
    const snap = (await snapshots.load('db', DIM, GRAPH))!;
    const base = await ViewedVectorIndex.open(snap, GRAPH, codesAt);
    try {
      for (let i = 10; i < 60; i++) {
        base.remove(`v${i}`);
        held.delete(`v${i}`);
      }
      const sizes: number[] = [];
      for (const scrub of [false, true]) {
        const generation = await snapshots.save(base.snapshot({ scrub }), { ...META, watermark: `s${scrub}` });
        const at = (await snapshots.load('db', DIM, GRAPH))!;
        expect(at.generation).toBe(generation);
        sizes.push(statSync(at.files.graph).size);
        const next = await ViewedVectorIndex.open(at, GRAPH, codesAt);
        try {
          expect(next.size).toBe(held.size);
          const q = randomVec();
          exactly(next.search(q, 1000), held, q, 1000); // the held items, and only them
        } finally {
          next.close();
        }
      }
      // a plain rebase keeps the 50 removed nodes (usearch keeps their vectors); the scrubbed one holds none
      expect(sizes[1]!).toBeLessThan(sizes[0]! - (40 * sizes[0]!) / 1500);
    } finally {
      base.close();
    }
  });
});

describe('two processes of one host share the in-process index (PGlite)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-shared-'));
  let sql: Sql;
  let writer: PostgresDiscoverIndex;
  const settings = (): InProcessSettings => searchSettings(GRAPH, dataDir);
  const put = (id: string, v: Float32Array) => writer.putEmbeddings([clientEmbedding(id, v)], NOW);
  /** The ids of the snapshot in force, as its files hold them. */
  const idsOnDisk = async (): Promise<(string | null)[]> => {
    const snap = await new VectorSnapshots(dataDir).load(await identity(), DIM, GRAPH);
    return snap ? snap.ids.toArray() : [];
  };
  const identity = () => new PostgresEmbeddingFeed(sql).identity();

  let fixture: WriterFixture;
  beforeAll(async () => {
    const records = Array.from({ length: 800 }, (_, i) => clientEmbedding(`s${i}`, randomVec()));
    fixture = await openWriterFixture(DIM, settings(), records, NOW, dataDir);
    ({ sql, writer } = fixture);
  }, 60_000);
  afterAll(() => fixture.close());

  it('the first builds privately, snapshots and then views; the second views at once; one rebase serves both', async () => {
    const a = new InProcessSearch(sql, DIM, settings());
    await a.ready();
    expect(a.startReport?.from).toBe('postgres');
    const privateBytes = a.stats().bytes;
    // its own snapshot, written once the graph completed, comes in force: its next catch-up views it
    await until(async () => {
      await a.sync();
      return a.stats().sharedBytes !== undefined;
    }, 30_000);
    expect(a.stats()).toMatchObject({ kind: 'hnsw', size: 800 });
    expect(a.stats().sharedBytes).toBeGreaterThan(0);
    expect(a.stats().bytes * 4).toBeLessThan(privateBytes); // 24 dimensions: ids, codes and graph ~350 B an item

    const b = new InProcessSearch(sql, DIM, settings());
    await b.ready();
    expect(b.startReport?.from).toBe('snapshot');
    expect(b.stats().sharedBytes).toBe(a.stats().sharedBytes);

    // another process writes 150 embeddings (over the rebase threshold of 100) and moves one
    const added = Array.from({ length: 150 }, () => randomVec());
    await writer.putEmbeddings(
      added.map((v, i) => clientEmbedding(`n${i}`, v)),
      NOW,
    );
    const moved = randomVec();
    await put('s3', moved);
    const before = await new VectorSnapshots(dataDir).generation();
    await Promise.all([a.sync(), b.sync()]); // both catch up; both want a rebase, one takes the lock
    await until(async () => (await new VectorSnapshots(dataDir).generation()) !== before, 30_000);
    const after = await new VectorSnapshots(dataDir).generation();
    await Promise.all([a.sync(), b.sync()]); // both switch to the rebased generation
    expect(a.stats()).toMatchObject({ generation: after, size: 950 });
    expect(b.stats()).toMatchObject({ generation: after, size: 950 });
    expect((await b.search(moved, 1))[0]!.itemId).toBe('s3');
    await Promise.all([a.close(), b.close()]); // no second rebase: nothing changed since
    expect(await new VectorSnapshots(dataDir).generation()).toBe(after);

    const c = new InProcessSearch(sql, DIM, settings());
    await c.ready();
    expect(c.startReport).toMatchObject({ from: 'snapshot', rows: 0 }); // the rebase holds every change
    expect(c.stats().size).toBe(950);
    expect((await c.search(added[7]!, 1))[0]!.itemId).toBe('n7');
    expect((await c.search(moved, 1))[0]!.itemId).toBe('s3');
    await c.close();
  });

  it('two processes starting together on an empty data folder build one graph: the other serves the exact scan, then views its snapshot', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'freshet-shared-first-'));
    try {
      const [a, b] = [0, 1].map(() => new InProcessSearch(sql, DIM, { ...settings(), dataDir: fresh }));
      await Promise.all([a!.ready(), b!.ready()]);
      const kinds = [a!.stats().kind, b!.stats().kind].sort();
      expect(kinds).toEqual(['exact', 'hnsw']); // one built (the build lock's holder), one did not
      const q = randomVec();
      // both answer: the exact scan and the graph agree on the nearest (the graph up to an odd miss)
      const exact = (await b!.search(q, 5)).map((h) => h.itemId);
      const graph = (await a!.search(q, 5)).map((h) => h.itemId);
      expect(graph.filter((id) => exact.includes(id)).length).toBeGreaterThanOrEqual(4);
      await until(async () => {
        await Promise.all([a!.sync(), b!.sync()]);
        return a!.stats().generation !== undefined && a!.stats().generation === b!.stats().generation;
      }, 30_000);
      expect(b!.stats()).toMatchObject({ kind: 'hnsw', size: a!.stats().size });
      await Promise.all([a!.close(), b!.close()]);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('at close, a viewed index rebases when items were deleted since its snapshot: their id and codes leave the files', async () => {
    const content = new PostgresContentStore(sql, { ownsSql: false });
    const gone = randomVec();
    await put('gone', gone);
    // with 120 more: over the rebase threshold, so a rebase puts 'gone' into the snapshot viewed
    await writer.putEmbeddings(
      Array.from({ length: 120 }, (_, i) => clientEmbedding(`g${i}`, randomVec())),
      NOW,
    );
    const item = { id: 'gone', authorId: 'erased', title: 'gone', text: '', url: null, tags: [], popularity: 0 };
    await content.upsertItems([{ ...item, publishedAt: NOW - 1 }], NOW);
    const a = new InProcessSearch(sql, DIM, settings());
    await a.ready();
    // the item in the snapshot the process views
    await until(async () => {
      await a.sync();
      return a.stats().generation !== undefined && (await idsOnDisk()).includes('gone');
    }, 30_000);
    expect(await content.deleteItem('gone', NOW)).toBe(true); // one deletion: far below the rebase threshold
    await a.sync();
    expect((await a.search(gone, 1))[0]!.itemId).not.toBe('gone');
    const viewed = a.stats().generation;
    await a.close();
    expect(await new VectorSnapshots(dataDir).generation()).not.toBe(viewed);
    expect(await idsOnDisk()).not.toContain('gone');
  });

  it('at close, a process that has not caught up with a deletion yet catches up first: the rebase drops it', async () => {
    const content = new PostgresContentStore(sql, { ownsSql: false });
    const late = randomVec();
    await put('late', late);
    await writer.putEmbeddings(
      Array.from({ length: 120 }, (_, i) => clientEmbedding(`l${i}`, randomVec())),
      NOW,
    );
    const item = { id: 'late', authorId: 'erased', title: 'late', text: '', url: null, tags: [], popularity: 0 };
    await content.upsertItems([{ ...item, publishedAt: NOW - 1 }], NOW);
    const a = new InProcessSearch(sql, DIM, settings());
    await a.ready();
    await until(async () => {
      await a.sync();
      return a.stats().generation !== undefined && (await idsOnDisk()).includes('late');
    }, 30_000);
    // deleted (an erase through another process) after this process's last catch-up (its timer: 1 h)
    expect(await content.deleteItem('late', NOW)).toBe(true);
    await a.close();
    expect(await idsOnDisk()).not.toContain('late');
  });
});
