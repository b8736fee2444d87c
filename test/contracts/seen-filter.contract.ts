/**
 * The SeenFilter port contract (src/kernel/seen-filter.ts), one suite run against every adapter:
 * a test file adopts it through test/support/contract.ts.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS } from '../../src/kernel/clock.js';
import { sizeWindow, type BloomGeometry } from '../../src/seen/bloom.js';
import type { SeenFilter } from '../../src/kernel/seen-filter.js';

/** What a factory hands the contract: a fresh, empty filter with its own keys. */
export interface SeenFilterHarness {
  filter: SeenFilter;
  /**
   * Time to live (ms) the store holds for the bitmap of the reader's shard on the day of `nowMs`,
   * as seen right after a mark at `nowMs` (Redis: PTTL; memory: expiry − nowMs); null when absent.
   */
  dayTtlMs(readerId: string, nowMs: number): Promise<number | null>;
  /** Commands sent to the store so far (omit for in-process stores: they make no round trips). */
  commands?: () => number;
}

/** Builds a fresh harness for a filter sized by `geometry` with a window of `geometry.days` days. */
export type SeenFilterFactory = (geometry: BloomGeometry) => Promise<SeenFilterHarness>;

/** Thursday 2026-03-05 00:00 UTC, day D of the tests (virtual time). */
const D = Date.UTC(2026, 2, 5);
const SMALL = sizeWindow(2_000, 0.01, 7);
const ids = (tag: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => `${tag}-${from + i}`);

async function withHarness(
  factory: SeenFilterFactory,
  g: BloomGeometry,
  body: (h: SeenFilterHarness) => Promise<void>,
) {
  const h = await factory(g);
  try {
    await body(h);
  } finally {
    await h.filter.close();
  }
}

/** Registers the contract's tests under `describe(\`SeenFilter contract: ${name}\`)`. */
export function seenFilterContract(name: string, factory: SeenFilterFactory): void {
  describe(`SeenFilter contract: ${name}`, () => {
    it('answers true for marked ids through the window and false before the day they were marked', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        const marked = ids('doc', 40);
        await filter.markSeen('u_10086', marked, D + 10 * HOUR_MS);
        for (const at of [D + 10 * HOUR_MS, D + 23 * HOUR_MS, D + 3 * DAY_MS, D + 7 * DAY_MS - 1]) {
          expect(await filter.seen('u_10086', marked, at)).toEqual(marked.map(() => true));
        }
        expect(await filter.seen('u_10086', marked, D - 1)).toEqual(marked.map(() => false));
      });
    });

    it('answers false for ids never marked (a filter far below capacity)', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await filter.markSeen('u_1', ids('doc', 50), D);
        await filter.markSeen('u_1', ids('doc', 50, 50), D + DAY_MS);
        expect(await filter.seen('u_1', ids('other', 500), D + DAY_MS)).toEqual(Array(500).fill(false));
      });
    });

    it('keeps readers independent', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await filter.markSeen('alice', ids('doc', 100), D);
        expect(await filter.seen('alice', ids('doc', 100), D)).toEqual(Array(100).fill(true));
        expect(await filter.seen('bob', ids('doc', 100), D)).toEqual(Array(100).fill(false));
      });
    });

    it('remembers marks from several days at once, and forgets each day 7 days after it began', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await filter.markSeen('u_1', ['a'], D + 12 * HOUR_MS);
        await filter.markSeen('u_1', ['b'], D + 2 * DAY_MS + HOUR_MS);
        expect(await filter.seen('u_1', ['a', 'b', 'c'], D + 6 * DAY_MS)).toEqual([true, true, false]);
        expect(await filter.seen('u_1', ['a', 'b'], D + 7 * DAY_MS - 1)).toEqual([true, true]);
        expect(await filter.seen('u_1', ['a', 'b'], D + 7 * DAY_MS)).toEqual([false, true]);
        expect(await filter.seen('u_1', ['a', 'b'], D + 9 * DAY_MS - 1)).toEqual([false, true]);
        expect(await filter.seen('u_1', ['a', 'b'], D + 9 * DAY_MS)).toEqual([false, false]);
      });
    });

    it("gives today's bitmap a time to live ending with the window, computed from the virtual now", async () => {
      await withHarness(factory, SMALL, async ({ filter, dayTtlMs }) => {
        const at = D + 15 * HOUR_MS + 1234;
        await filter.markSeen('u_ttl', ['x'], at);
        const expected = 7 * DAY_MS - 15 * HOUR_MS - 1234;
        const ttl = await dayTtlMs('u_ttl', at);
        expect(ttl).not.toBeNull();
        expect(ttl!).toBeLessThanOrEqual(expected);
        expect(ttl!).toBeGreaterThan(expected - 2_000); // real time elapsed since the mark
        // a later mark on the same day keeps the same end of window
        await filter.markSeen('u_ttl', ['y'], at + 5 * HOUR_MS);
        const again = await dayTtlMs('u_ttl', at + 5 * HOUR_MS);
        expect(again!).toBeLessThanOrEqual(expected - 5 * HOUR_MS);
        expect(again!).toBeGreaterThan(expected - 5 * HOUR_MS - 2_000);
        // a mark in the day's last millisecond still lives 6 whole days more
        await filter.markSeen('u_ttl', ['z'], D + 2 * DAY_MS - 1);
        expect(await dayTtlMs('u_ttl', D + 2 * DAY_MS - 1)).toBeGreaterThan(6 * DAY_MS - 2_000);
      });
    });

    it('treats empty batches as no-ops without a round trip', async () => {
      await withHarness(factory, SMALL, async ({ filter, commands }) => {
        const before = commands?.() ?? 0;
        await filter.markSeen('u_1', [], D);
        expect(await filter.seen('u_1', [], D)).toEqual([]);
        expect(commands?.() ?? 0).toBe(before);
      });
    });

    it('marks and checks 3,500 ids in one round trip each', async () => {
      await withHarness(factory, sizeWindow(10_000, 0.01, 7), async ({ filter, commands }) => {
        // a store may load its scripts on first use (EVAL after NOSCRIPT, once per node) and learn a
        // day's layout the first time it meets the day (once a day per process): warm up
        await filter.markSeen('u_big', ['warm-up'], D);
        await filter.seen('u_big', ['warm-up'], D);
        await filter.seen('u_warm', ['warm-up'], D + DAY_MS);
        const marked = ids('doc', 3_500);
        const fresh = ids('new', 3_500);
        const before = commands?.();
        await filter.markSeen('u_big', marked, D);
        if (before !== undefined) expect(commands!() - before).toBe(1);
        expect(await filter.seen('u_big', marked, D + DAY_MS)).toEqual(Array(3_500).fill(true));
        if (before !== undefined) expect(commands!() - before).toBe(2);
        const answers = await filter.seen('u_big', fresh, D + DAY_MS);
        expect(answers.filter(Boolean).length).toBeLessThanOrEqual(35); // ≤ 1 % at 35 % of capacity
      });
    });

    it('aligns answers with the input order, duplicates included', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await filter.markSeen('u_1', ['c', 'a', 'c'], D);
        expect(await filter.seen('u_1', ['c', 'b', 'a', 'a', 'b', 'c', 'd'], D)).toEqual([
          true,
          false,
          true,
          true,
          false,
          true,
          false,
        ]);
      });
    });

    it('probe names the newest day holding each member and its fill-based rate, and writes nothing', async () => {
      await withHarness(factory, SMALL, async ({ filter, commands }) => {
        await filter.markSeen('u_p', ids('doc', 200), D + HOUR_MS);
        await filter.markSeen('u_p', ['doc-0'], D + 2 * DAY_MS + HOUR_MS);
        const now = D + 3 * DAY_MS;
        const [newest, older, absent] = await filter.probe('u_p', ['doc-0', 'doc-5', 'never'], now);
        expect(newest).toMatchObject({ seen: true, day: '2026-03-07', subFilter: null });
        expect(older).toMatchObject({ seen: true, day: '2026-03-05', subFilter: null });
        // 200 members of a 2,000-capacity day: (set bits / m)^k is far below the per-day target, above 0
        expect(older!.fpr).toBeGreaterThan(0);
        expect(older!.fpr).toBeLessThan(SMALL.windowRate / 7);
        expect(newest!.fpr).toBeLessThan(older!.fpr); // one member against 200
        expect(absent).toMatchObject({ seen: false, day: null, subFilter: null });
        expect(absent!.fpr).toBeGreaterThanOrEqual(older!.fpr); // any day of the window may answer wrongly
        expect((await filter.probe('u_other', ['doc-0'], now))[0]!.seen).toBe(false); // members are per reader
        expect(await filter.probe('u_p', [], now)).toEqual([]);
        const before = commands?.();
        await filter.probe('u_p', ids('doc', 50), now);
        // one script, one round trip, once the window's days are known here (as for `seen`)
        if (before !== undefined) expect(commands!() - before).toBe(1);
        expect(await filter.seen('u_p', ['doc-1', 'never'], now)).toEqual([true, false]);
        // after the window the day is gone for the probe too
        expect((await filter.probe('u_p', ['doc-5'], D + 7 * DAY_MS))[0]!.seen).toBe(false);
        await expect(filter.probe('u:1', ['a'], now)).rejects.toThrow(/readerId/);
      });
    });

    it('rejects an invalid reader id before building any member', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await expect(filter.seen('u:1', ['a'], D)).rejects.toThrow(/readerId/);
        await expect(filter.markSeen('{u}', ['a'], D)).rejects.toThrow(/readerId/);
      });
    });

    it('keeps the whole-window false-positive rate near the target with 7 days filled to capacity', async () => {
      const g = sizeWindow(2_000, 0.01, 7);
      await withHarness(factory, g, async ({ filter }) => {
        for (let day = 0; day < 7; day++) {
          await filter.markSeen('u_fpr', ids(`d${day}`, g.capacity), D + day * DAY_MS + HOUR_MS);
        }
        const now = D + 6 * DAY_MS + 2 * HOUR_MS;
        const probes = ids('probe', 20_000);
        let hits = 0;
        for (let i = 0; i < probes.length; i += 5_000) {
          hits += (await filter.seen('u_fpr', probes.slice(i, i + 5_000), now)).filter(Boolean).length;
        }
        const rate = hits / probes.length;
        expect(rate).toBeLessThanOrEqual(g.windowRate * 1.3);
        expect(rate).toBeGreaterThanOrEqual(g.windowRate * 0.5);
        // and every member of every day is still there
        expect((await filter.seen('u_fpr', ids('d0', g.capacity), now)).every(Boolean)).toBe(true);
      });
    });
  });
}
