/**
 * The HotArchive port contract (src/hot/hot-archive.ts), one suite for every SQL engine, adopted
 * through test/support/contract.ts. The factory returns the archive over an EMPTY, migrated database,
 * with the content store whose items decide which rows are live.
 *
 * Promises kept: the latest snapshot of an item wins and reads back byte for byte (the HyperLogLog
 * too); a save is all-or-nothing however many rows it holds; `live` pages by id through the rows a
 * rebuild needs (not archived, item live) without repeats or gaps; `expired` lists the rows to
 * archive, oldest first; `get` reads what is stored, archived or not.
 */
import { describe, expect, it } from 'vitest';
import type { HotArchive } from '../../src/hot/hot-archive.js';
import type { CounterSnapshot } from '../../src/hot/hot-counters.js';
import { HyperLogLog } from '../../src/hot/hll.js';
import type { ContentStore } from '../../src/kernel/items/content-store.js';
import { ErrorCodes } from '../../src/kernel/errors.js';

export interface HotArchiveHarness {
  archive: HotArchive;
  content: ContentStore;
}

/** 2026-03-06 12:00 UTC. */
const T0 = Date.UTC(2026, 2, 6, 12);

/** The Redis HLL string of a HyperLogLog holding `visitors`. */
function hllOf(...visitors: string[]): Buffer {
  const hll = new HyperLogLog();
  for (const v of visitors) hll.add(v);
  return hll.toRedis();
}

/** A snapshot of `itemId` published `ageMs` before T0 (whole seconds, as the counters keep it). */
function snap(itemId: string, pv: number, ageMs = 0, extra: Partial<CounterSnapshot> = {}): CounterSnapshot {
  return {
    itemId,
    publishedAtMs: T0 - ageMs,
    pv,
    uv: 1,
    hll: hllOf('v1'),
    suspicious: { repeat: 0, budget: 0, flagged: 0 },
    ...extra,
  };
}

async function withArchive(
  factory: () => Promise<HotArchiveHarness>,
  body: (h: HotArchiveHarness & { items(ids: string[]): Promise<void> }) => Promise<void>,
) {
  const h = await factory();
  const items = async (ids: string[]) => {
    await h.content.upsertItems(
      ids.map((id) => ({
        id,
        authorId: 'x',
        title: id,
        text: '',
        url: null,
        tags: [],
        publishedAt: T0,
        popularity: 0,
      })),
      T0,
    );
  };
  await body({ ...h, items });
}

/** Registers the contract's tests under `describe(\`HotArchive contract: ${name}\`)`. */
export function hotArchiveContract(name: string, factory: () => Promise<HotArchiveHarness>): void {
  describe(`HotArchive contract: ${name}`, () => {
    it('upserts the latest snapshot, pages live rows of live items, lists expired ids, archives', async () => {
      await withArchive(factory, async ({ archive, content }) => {
        await content.upsertItems(
          ['a', 'b', 'c', 'd'].map((id, i) => ({
            id,
            authorId: 'x',
            title: id,
            text: '',
            url: null,
            tags: [],
            publishedAt: T0 - i * 1000,
            popularity: 0,
          })),
          T0,
        );
        const s = (itemId: string, pv: number, i: number) =>
          snap(itemId, pv, i * 1000, { suspicious: { repeat: i, budget: 0, flagged: 1 } });
        await archive.save([s('a', 1, 0), s('b', 2, 1), s('c', 3, 2), s('d', 4, 3)], T0);
        await archive.save([s('a', 10, 0)], T0 + 5);
        const [a] = await archive.get(['a']);
        expect(a).toMatchObject({
          pv: 10,
          checkpointedAtMs: T0 + 5,
          archivedAtMs: null,
          suspicious: { repeat: 0, budget: 0, flagged: 1 },
        });
        expect(HyperLogLog.fromRedis(a!.hll).count()).toBe(1);
        await content.deleteItem('c', T0);
        expect((await archive.live(null, 2)).map((s) => s.itemId)).toEqual(['a', 'b']);
        expect((await archive.live('b', 10)).map((s) => s.itemId)).toEqual(['d']); // c's item is deleted
        expect(await archive.expired(T0 - 1500, 10)).toEqual(['d', 'c']);
        await archive.save([s('d', 4, 3)], T0 + 9, { archive: true });
        expect(await archive.expired(T0 - 1500, 10)).toEqual(['c']);
        expect(await archive.get(['d', 'zz'])).toMatchObject([{ itemId: 'd', archivedAtMs: T0 + 9 }]);
        expect((await archive.live(null, 10)).map((s) => s.itemId)).toEqual(['a', 'b']);
      });
    });

    it("keepNewer (a prior layout's last checkpoint) replaces only rows no count of which is above its own, never archived ones", async () => {
      await withArchive(factory, async ({ archive, items }) => {
        await items(['a', 'b', 'c', 'd', 'e']);
        const sus = (repeat: number, budget: number, flagged: number) => ({ suspicious: { repeat, budget, flagged } });
        await archive.save(
          [snap('a', 5, 0, sus(1, 1, 1)), snap('b', 9, 0, sus(1, 1, 1)), snap('c', 5, 0, sus(1, 4, 1)), snap('d', 5)],
          T0,
        );
        await archive.save([snap('d', 5)], T0 + 1, { archive: true });
        await archive.save(
          [
            snap('a', 7, 0, sus(1, 2, 1)), // every count at least the stored one: replaced
            snap('b', 8, 0, sus(1, 1, 1)), // the stored PV is above: kept
            snap('c', 6, 0, sus(1, 3, 1)), // the stored budget count is above: kept
            snap('d', 9), // archived: kept
            snap('e', 2), // no row: inserted
          ],
          T0 + 2,
          { keepNewer: true },
        );
        expect((await archive.get(['a', 'b', 'c', 'd', 'e'])).map((r) => [r.itemId, r.pv, r.checkpointedAtMs])).toEqual(
          [
            ['a', 7, T0 + 2],
            ['b', 9, T0],
            ['c', 5, T0],
            ['d', 5, T0 + 1],
            ['e', 2, T0 + 2],
          ],
        );
      });
    });

    it('reads back every field of the latest snapshot exactly, the HyperLogLog byte for byte', async () => {
      await withArchive(factory, async ({ archive, items }) => {
        await items(['a', 'b']);
        const first = snap('a', 3, 7_000, { uv: 2, hll: hllOf('v1', 'v2') });
        const latest = snap('a', 900, 7_000, {
          uv: 412,
          hll: hllOf(...Array.from({ length: 420 }, (_, i) => `v${i}`)),
          suspicious: { repeat: 5, budget: 2, flagged: 1 },
        });
        await archive.save([first, snap('b', 1)], T0);
        await archive.save([latest], T0 + 60_000);
        expect(await archive.get(['a', 'b'])).toEqual([
          { ...latest, checkpointedAtMs: T0 + 60_000, archivedAtMs: null },
          { ...snap('b', 1), checkpointedAtMs: T0, archivedAtMs: null },
        ]);
        expect(await archive.live(null, 1)).toEqual([latest]);
      });
    });

    it('an id twice in one batch is stored once, the last one winning; an empty save or get does nothing', async () => {
      await withArchive(factory, async ({ archive, items }) => {
        await items(['a']);
        await archive.save([snap('a', 1), snap('a', 2)], T0);
        expect((await archive.get(['a'])).map((r) => r.pv)).toEqual([2]);
        await archive.save([], T0 + 1);
        await archive.save([], T0 + 1, { archive: true });
        expect(await archive.get(['a'])).toMatchObject([{ pv: 2, checkpointedAtMs: T0, archivedAtMs: null }]);
        expect(await archive.get([])).toEqual([]);
      });
    });

    it('archived rows leave live and expired but stay readable; a later plain save makes the row live again', async () => {
      await withArchive(factory, async ({ archive, items }) => {
        await items(['a', 'b']);
        await archive.save([snap('a', 1, 5_000), snap('b', 1, 5_000)], T0);
        await archive.save([snap('a', 7, 5_000)], T0 + 9, { archive: true });
        expect(await archive.get(['a'])).toMatchObject([{ pv: 7, checkpointedAtMs: T0 + 9, archivedAtMs: T0 + 9 }]);
        expect((await archive.live(null, 10)).map((s) => s.itemId)).toEqual(['b']);
        expect(await archive.expired(T0, 10)).toEqual(['b']);
        await archive.save([snap('a', 8, 5_000)], T0 + 20);
        expect(await archive.get(['a'])).toMatchObject([{ pv: 8, checkpointedAtMs: T0 + 20, archivedAtMs: null }]);
        expect((await archive.live(null, 10)).map((s) => s.itemId)).toEqual(['a', 'b']);
      });
    });

    it('live pages by id after `afterId` without repeats or gaps, skipping rows of deleted or unknown items; the last page is short, then empty', async () => {
      await withArchive(factory, async ({ archive, content, items }) => {
        const ids = Array.from({ length: 7 }, (_, i) => `i${i}`);
        await items(ids);
        await archive.save([...ids.map((id) => snap(id, 1)), snap('orphan', 1)], T0); // orphan: no such item
        await content.deleteItem('i3', T0);
        await archive.save([snap('i5', 1)], T0, { archive: true });
        const pages: string[][] = [];
        let after: string | null = null;
        for (;;) {
          const page: CounterSnapshot[] = await archive.live(after, 3);
          pages.push(page.map((s) => s.itemId));
          if (page.length < 3) break;
          after = page.at(-1)!.itemId;
        }
        expect(pages).toEqual([
          ['i0', 'i1', 'i2'],
          ['i4', 'i6'],
        ]);
        expect(await archive.live('i6', 3)).toEqual([]);
        expect(await archive.live('zzz', 3)).toEqual([]);
        expect(await archive.live(null, 0)).toEqual([]);
      });
    });

    it('expired: live rows published strictly before the cutoff, oldest first, ties by id, at most `limit`', async () => {
      await withArchive(factory, async ({ archive }) => {
        await archive.save(
          [snap('e4', 1, 1_000), snap('e3', 1, 2_000), snap('e2', 1, 2_000), snap('e1', 1, 3_000)],
          T0,
        );
        await archive.save([snap('e0', 1, 5_000)], T0, { archive: true });
        expect(await archive.expired(T0 - 1_000, 10)).toEqual(['e1', 'e2', 'e3']); // e4 is at the cutoff
        expect(await archive.expired(T0 - 1_000, 2)).toEqual(['e1', 'e2']);
        expect(await archive.expired(T0 - 3_000, 10)).toEqual([]);
        expect(await archive.expired(T0 + 1, 0)).toEqual([]);
      });
    });

    it('get: the stored rows in the order asked, archived or not, unknown ids skipped', async () => {
      await withArchive(factory, async ({ archive }) => {
        await archive.save([snap('g1', 1), snap('g2', 2)], T0);
        await archive.save([snap('g3', 3)], T0 + 1, { archive: true });
        expect((await archive.get(['g3', 'nope', 'g1', 'g2'])).map((r) => [r.itemId, r.pv, r.archivedAtMs])).toEqual([
          ['g3', 3, T0 + 1],
          ['g1', 1, null],
          ['g2', 2, null],
        ]);
        expect(await archive.get(['nope'])).toEqual([]);
      });
    });

    it('a save of more rows than one statement takes is all-or-nothing: a bad row late in it writes nothing', async () => {
      await withArchive(factory, async ({ archive }) => {
        const ids = Array.from({ length: 1_200 }, (_, i) => `b${String(i).padStart(4, '0')}`);
        const batch = ids.map((id) => snap(id, 1));
        batch[1_100] = snap('not an id', 1);
        await expect(archive.save(batch, T0)).rejects.toMatchObject({ code: ErrorCodes.INVALID_INPUT.code });
        expect(await archive.get(ids)).toEqual([]);
        batch[1_100] = snap(ids[1_100]!, 1);
        await archive.save(batch, T0);
        expect((await archive.get(ids)).map((r) => r.itemId)).toEqual(ids);
        expect(await archive.expired(T0 + 1, 2_000)).toEqual(ids);
      });
    });
  });
}
