/**
 * The ReaderSeenFilter port contract (src/kernel/reader-seen-filter.ts), one suite run against every
 * adapter: a test file adopts it through test/support/contract.ts.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/kernel/clock.js';
import type { ReaderSeenFilter, ReaderSeenSettings } from '../../src/kernel/reader-seen-filter.js';

/** What a factory hands the contract: a fresh, empty filter with its own keys. */
export interface ReaderSeenHarness {
  filter: ReaderSeenFilter;
}

export type ReaderSeenFactory = (settings: ReaderSeenSettings) => Promise<ReaderSeenHarness>;

const T = Date.UTC(2026, 2, 5);
const TTL = 30 * DAY_MS;
const SMALL: ReaderSeenSettings = { initialCapacity: 500, errorRate: 0.01, ttlMs: TTL };
const ids = (tag: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => `${tag}-${from + i}`);

async function withHarness(
  factory: ReaderSeenFactory,
  s: ReaderSeenSettings,
  body: (h: ReaderSeenHarness) => Promise<void>,
) {
  const h = await factory(s);
  try {
    await body(h);
  } finally {
    await h.filter.close();
  }
}

/** Registers the contract's tests under `describe(\`ReaderSeenFilter contract: ${name}\`)`. */
export function readerSeenFilterContract(name: string, factory: ReaderSeenFactory): void {
  describe(`ReaderSeenFilter contract: ${name}`, () => {
    it('remembers marked items, answers false for others, keeps readers apart', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await filter.markSeen('alice', ids('doc', 50), T);
        expect(await filter.seen('alice', ids('doc', 50), T + DAY_MS)).toEqual(Array(50).fill(true));
        expect(await filter.seen('alice', ids('other', 200), T + DAY_MS)).toEqual(Array(200).fill(false));
        expect(await filter.seen('bob', ids('doc', 50), T + DAY_MS)).toEqual(Array(50).fill(false));
        expect(await filter.seen('alice', [], T)).toEqual([]);
        const d = await filter.describe('alice', T + DAY_MS);
        expect(d.members).toBe(50);
        expect(d.filters).toHaveLength(1);
      });
    });

    it('does not count an item marked twice, in one batch or two', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await filter.markSeen('r', ['a', 'b', 'a'], T);
        await filter.markSeen('r', ['b', 'c'], T);
        expect((await filter.describe('r', T)).members).toBe(3);
      });
    });

    it('grows past its capacity with sub-filters, never forgets, and keeps the measured rate under the target', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        const marked = ids('seen', 4_000); // 8x the initial capacity: sub-filters 500, 1000, 2000, 4000
        for (let i = 0; i < marked.length; i += 500) await filter.markSeen('heavy', marked.slice(i, i + 500), T);
        const d = await filter.describe('heavy', T);
        expect(d.filters.length).toBe(4);
        expect(d.filters.map((f) => f.capacity)).toEqual([500, 1000, 2000, 4000]);
        expect(d.filters[0]!.rate).toBeCloseTo(0.005, 10);
        expect(d.filters[1]!.rate).toBeCloseTo(0.0025, 10);
        expect(d.members).toBeLessThanOrEqual(4_000); // a false positive is not added again
        expect(d.members).toBeGreaterThan(3_950);
        expect(d.expectedRate).toBeLessThan(0.01);
        for (let i = 0; i < marked.length; i += 1000) {
          expect((await filter.seen('heavy', marked.slice(i, i + 1000), T)).every(Boolean)).toBe(true);
        }
        const probes = ids('never', 20_000);
        let fp = 0;
        for (let i = 0; i < probes.length; i += 2000) {
          fp += (await filter.seen('heavy', probes.slice(i, i + 2000), T)).filter(Boolean).length;
        }
        // 1 % target; binomial sd at 20,000 probes and p = 1 % is 0.07 %, so 1.3 % is > 4 sd out
        expect(fp / probes.length).toBeLessThan(0.013);
      });
    });

    it('expires ttl after the last activity, and every check or mark refreshes it', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await filter.markSeen('r', ['a'], T);
        expect(await filter.seen('r', ['a'], T + TTL - 1)).toEqual([true]); // refreshes: alive until T + 2·TTL − 1
        expect(await filter.seen('r', ['a'], T + 2 * TTL - 2)).toEqual([true]);
        await filter.markSeen('r', ['b'], T + 3 * TTL - 3); // refreshes again (from the check just before)
        expect(await filter.seen('r', ['a', 'b'], T + 4 * TTL - 4)).toEqual([true, true]);
        expect((await filter.describe('r', T + 4 * TTL - 4)).lastActiveMs).toBe(T + 4 * TTL - 4);
        // idle for a whole TTL: gone, answers false, and a new mark starts empty
        expect(await filter.seen('r', ['a', 'b'], T + 5 * TTL - 4)).toEqual([false, false]);
        expect((await filter.describe('r', T + 5 * TTL - 4)).filters).toEqual([]);
        await filter.markSeen('r', ['c'], T + 5 * TTL);
        expect(await filter.seen('r', ['a', 'b', 'c'], T + 5 * TTL)).toEqual([false, false, true]);
        expect((await filter.describe('r', T + 5 * TTL)).members).toBe(1);
      });
    });

    it('describe does not refresh, and a clock going back never shortens the life', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await filter.markSeen('r', ['a'], T);
        await filter.describe('r', T + TTL - 1);
        expect(await filter.seen('r', ['a'], T + TTL)).toEqual([false]);
        await filter.markSeen('r', ['b'], T + 10 * DAY_MS);
        await filter.markSeen('r', ['c'], T); // an older clock
        expect((await filter.describe('r', T + 10 * DAY_MS)).lastActiveMs).toBe(T + 10 * DAY_MS);
        expect(await filter.seen('r', ['b', 'c'], T + 10 * DAY_MS + TTL - 1)).toEqual([true, true]);
      });
    });

    it('probe names the sub-filter holding each member and its rate, without refreshing the TTL', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await filter.markSeen('r', ids('a', 500), T); // fills sub-filter 0 (capacity 500), opens 1
        await filter.markSeen('r', ['late'], T + DAY_MS);
        const [first, late, absent] = await filter.probe('r', ['a-7', 'late', 'never'], T + 2 * DAY_MS);
        expect(first).toMatchObject({ seen: true, day: null, subFilter: 0 });
        expect(first!.fpr).toBeGreaterThan(0);
        expect(first!.fpr).toBeLessThan(SMALL.errorRate);
        expect(late).toMatchObject({ seen: true, subFilter: 1 });
        expect(late!.fpr).toBeLessThan(first!.fpr);
        expect(absent).toMatchObject({ seen: false, subFilter: null });
        expect(absent!.fpr).toBeGreaterThanOrEqual(first!.fpr);
        expect(await filter.probe('nobody', ['a-7'], T)).toEqual([{ seen: false, day: null, subFilter: null, fpr: 0 }]);
        // the probe is no activity: the filter still dies TTL after the last mark
        expect((await filter.describe('r', T + 2 * DAY_MS)).lastActiveMs).toBe(T + DAY_MS);
        expect((await filter.probe('r', ['late'], T + DAY_MS + TTL))[0]!.seen).toBe(false);
        await expect(filter.probe('u:{x}', ['a'], T)).rejects.toMatchObject({ code: 40002 });
      });
    });

    it('forget drops the reader only; bad reader ids are INVALID_ID', async () => {
      await withHarness(factory, SMALL, async ({ filter }) => {
        await filter.markSeen('r1', ['a'], T);
        await filter.markSeen('r2', ['a'], T);
        await filter.forget('r1');
        expect(await filter.seen('r1', ['a'], T)).toEqual([false]);
        expect(await filter.seen('r2', ['a'], T)).toEqual([true]);
        await expect(filter.seen('u:{x}', ['a'], T)).rejects.toMatchObject({ code: 40002 });
        await expect(filter.markSeen('', ['a'], T)).rejects.toMatchObject({ code: 40002 });
      });
    });
  });
}
