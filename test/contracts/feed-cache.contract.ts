/**
 * The FeedCache port contract (src/for-you/feed-cache.ts), one suite run against every adapter:
 * a test file adopts it through test/support/contract.ts. Time to live is checked without waiting:
 * the harness's `elapse` moves the store's clock (see {@link FeedCacheHarness.elapse}).
 */
import { describe, expect, it } from 'vitest';
import type { FeedCache } from '../../src/for-you/feed-cache.js';

/** What a factory hands the contract: a fresh, empty cache with its own keys. */
export interface FeedCacheHarness {
  cache: FeedCache;
  /**
   * Lets `ms` of the store's clock pass: memory advances the injected clock; Redis shortens the time
   * to live of each of the cache's keys by `ms` (what the server's clock moving on does to them).
   */
  elapse(ms: number): Promise<void>;
}

export type FeedCacheFactory = () => Promise<FeedCacheHarness>;

const TTL = 30 * 60_000;
const list = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}-${i}`);

async function withHarness(factory: FeedCacheFactory, body: (h: FeedCacheHarness) => Promise<void>) {
  const h = await factory();
  try {
    await body(h);
  } finally {
    await h.cache.close();
  }
}

/** `L3-17` → [3, 17]. */
function parse(id: string): [number, number] {
  const m = /^L(\d+)-(\d+)$/.exec(id);
  if (!m) throw new Error(`unexpected id ${id}`);
  return [Number(m[1]), Number(m[2])];
}

/** Asserts `ids` is a contiguous slice of exactly one list `L<j>-0..len-1`; returns [j, first, last]. */
function expectSlice(ids: string[]): [number, number, number] {
  const parsed = ids.map(parse);
  const [j, first] = parsed[0]!;
  parsed.forEach(([jj, pos], i) => {
    expect(jj).toBe(j);
    expect(pos).toBe(first + i);
  });
  return [j, first, first + ids.length - 1];
}

/** Registers the contract's tests under `describe(\`FeedCache contract: ${name}\`)`. */
export function feedCacheContract(name: string, factory: FeedCacheFactory): void {
  describe(`FeedCache contract: ${name}`, () => {
    it('pops in order from the head and reports what remains, short last page included', async () => {
      await withHarness(factory, async ({ cache }) => {
        await cache.replace('u_1', ['a', 'b', 'c', 'd', 'e'], TTL);
        expect(await cache.pop('u_1', 2)).toEqual({ itemIds: ['a', 'b'], remaining: 3 });
        expect(await cache.pop('u_1', 2)).toEqual({ itemIds: ['c', 'd'], remaining: 1 });
        expect(await cache.pop('u_1', 2)).toEqual({ itemIds: ['e'], remaining: 0 });
        expect(await cache.pop('u_1', 2)).toEqual({ itemIds: [], remaining: 0 });
      });
    });

    it('returns nothing for a reader without a cache', async () => {
      await withHarness(factory, async ({ cache }) => {
        expect(await cache.pop('nobody', 20)).toEqual({ itemIds: [], remaining: 0 });
      });
    });

    it('replaces the whole list, drops it on an empty replace and on drop', async () => {
      await withHarness(factory, async ({ cache }) => {
        await cache.replace('u_1', list('old', 10), TTL);
        await cache.replace('u_1', ['n1', 'n2'], TTL);
        expect(await cache.pop('u_1', 5)).toEqual({ itemIds: ['n1', 'n2'], remaining: 0 });
        await cache.replace('u_1', ['x', 'y'], TTL);
        await cache.replace('u_1', [], TTL);
        expect(await cache.pop('u_1', 5)).toEqual({ itemIds: [], remaining: 0 });
        await cache.replace('u_1', ['x', 'y'], TTL);
        await cache.drop('u_1');
        expect(await cache.pop('u_1', 5)).toEqual({ itemIds: [], remaining: 0 });
      });
    });

    it('keeps a large list whole (5,000 ids)', async () => {
      await withHarness(factory, async ({ cache }) => {
        const ids = list('big', 5_000);
        await cache.replace('u_1', ids, TTL);
        const first = await cache.pop('u_1', 4_990);
        expect(first.itemIds).toEqual(ids.slice(0, 4_990));
        expect(first.remaining).toBe(10);
        expect((await cache.pop('u_1', 100)).itemIds).toEqual(ids.slice(4_990));
      });
    });

    it('keeps readers apart', async () => {
      await withHarness(factory, async ({ cache }) => {
        await cache.replace('alice', ['a1', 'a2'], TTL);
        await cache.replace('bob', ['b1'], TTL);
        expect(await cache.pop('bob', 5)).toEqual({ itemIds: ['b1'], remaining: 0 });
        expect(await cache.pop('alice', 5)).toEqual({ itemIds: ['a1', 'a2'], remaining: 0 });
      });
    });

    it('replaces atomically: concurrent pops each see one whole list', async () => {
      await withHarness(factory, async ({ cache }) => {
        await cache.replace('u_1', ['warm'], TTL); // a store loading scripts lazily has them now
        await cache.pop('u_1', 1);
        const ops: Promise<unknown>[] = [];
        const pops: Promise<{ itemIds: string[]; remaining: number }>[] = [];
        for (let j = 0; j < 10; j++) {
          ops.push(cache.replace('u_1', list(`L${j}`, 3_000), TTL));
          for (let p = 0; p < 10; p++) pops.push(cache.pop('u_1', 7));
        }
        await Promise.all([...ops, ...pops]);
        for (const { itemIds, remaining } of await Promise.all(pops)) {
          expect(itemIds).toHaveLength(7);
          const [, , last] = expectSlice(itemIds);
          expect(remaining).toBe(3_000 - 1 - last);
        }
      });
    });

    it('never hands the same id to two concurrent pops', async () => {
      await withHarness(factory, async ({ cache }) => {
        await cache.replace('u_1', list('L0', 1_000), TTL);
        const results = await Promise.all(Array.from({ length: 50 }, () => cache.pop('u_1', 30)));
        const all = results.flatMap((r) => r.itemIds);
        expect(new Set(all).size).toBe(all.length);
        expect(all.length).toBe(1_000);
        for (const r of results) if (r.itemIds.length > 0) expectSlice(r.itemIds);
        expect(results.filter((r) => r.itemIds.length === 0)).toHaveLength(50 - Math.ceil(1_000 / 30));
      });
    });

    it('expires a list ttl after its last replace', async () => {
      await withHarness(factory, async ({ cache, elapse }) => {
        await cache.replace('u_1', ['a', 'b', 'c'], 40_000);
        await elapse(15_000);
        expect(await cache.pop('u_1', 1)).toEqual({ itemIds: ['a'], remaining: 2 });
        await cache.replace('u_1', ['d', 'e'], 40_000); // restarts the clock
        await elapse(30_000);
        expect(await cache.pop('u_1', 1)).toEqual({ itemIds: ['d'], remaining: 1 });
        await elapse(25_000);
        expect(await cache.pop('u_1', 1)).toEqual({ itemIds: [], remaining: 0 });
      });
    });

    it('grants the lease to one holder at a time and releases it only by its token', async () => {
      await withHarness(factory, async ({ cache, elapse }) => {
        expect(await cache.acquireLease('u_1', 't1', 40_000)).toBe(true);
        expect(await cache.acquireLease('u_1', 't2', 40_000)).toBe(false);
        expect(await cache.acquireLease('u_2', 't2', 40_000)).toBe(true); // another reader's lease
        await cache.releaseLease('u_1', 't2'); // not the holder: no effect
        expect(await cache.acquireLease('u_1', 't3', 40_000)).toBe(false);
        await cache.releaseLease('u_1', 't1');
        expect(await cache.acquireLease('u_1', 't2', 40_000)).toBe(true);
        await elapse(30_000);
        expect(await cache.acquireLease('u_1', 't3', 40_000)).toBe(false); // t2's lease still runs
        await elapse(25_000); // t2's lease runs out
        expect(await cache.acquireLease('u_1', 't3', 40_000)).toBe(true);
        await cache.releaseLease('u_1', 't2'); // a stale holder cannot free t3's lease
        expect(await cache.acquireLease('u_1', 't4', 40_000)).toBe(false);
      });
    });

    it('lets only one of many concurrent acquirers win', async () => {
      await withHarness(factory, async ({ cache }) => {
        const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => cache.acquireLease('u_1', `t${i}`, 5_000)));
        expect(wins.filter(Boolean)).toHaveLength(1);
      });
    });

    it('rejects invalid reader ids and non-positive counts', async () => {
      await withHarness(factory, async ({ cache }) => {
        await expect(cache.pop('a:b', 1)).rejects.toThrow(/readerId/);
        await expect(cache.replace('{x}', ['a'], TTL)).rejects.toThrow(/readerId/);
        await expect(cache.pop('u_1', 0)).rejects.toThrow(RangeError);
      });
    });
  });
}
