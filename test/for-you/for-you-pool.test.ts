/**
 * The for-you shared fill pool (src/for-you/fill-pool.ts) and the candidate walk over it
 * (src/for-you/walk.ts), on PGlite with the real recall and an in-process seen filter, on an injected
 * clock: publishes and deletes patch the pool without rebuilding it (a published item served at once, a
 * deleted one never), a publish racing a build lands in that build, a reader's deep-scroll cursor maps into
 * a rebuilt pool, and past the decay window each round serves the reader's interest matches first.
 */
import { itemInput } from '../support/items.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/kernel/clock.js';
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import type { ItemInput } from '../../src/kernel/items/content-store.js';
import { MemorySeenFilter } from '../../src/seen/memory-seen-filter.js';
import { fixedLayout } from '../../src/seen/layout.js';
import { sizeWindow } from '../../src/seen/bloom.js';
import { buildReaderExclusions, NO_DURABLE } from '../../src/exclusions/domain.js';
import { PostgresRecall } from '../../src/for-you/adapters/postgres-recall.js';
import { FillPool } from '../../src/for-you/fill-pool.js';
import { matchPool, walk, type WalkCursor, type WalkInput } from '../../src/for-you/walk.js';
import type { CandidateRecall } from '../../src/for-you/recall.js';
import { pglite } from '../support/contract.js';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 2, 6, 12);
const DECAY = { scaleMs: 48 * HOUR, offsetMs: 6 * HOUR, decay: 0.5 };
const HORIZON = 100 * HOUR;
const INTERVAL = 30_000;

const engine = pglite();

function item(id: string, o: Partial<ItemInput> & { ageH?: number } = {}): ItemInput {
  return itemInput(id, NOW, { popularity: 1, ...o });
}

describe('for-you fill pool and walk', () => {
  let content: PostgresContentStore;
  let recall: PostgresRecall;
  let clock: ManualClock;
  let seen: MemorySeenFilter;
  let readers = 0;

  beforeEach(async () => {
    const { sql } = await engine.place();
    content = new PostgresContentStore(sql, { ownsSql: false });
    recall = new PostgresRecall(sql);
    clock = new ManualClock(NOW);
    const g = sizeWindow(10_000, 0.01, 7);
    seen = new MemorySeenFilter(fixedLayout(g), { days: 7 });
  });

  const newPool = (size: number, r: Pick<CandidateRecall, 'fill' | 'pooled'> = recall) =>
    new FillPool(r, { size, intervalMs: INTERVAL, decay: DECAY, horizonMs: HORIZON }, clock);

  /** One walk of a reader at the clock's time over the pool's current build. */
  async function walkOnce(pool: FillPool, o: Partial<WalkInput> & { readerId?: string } = {}) {
    const readerId = o.readerId ?? `r${++readers}`;
    const nowMs = clock.now();
    const out = await walk(
      { recall, seen },
      {
        readerId,
        nowMs,
        ex: buildReaderExclusions(readerId, [], NO_DURABLE, nowMs, { weight: 1, durationMs: 0 }),
        matches: [],
        lexemes: [],
        decay: DECAY,
        pool: await pool.get(nowMs),
        cursor: null,
        resume: false,
        want: 100,
        page: 100,
        chunk: 100,
        horizonMs: HORIZON,
        ...o,
      },
    );
    return { ...out, clean: out.clean.map((c) => c.id) };
  }

  /** What the use cases do: write, then tell the pool. */
  async function publish(pool: FillPool, items: ItemInput[]) {
    await content.upsertItems(items, clock.now());
    pool.invalidate(items.map((i) => i.id));
  }
  async function remove(pool: FillPool, id: string) {
    await content.deleteItem(id, clock.now());
    pool.invalidate([], [id]);
  }

  it('publishes and deletes inside an interval patch the pool: no extra build, the new item served at once, a deleted one never', async () => {
    await content.upsertItems(
      Array.from({ length: 50 }, (_, i) => item(`w${i}`, { ageH: i / 2 })),
      NOW,
    );
    const pool = newPool(40);
    await pool.get(NOW);
    expect(pool.builds).toBe(1);
    const deleted: string[] = [];
    // one publish (and two deletes) every 2 s for 20 s, inside the 30 s interval
    for (let k = 0; k < 10; k++) {
      clock.advance(2_000);
      await publish(pool, [item(`new${k}`, { publishedAt: clock.now(), popularity: 1e6 + k })]);
      if (k > 0) await remove(pool, `new${k - 1}`);
      await remove(pool, `w${k}`);
      deleted.push(...(k > 0 ? [`new${k - 1}`] : []), `w${k}`);
      const { clean } = await walkOnce(pool);
      expect(clean[0]).toBe(`new${k}`);
      expect(clean.filter((id) => deleted.includes(id))).toEqual([]);
      expect(clean).toHaveLength(50 - k); // every live item once: w${k + 1}…w49 and new${k}
    }
    await pool.settled();
    expect(pool.builds).toBe(1);
    // the interval passes: one rebuild, in the background; the feed keeps the same answer
    clock.advance(INTERVAL);
    await walkOnce(pool);
    await pool.settled();
    expect(pool.builds).toBe(2);
    const { clean } = await walkOnce(pool);
    expect(clean[0]).toBe('new9');
    expect(clean.filter((id) => deleted.includes(id))).toEqual([]);
  });

  it('an older item published into a pool holding the whole window takes its place by age; one below the pool is met by the keyset walk', async () => {
    await content.upsertItems(
      [
        ...Array.from({ length: 3 }, (_, i) => item(`w${i}`, { ageH: i })),
        ...Array.from({ length: 10 }, (_, i) => item(`o${i}`, { ageH: 200 + i * 10 })),
      ],
      NOW,
    );
    const pool = newPool(8); // the window's 3, then o0..o4; the keyset continues below o4
    const before = (await pool.get(NOW)).entries.map((e) => e.id);
    expect(before).toEqual(['w0', 'w1', 'w2', 'o0', 'o1', 'o2', 'o3', 'o4']);
    await publish(pool, [item('late-a', { ageH: 215 }), item('late-b', { ageH: 500 })]);
    // an edit that moves an item out of the window leaves its old place
    await publish(pool, [item('w1', { ageH: 235 })]);
    const { clean } = await walkOnce(pool, { chunk: 4 });
    expect(clean).toEqual([
      'w0',
      'w2',
      'o0',
      'o1',
      'late-a',
      'o2',
      'o3',
      'w1',
      'o4',
      'o5',
      'o6',
      'o7',
      'o8',
      'o9',
      'late-b',
    ]);
    expect(pool.builds).toBe(1);
  });

  it('a publish that races with a build is applied to the build it lands in', async () => {
    await content.upsertItems(
      Array.from({ length: 10 }, (_, i) => item(`w${i}`, { ageH: i })),
      NOW,
    );
    let open!: () => void;
    let gate: Promise<void> = Promise.resolve();
    // the build's statement runs before the publish commits; its result lands after the patch
    const slow = {
      pooled: recall.pooled.bind(recall),
      fill: async (q: Parameters<CandidateRecall['fill']>[0]) => {
        const r = await recall.fill(q);
        await gate;
        return r;
      },
    };
    const pool = newPool(20, slow);
    await pool.get(NOW);
    gate = new Promise((resolve) => (open = resolve));
    clock.advance(INTERVAL);
    await pool.get(clock.now()); // starts the rebuild in the background
    await publish(pool, [item('raced', { publishedAt: clock.now(), popularity: 1e6 })]);
    expect((await pool.get(clock.now())).entries[0]!.id).toBe('raced'); // patched into the old build
    open();
    await pool.settled();
    expect(pool.builds).toBe(2);
    expect((await pool.get(clock.now())).entries[0]!.id).toBe('raced');
  });

  it("a reader's deep-scroll cursor maps into a rebuilt pool by item id", async () => {
    await content.upsertItems(
      Array.from({ length: 12 }, (_, i) => item(`e${i}`, { ageH: 1, popularity: 100 - i })),
      NOW,
    );
    const pool = newPool(20);
    const readerId = 'deep';
    const first = await walkOnce(pool, { readerId, want: 4, page: 4, chunk: 4 });
    expect(first.clean).toEqual(['e0', 'e1', 'e2', 'e3']);
    expect(first.cursor).toEqual({ p: 'e3' });
    await seen.markSeen(readerId, first.clean, clock.now());
    // another process publishes: this pool learns of it by the interval's rebuild, which shifts every entry
    await content.upsertItems([item('hot', { ageH: 0, popularity: 1e6 })], clock.now());
    clock.advance(INTERVAL);
    await pool.get(clock.now());
    await pool.settled();
    const rebuilt = await pool.get(clock.now());
    expect(rebuilt.gen).toBe(2);
    expect(rebuilt.index.get('e3')).toBe(4);
    // a load_more whose buffer ran out resumes after e3 in the new build
    const resumed = await walkOnce(pool, { readerId, want: 4, page: 4, chunk: 4, cursor: first.cursor, resume: true });
    expect(resumed.clean).toEqual(['e4', 'e5', 'e6', 'e7']);
    expect(resumed.cursor).toEqual({ p: 'e7' });
    // a refresh starts at the top: the new item first, what was served dropped by the seen filter
    const top = await walkOnce(pool, { readerId, want: 4, page: 4, chunk: 4, cursor: first.cursor });
    expect(top.clean.slice(0, 2)).toEqual(['hot', 'e4']);
    // a cursor on an item the new build does not hold restarts the pool from the top
    const gone: WalkCursor = { p: 'not-in-this-build' };
    expect((await walkOnce(pool, { readerId, want: 4, page: 4, chunk: 4, cursor: gone, resume: true })).clean[0]).toBe(
      'hot',
    );
  });

  it("past the decay window every round serves the reader's interest matches first, by relevance × decay", async () => {
    // a catalog older than the window (the HN sample read at wall time): pool rounds, then keyset rounds
    const rust = new Set(['o1', 'o3', 'o6', 'o7', 'o9']);
    await content.upsertItems(
      Array.from({ length: 12 }, (_, i) =>
        item(`o${i}`, {
          ageH: 200 + i,
          title: rust.has(`o${i}`) ? (i === 7 ? 'Rust compilers' : 'Rust') : `other ${i}`,
        }),
      ),
      NOW,
    );
    const pool = newPool(4); // o0..o3, then the keyset walk below o3
    const byAge = (await walkOnce(pool, { chunk: 4 })).clean;
    expect(byAge).toEqual(Array.from({ length: 12 }, (_, i) => `o${i}`));
    const lexemes = await recall.interestLexemes(['rust', 'compilers'], []);
    const ranked = (await walkOnce(pool, { chunk: 4, lexemes })).clean;
    // round 1 (pool): o1, o3 first; round 2 (keyset): o7 holds both words, then o6; round 3: o9
    expect(ranked).toEqual(['o1', 'o3', 'o0', 'o2', 'o7', 'o6', 'o4', 'o5', 'o9', 'o8', 'o10', 'o11']);
  });

  it('matchPool: window entries holding the lexemes, best first by lexemes held × decay × author weight', async () => {
    await content.upsertItems(
      [
        item('both', { title: 'Rust compilers', ageH: 20 }),
        item('one', { title: 'Rust', ageH: 1 }),
        item('meh', { title: 'Rust', ageH: 1, authorId: 'dull' }),
        item('old', { title: 'Rust compilers', ageH: 150 }),
        item('none', { title: 'Gardening', ageH: 1 }),
      ],
      NOW,
    );
    const pool = await newPool(10).get(NOW);
    const q = {
      nowMs: NOW,
      decay: DECAY,
      horizonMs: HORIZON,
      limit: 10,
      weight: (a: string) => (a === 'dull' ? 0.3 : 1),
    };
    // both: 2 × gauss(20 h) ≈ 1.77 beats one: 1 × 1; meh: 0.3; old is past the window
    expect(matchPool(pool, ['rust', 'compil'], q).map((c) => c.id)).toEqual(['both', 'one', 'meh']);
    expect(matchPool(pool, ['rust', 'compil'], { ...q, limit: 1 }).map((c) => c.id)).toEqual(['both']);
    expect(matchPool(pool, [], q)).toEqual([]);
  });
});
