/**
 * The DiscoverIndex contract (src/ports/discover-index.ts) on both SQL engines — PGlite in memory and
 * the PostgreSQL server (a schema of its own, dropped afterwards): the vector search without pgvector
 * (probed buckets → Hamming pool in SQL → exact cosine), the liveness check of a cached pool, the keyset
 * streams, and the catch-up of missing embeddings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresContentStore } from '../src/adapters/postgres/content-store.js';
import { PostgresDiscoverIndex, mergeRanges } from '../src/adapters/postgres/discover-index.js';
import { migrate } from '../src/adapters/postgres/migrations.js';
import { openPglite, openPostgres, type Sql } from '../src/adapters/postgres/sql.js';
import { cosine, normalize, prefixBits, probeRanges, sketchOf } from '../src/domain/embedding.js';
import type { ItemInput } from '../src/ports/content-store.js';
import { prng } from '../src/domain/prng.js';
import { DiscoverEmbeddings } from '../src/services/discover-embeddings.js';
import { TEST_DATABASE_URL, uniqueSchema } from './support/env.js';

const DIM = 32;
const N = 2000;
const NOW = Date.UTC(2016, 8, 20);
const PROBES = 16;
const SCAN_ROWS = 200; // 2,000 rows → a 7-bit prefix: the probes really restrict the scan

const rnd = prng(42);
const gauss = () => Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd());
const randomVec = () => normalize(Array.from({ length: DIM }, gauss));
const nudge = (v: ArrayLike<number>, eps: number) => normalize(Array.from(v, (x) => x + eps * gauss()));

const base = randomVec();
/** near0..near4 close to `base` (cosine ≈ 0.99), the rest random. */
const vectors = new Map<string, Float32Array>();
for (let i = 0; i < 5; i++) vectors.set(`near${i}`, nudge(base, 0.02));
for (let i = 0; i < N; i++) vectors.set(`x${i}`, randomVec());

/** x<i> is by a<i mod 50>; the near items by `n`. */
const authorOf = (id: string) => (id.startsWith('x') ? `a${Number(id.slice(1)) % 50}` : 'n');
const item = (id: string, author: string, publishedAt: number): ItemInput => ({ id, authorId: author, title: id, text: '', url: null, tags: [], publishedAt, popularity: 0 });

const engines: { name: string; open: () => Promise<Sql>; cleanup?: (sql: Sql) => Promise<void> }[] = [
  { name: 'PGlite (memory)', open: () => openPglite('memory://') },
  (() => {
    const schema = uniqueSchema();
    return { name: `PostgreSQL server (schema ${schema})`, open: () => openPostgres(TEST_DATABASE_URL, { schema }), cleanup: (sql: Sql) => sql.exec(`DROP SCHEMA ${schema} CASCADE`) };
  })(),
];

for (const engine of engines) {
  describe(`DiscoverIndex on ${engine.name}`, () => {
    let sql: Sql;
    let index: PostgresDiscoverIndex;
    let content: PostgresContentStore;
    let emb: DiscoverEmbeddings;

    beforeAll(async () => {
      sql = await engine.open();
      await migrate(sql);
      index = new PostgresDiscoverIndex(sql);
      content = new PostgresContentStore(sql, { ownsSql: false });
      emb = new DiscoverEmbeddings(index, { dim: DIM, halfLifeMs: 7 * 86_400_000, signalLimit: 50, probes: PROBES, scanRows: SCAN_ROWS });
      const ids = [...vectors.keys()];
      await emb.store(emb.records(ids.map((id) => ({ id, title: id, text: '', tags: [] })), ids.map((id) => Array.from(vectors.get(id)!))), NOW);
      await content.upsertItems(ids.map((id, i) => item(id, authorOf(id), NOW - 1000 - i)), NOW);
    }, 60_000);
    afterAll(async () => {
      await engine.cleanup?.(sql);
      await sql.close();
    });

    const search = async (v: Float32Array, opts: { readerId?: string; untilMs?: number; pool?: number } = {}) => {
      const s = sketchOf(v);
      const ranges = probeRanges(s, prefixBits(await index.countEmbeddings(), PROBES, SCAN_ROWS), PROBES);
      const rows = await index.nearest({ sketch: s.bits, ranges, untilMs: opts.untilMs ?? NOW, pool: opts.pool ?? 50, readerId: opts.readerId ?? 'nobody' });
      return rows.map((r) => ({ id: r.id, cos: cosine(v, r.vector) })).sort((a, b) => b.cos - a.cos);
    };

    it('ranks the nearest items by cosine first, having scanned only the probed buckets', async () => {
      expect(prefixBits(N + 5, PROBES, SCAN_ROWS)).toBeGreaterThan(0);
      const found = await search(base);
      expect(found.length).toBeGreaterThan(0);
      expect(found.length).toBeLessThanOrEqual(50);
      expect(found.slice(0, 5).map((r) => r.id).sort()).toEqual(['near0', 'near1', 'near2', 'near3', 'near4']);
      expect(found[0]!.cos).toBeGreaterThan(0.95);
      expect(found[5]!.cos).toBeLessThan(0.8);
    });

    it('finds an exact match through its own bucket (int8 codes: cosine ≈ 1)', async () => {
      for (const id of ['x7', 'x1234', 'x1999']) {
        const found = await search(vectors.get(id)!, { pool: 5 });
        expect(found[0]!.id).toBe(id);
        expect(found[0]!.cos).toBeGreaterThan(0.999);
      }
    });

    it('never returns deleted items, items after untilMs, or the reader’s own items', async () => {
      expect(await content.deleteItem('near0', NOW)).toBe(true);
      const ids = (await search(base)).map((r) => r.id);
      expect(ids).not.toContain('near0');
      expect(ids).toContain('near1');
      expect((await search(base, { untilMs: NOW - 1000 - 2 })).map((r) => r.id)).not.toContain('near1'); // near1 published at NOW-1001
      const own = (await search(vectors.get('x7')!, { readerId: 'a7', pool: 5 })).map((r) => r.id); // x7's author is a7
      expect(own).not.toContain('x7');
    });

    it('live: the given ids that are items not deleted (near0 was deleted above)', async () => {
      expect([...(await index.live(['near0', 'near1', 'x7', 'x7', 'no-such-item']))].sort()).toEqual(['near1', 'x7']);
      expect((await index.live([])).size).toBe(0);
    });

    it('merges touching probe ranges', () => {
      expect(mergeRanges([{ lo: 8, hi: 12 }, { lo: 0, hi: 4 }, { lo: 4, hi: 8 }, { lo: 20, hi: 24 }])).toEqual([{ lo: 0, hi: 12 }, { lo: 20, hi: 24 }]);
    });

    it('catches up missing embeddings once each, whatever clock wrote the items', async () => {
      const later = NOW + 86_400_000; // items written on a later (virtual) clock than the catch-up
      await content.upsertItems([item('late0', 'b', NOW - 5), item('late1', 'b', NOW - 6)], later);
      expect(await emb.embedMissing(NOW, 1)).toBe(2);
      expect(await emb.embedMissing(NOW, 1)).toBe(0);
      await content.upsertItems([{ ...item('late0', 'b', NOW - 5), title: 'rewritten' }], later + 1);
      expect(await index.missingEmbeddings(null, 10)).toMatchObject([{ id: 'late0', updateTime: later + 1 }]);
      expect(await index.missingEmbeddings('late0', 10)).toEqual([]);
    });

    it('streams newest items by (published_at, id) after a position, without followed authors and the reader', async () => {
      await sql.exec(`INSERT INTO users (id, created_at) VALUES ('rd', 0), ('a1', 0) ON CONFLICT DO NOTHING`);
      await sql.exec(`INSERT INTO follows (follower_id, followee_id, created_at) VALUES ('rd', 'a1', 0) ON CONFLICT DO NOTHING`);
      const first = await index.newest('rd', NOW, null, 10);
      expect(first).toHaveLength(10);
      expect(first.every((r) => r.authorId !== 'a1')).toBe(true);
      for (let i = 1; i < first.length; i++) expect(first[i]!.key).toBeLessThanOrEqual(first[i - 1]!.key);
      const next = await index.newest('rd', NOW, first[9]!, 5);
      expect(next[0]!.key).toBeLessThanOrEqual(first[9]!.key);
      expect(first.map((r) => r.id)).not.toContain(next[0]!.id);
      const followed = await index.followed('rd', NOW, null, 100);
      expect(followed.length).toBe(N / 50);
      expect(followed.every((r) => r.authorId === 'a1')).toBe(true);
    });
  });
}
