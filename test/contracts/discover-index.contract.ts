/**
 * The DiscoverIndex contract (src/discover/discover-index.ts), adopted on every vector search behind it
 * (test/discover/discover-index.test.ts, through test/support/contract.ts): pgvector on PGlite, the in-process
 * index on PGlite and on the PostgreSQL server. Phase 2's search is checked against an exact cosine
 * scan computed here:
 * - **exact order** of every item for several queries on 400 embeddings (the in-process index in its
 *   exact-scan mode, so that mode's ordering is what is checked);
 * - on a seeded clustered set of 2,000 (the in-process index in its HNSW mode): the nearest of known
 *   vectors in exact order, recall@20 ≥ 0.95, exact filters with over-fetch, paging to exhaustion,
 *   another process's new, updated and deleted embeddings after catch-up, dimensions other than the
 *   index's rejected; and the keyset streams, `live` and the text-embedding catch-up.
 *
 * Each suite opens one subject (its fixture is written once, then the search is brought up over it:
 * pgvector builds its HNSW index in bulk) and its tests run in order on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import type { PostgresDiscoverIndex } from '../../src/discover/adapters/postgres-discover-index.js';
import type { Sql } from '../../src/kernel/sql/sql.js';
import { cosine, normalize, quantize } from '../../src/discover/embedding.js';
import type { ItemInput } from '../../src/kernel/items/content-store.js';
import type { NearRow } from '../../src/discover/discover-index.js';
import { DiscoverEmbeddings } from '../../src/discover/embeddings.js';
import { FreshetError } from '../../src/kernel/errors.js';
import { clientEmbedding, randomVectors } from '../support/vectors.js';

export const CONTRACT_DIM = 32;
const NOW = Date.UTC(2016, 8, 20);

/** What an engine provides: a migrated database with an index over it, and a second process's index. */
export interface DiscoverIndexHarness {
  sql: Sql;
  /** This process's index (dimension {@link CONTRACT_DIM}; in-process: exact scan up to 500 embeddings). */
  index: PostgresDiscoverIndex;
  /** Another serving process's index on the same database (its own in-process index, if any). */
  other: PostgresDiscoverIndex;
  /**
   * Called once the suite's embeddings and items are written: brings the search up over them
   * (pgvector: its set-up, which builds the HNSW index in bulk; in-process: a catch-up) and waits
   * until background index work (an HNSW build) is done.
   */
  settle(): Promise<void>;
  cleanup(): Promise<void>;
}

const { gauss, unit: randomVec } = randomVectors(42, CONTRACT_DIM);
const nudge = (v: ArrayLike<number>, eps: number) => normalize(Array.from(v, (x) => x + eps * gauss()));

/** The clustered set: N vectors in 40 clusters (spread 0.35 around random centres), ids c<i>, author a<i mod 50>. */
const N = 2000;
const centres = Array.from({ length: 40 }, () => randomVec());
const stored = new Map<string, Int8Array>();
for (let i = 0; i < N; i++) stored.set(`c${i}`, quantize(nudge(centres[i % 40]!, 0.35)));
const base = randomVec();
for (let i = 0; i < 5; i++) stored.set(`near${i}`, quantize(nudge(base, 0.02)));
/** The small set: 400 random vectors, ids e<i>, author b<i mod 7> (below the in-process exact-scan limit). */
const small = new Map<string, Int8Array>(Array.from({ length: 400 }, (_, i) => [`e${i}`, quantize(randomVec())]));

const authorOf = (id: string) =>
  id.startsWith('c') ? `a${Number(id.slice(1)) % 50}` : id.startsWith('e') ? `b${Number(id.slice(1)) % 7}` : 'n';
const item = (id: string, author: string, publishedAt: number): ItemInput => ({
  id,
  authorId: author,
  title: id,
  text: '',
  url: null,
  tags: [],
  publishedAt,
  popularity: 0,
});

/** The exact ranking of every id of `set` by cosine to `q` (desc, then id in byte order). */
function exact(q: Float32Array, set: Map<string, Int8Array> = stored): { id: string; key: number }[] {
  return [...set.keys()]
    .map((id) => ({ id, key: cosine(q, set.get(id)!) }))
    .sort((a, b) => b.key - a.key || (a.id < b.id ? -1 : 1));
}

/** Opens a subject, writes `set` (item i published at NOW − 1000 − i) and brings its search up. */
async function loaded(
  open: () => Promise<DiscoverIndexHarness>,
  set: Map<string, Int8Array>,
): Promise<{ h: DiscoverIndexHarness; content: PostgresContentStore }> {
  const h = await open();
  const content = new PostgresContentStore(h.sql, { ownsSql: false });
  const ids = [...set.keys()];
  await h.index.putEmbeddings(
    ids.map((id) => ({ itemId: id, vector: set.get(id)!, source: 'client' as const })),
    NOW,
  );
  await content.upsertItems(
    ids.map((id, i) => item(id, authorOf(id), NOW - 1000 - i)),
    NOW,
  );
  await h.settle();
  return { h, content };
}

/** Registers the contract for one implementation. */
export function discoverIndexContract(name: string, open: () => Promise<DiscoverIndexHarness>): void {
  describe(`DiscoverIndex contract: ${name}`, () => {
    const near = (
      h: DiscoverIndexHarness,
      q: Float32Array,
      opts: Partial<{ limit: number; readerId: string; untilMs: number; after: NearRow | null }> = {},
      index = h.index,
    ) =>
      index.nearest({
        vector: q,
        untilMs: opts.untilMs ?? NOW,
        readerId: opts.readerId ?? 'nobody',
        limit: opts.limit ?? 20,
        after: opts.after ?? null,
        minSimilarity: -1,
      });

    describe('400 embeddings: the exact order', () => {
      let h: DiscoverIndexHarness;
      beforeAll(async () => {
        ({ h } = await loaded(open, small));
      }, 300_000);
      afterAll(async () => {
        await h?.cleanup();
      });

      it('ranks every item in exact cosine order for several queries, whole and page by page', async () => {
        expect(h.index.vectors.stats().kind).not.toBe('hnsw'); // in-process: the exact scan
        for (let n = 0; n < 3; n++) {
          const q = randomVec();
          const truth = exact(q, small);
          const all = await near(h, q, { limit: small.size + 10 });
          expect(all.map((r) => r.id)).toEqual(truth.map((r) => r.id));
          all.forEach((r, i) => expect(r.key).toBeCloseTo(truth[i]!.key, 9));
          // pages of 150 after each page's last (cosine, id): the same order, then a short last page
          const paged: string[] = [];
          let after: NearRow | null = null;
          for (let page = 0; page < 3; page++) {
            const rows = await h.index.nearest({
              vector: q,
              untilMs: NOW,
              readerId: 'nobody',
              limit: 150,
              after,
              depth: paged.length,
              minSimilarity: -1,
            });
            paged.push(...rows.map((r) => r.id));
            if (rows.length < 150) break;
            after = rows[rows.length - 1]!;
          }
          expect(paged).toEqual(truth.map((r) => r.id));
        }
      });
    });

    describe(`a clustered set of ${N.toLocaleString('en')}`, () => {
      let h: DiscoverIndexHarness;
      let content: PostgresContentStore;
      beforeAll(async () => {
        ({ h, content } = await loaded(open, stored));
      }, 300_000);
      afterAll(async () => {
        await h?.cleanup();
      });

      it('nearest neighbours of known vectors come first, in exact cosine order', async () => {
        expect(h.index.vectors.stats().kind).not.toBe('exact'); // in-process: the HNSW graph, complete
        const found = await near(h, base, { limit: 10 });
        expect(
          found
            .slice(0, 5)
            .map((r) => r.id)
            .sort(),
        ).toEqual(['near0', 'near1', 'near2', 'near3', 'near4']);
        expect(found.map((r) => r.id)).toEqual(
          exact(base)
            .slice(0, 10)
            .map((r) => r.id),
        );
        for (const r of found) expect(r.key).toBeCloseTo(cosine(base, stored.get(r.id)!), 9);
        for (const id of ['c7', 'c1234', 'c1999']) {
          const self = Float32Array.from(stored.get(id)!, (x) => x / 127);
          expect((await near(h, self, { limit: 1 }))[0]).toMatchObject({ id, authorId: authorOf(id) });
        }
      });

      it('recall@20 ≥ 0.95 against an exact scan on the clustered set (cluster queries and random directions)', async () => {
        let hits = 0;
        const queries = [
          ...Array.from({ length: 30 }, (_, i) => nudge(centres[(i * 3) % 40]!, 0.3)),
          ...Array.from({ length: 20 }, () => randomVec()),
        ];
        for (const q of queries) {
          const truth = exact(q);
          const cutoff = truth[19]!.key - 1e-9; // ties with the 20th count as found
          const found = await near(h, q, { limit: 20 });
          expect(found).toHaveLength(20);
          hits += found.filter((r) => r.key >= cutoff).length;
        }
        expect(hits / (20 * queries.length)).toBeGreaterThanOrEqual(0.95);
      });

      it('filters exactly after the search, over-fetching: the reader’s own items, later items, deleted items', async () => {
        // a0 wrote every 50th c: around centre 0 the reader's own items are many of the nearest
        // The graph is approximate and its multi-threaded build is not repeatable, so the filter is
        // checked against the same graph's unfiltered answer (a search is deterministic on one graph,
        // and both searches here stay within ef_search, so one answer is a prefix of the other), and
        // the graph against the exact scan only as recall.
        const q = centres[0]!;
        const unfiltered = await near(h, q, { limit: 60 });
        expect(unfiltered.filter((r) => authorOf(r.id) === 'a0').length).toBeGreaterThanOrEqual(5);
        const found = await near(h, q, { readerId: 'a0', limit: 30 });
        expect(found.every((r) => authorOf(r.id) !== 'a0')).toBe(true);
        expect(found).toHaveLength(30);
        const others = unfiltered.filter((r) => authorOf(r.id) !== 'a0');
        expect(found.map((r) => r.id).slice(0, 10)).toEqual(others.slice(0, 10).map((r) => r.id));
        const truth = exact(q)
          .filter((r) => authorOf(r.id) !== 'a0')
          .slice(0, 10)
          .map((r) => r.id);
        expect(found.slice(0, 10).filter((r) => truth.includes(r.id)).length).toBeGreaterThanOrEqual(8);
        // published after untilMs: c<i> is at NOW - 1005 - i, so untilMs = NOW - 1005 - 1000 keeps c1000…
        const early = await near(h, q, { untilMs: NOW - 1005 - 1000, limit: 20 });
        expect(early).toHaveLength(20);
        expect(early.every((r) => r.id.startsWith('c') && Number(r.id.slice(1)) >= 1000)).toBe(true);
        const victim = (await near(h, base, { limit: 1 }))[0]!.id;
        expect(await content.deleteItem(victim, NOW)).toBe(true);
        expect((await near(h, base, { limit: 10 })).map((r) => r.id)).not.toContain(victim);
      });

      it('pages by (cosine, id) after a position until the index is exhausted: exact order, no repeats, a short last page', async () => {
        // eligible: c1900…c1999 (published by untilMs; the near items are older but by the reader 'n')
        const q = randomVec();
        const untilMs = NOW - 1000 - 1900;
        const eligible = exact(q).filter((r) => r.id.startsWith('c') && Number(r.id.slice(1)) >= 1900);
        const seen: string[] = [];
        let after: NearRow | null = null;
        let pages = 0;
        for (; pages < 10; pages++) {
          const rows = await h.index.nearest({
            vector: q,
            untilMs,
            readerId: 'n',
            limit: 25,
            after,
            depth: seen.length,
            minSimilarity: -1,
          });
          seen.push(...rows.map((r) => r.id));
          if (rows.length < 25) break;
          after = rows[rows.length - 1]!;
        }
        expect(pages).toBe(4); // four full pages, then an empty one
        expect(seen).toEqual(eligible.map((r) => r.id));
      });

      it('another process sees new, updated and deleted embeddings after its catch-up', async () => {
        const dir = randomVec();
        await h.index.putEmbeddings([clientEmbedding('fresh1', dir)], NOW);
        await content.upsertItems([item('fresh1', 'f', NOW - 10)], NOW);
        await h.other.sync();
        expect((await near(h, dir, { limit: 1 }, h.other))[0]?.id).toBe('fresh1');
        const moved = randomVec();
        await h.index.putEmbeddings([clientEmbedding('fresh1', moved)], NOW + 1);
        await h.other.sync();
        expect((await near(h, moved, { limit: 1 }, h.other))[0]?.id).toBe('fresh1');
        expect((await near(h, dir, { limit: 5 }, h.other)).map((r) => r.id)).not.toContain('fresh1');
        const before = h.other.vectors.stats().size;
        expect(await content.deleteItem('fresh1', NOW + 2)).toBe(true);
        await h.other.sync();
        expect((await near(h, moved, { limit: 5 }, h.other)).map((r) => r.id)).not.toContain('fresh1');
        if (h.other.vectors.stats().kind !== 'pgvector') expect(h.other.vectors.stats().size).toBe(before - 1);
      });

      it('rejects a query or an embedding of another dimension (40001), writing nothing', async () => {
        await expect(near(h, randomVec(CONTRACT_DIM + 1))).rejects.toMatchObject({ code: 40001 });
        const bad = [clientEmbedding('dimok', randomVec()), clientEmbedding('dimbad', randomVec(CONTRACT_DIM - 1))];
        const err = await h.index.putEmbeddings(bad, NOW).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(FreshetError);
        expect(err).toMatchObject({ code: 40001 });
        const rows = await h.sql.query(`SELECT 1 FROM item_embeddings WHERE item_id IN ('dimok', 'dimbad')`);
        expect(rows).toHaveLength(0);
      });

      it('live: the given ids that are items not deleted', async () => {
        expect([...(await h.index.live(['c7', 'c7', 'fresh1', 'no-such-item']))].sort()).toEqual(['c7']);
        expect((await h.index.live([])).size).toBe(0);
      });

      it('catches up missing text embeddings once each, whatever clock wrote the items', async () => {
        const emb = new DiscoverEmbeddings(h.index, { dim: CONTRACT_DIM, halfLifeMs: 7 * 86_400_000, signalLimit: 50 });
        const later = NOW + 86_400_000; // items written on a later (virtual) clock than the catch-up
        await content.upsertItems([item('late0', 'b', NOW - 5), item('late1', 'b', NOW - 6)], later);
        expect(await emb.embedMissing(NOW, 1)).toBe(2);
        expect(await emb.embedMissing(NOW, 1)).toBe(0);
        await content.upsertItems([{ ...item('late0', 'b', NOW - 5), title: 'rewritten' }], later + 1);
        expect(await h.index.missingEmbeddings(null, 10)).toMatchObject([{ id: 'late0', updateTime: later + 1 }]);
        expect(await h.index.missingEmbeddings('late0', 10)).toEqual([]);
      });

      it('streams newest items by (published_at, id) after a position, without followed authors and the reader', async () => {
        await h.sql.exec(`INSERT INTO users (id, created_at) VALUES ('rd', 0), ('a1', 0) ON CONFLICT DO NOTHING`);
        await h.sql.exec(
          `INSERT INTO follows (follower_id, followee_id, created_at) VALUES ('rd', 'a1', 0) ON CONFLICT DO NOTHING`,
        );
        const first = await h.index.newest('rd', NOW, null, 10);
        expect(first).toHaveLength(10);
        expect(first.every((r) => r.authorId !== 'a1')).toBe(true);
        for (let i = 1; i < first.length; i++) expect(first[i]!.key).toBeLessThanOrEqual(first[i - 1]!.key);
        const next = await h.index.newest('rd', NOW, first[9]!, 5);
        expect(next[0]!.key).toBeLessThanOrEqual(first[9]!.key);
        expect(first.map((r) => r.id)).not.toContain(next[0]!.id);
        const followed = await h.index.followed('rd', NOW, null, 100);
        expect(followed.length).toBe(N / 50);
        expect(followed.every((r) => r.authorId === 'a1')).toBe(true);
      });
    });
  });
}
