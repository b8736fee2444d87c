/**
 * Property test: the memory seen filter is the executable spec of the Redis one. Random sequences of
 * markSeen/seen over a few readers, items and virtual days run against both with the same (tiny,
 * collision-prone) geometry and shard count; every answer must be identical, false positives
 * included, the live bitmaps must hold the same bytes, and a member marked within the window must
 * always answer true.
 *
 * The Redis side is two instances over the same keys, as two processes would be: one with the
 * default past-day cache, one whose cache holds only 2 bitmaps (the other days tested in Lua); each
 * operation goes through either. Marks may be LATE — on a day before the current one (a replay or a
 * lagging process writes a past day) — which must reach the other instance's cached copies.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, startOfDay } from '../../src/kernel/clock.js';
import { sizeWindow, type BloomGeometry } from '../../src/seen/bloom.js';
import { MemorySeenFilter } from '../../src/seen/memory-seen-filter.js';
import { RedisSeenFilter } from '../../src/seen/redis-seen-filter.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { fixedLayout } from '../../src/seen/layout.js';
import { deleteByPrefix, fileRedis } from '../support/redis.js';

const { redis, nextPrefix } = fileRedis();

const DAYS = 3;
const SHARDS = 2;
/**
 * 30 members per day at 20 % for the whole window: answers at capacity collide often (false
 * positives must agree too). 600 at 1 %: bitmaps stay sparse, so a stale copy of a past day would
 * show as a wrong 'false' (in the tiny one, saturated bitmaps answer 'true' anyway).
 */
const GEOMETRIES = { tiny: sizeWindow(30, 0.2, DAYS), sparse: sizeWindow(600, 0.01, DAYS) };
const READERS = ['u_0', 'u_1', 'u_2', 'u_3'];
const ITEMS = Array.from({ length: 60 }, (_, i) => `doc_${i}`);

/** One operation; `advanceMs` moves virtual time first. */
const opOf = (advanceMs: fc.Arbitrary<number>) =>
  fc.record({
    kind: fc.constantFrom('mark', 'seen'),
    reader: fc.nat({ max: READERS.length - 1 }),
    items: fc.array(fc.nat({ max: ITEMS.length - 1 }), { maxLength: 20 }),
    /** Which Redis instance runs the operation. */
    via: fc.nat({ max: 1 }),
    /**
     * A mark lands this many days before now (0: today), within the window: a day before it may be
     * gone from memory (virtual time) yet not from Redis (real time), and the final byte compare
     * would then differ for a reason unrelated to the seen check.
     */
    lateDays: fc.oneof(fc.constant(0), fc.nat({ max: DAYS - 1 })),
    /** Virtual time moves forward only: Redis keys expire on its own clock, days on `nowMs`. */
    advanceMs,
  });
type Op = ReturnType<typeof opOf> extends fc.Arbitrary<infer T> ? T : never;

/** Days go by: keys are created, become past days, leave the window. */
const roaming = opOf(
  fc.oneof(
    fc.constant(0),
    fc.constant(0),
    fc.integer({ min: 0, max: 6 * HOUR_MS }),
    fc.integer({ min: 0, max: 2 * DAY_MS }),
  ),
);
/** Within one day (start ≤ 12:00, steps ≤ 20 min): late marks hit past days the instances hold copies of. */
const sameDay = opOf(fc.integer({ min: 0, max: 20 * 60_000 }));

/**
 * Runs `ops` against two Redis instances over one prefix and the memory filter, from `startMs`:
 * every answer equal, marked members always seen in window, and the same bytes in the end.
 */
async function agree(geometry: BloomGeometry, ops: Op[], startMs: number): Promise<void> {
  const prefix = nextPrefix();
  const keys = new Keys(prefix);
  const layout = fixedLayout(geometry, SHARDS);
  const instances = [
    new RedisSeenFilter(redis, keys, layout, { days: DAYS }),
    new RedisSeenFilter(redis, keys, layout, { days: DAYS, cacheBytes: 2 * Math.ceil(geometry.bits / 8) }),
  ];
  const inMemory = new MemorySeenFilter(layout, { days: DAYS });
  const lastMarked = new Map<string, number>(); // `reader item` → epoch ms of its latest mark
  let now = startMs;
  try {
    for (const o of ops) {
      now += o.advanceMs;
      const reader = READERS[o.reader]!;
      const items = o.items.map((i) => ITEMS[i]!);
      const onRedis = instances[o.via]!;
      if (o.kind === 'mark') {
        const at = now - o.lateDays * DAY_MS;
        await Promise.all([onRedis.markSeen(reader, items, at), inMemory.markSeen(reader, items, at)]);
        for (const item of items) {
          const key = `${reader} ${item}`;
          lastMarked.set(key, Math.max(at, lastMarked.get(key) ?? -Infinity));
        }
      } else {
        const [fromRedis, fromMemory] = await Promise.all([
          onRedis.seen(reader, items, now),
          inMemory.seen(reader, items, now),
        ]);
        expect(fromRedis).toEqual(fromMemory);
        items.forEach((item, i) => {
          const at = lastMarked.get(`${reader} ${item}`);
          if (at !== undefined && now < startOfDay(at) + DAYS * DAY_MS) expect(fromMemory[i]).toBe(true);
        });
      }
    }
    for (const [name, day] of inMemory.dayFilters()) {
      const stored = (await redis.getBuffer(prefix + name)) ?? Buffer.alloc(0);
      const padded = Buffer.alloc(day.bitmap.byteLength);
      stored.copy(padded);
      expect(padded.equals(Buffer.from(day.bitmap))).toBe(true);
    }
  } finally {
    await deleteByPrefix(redis, prefix);
  }
}

const D0 = Date.UTC(2026, 2, 5);

describe('SeenFilter: memory and Redis agree', () => {
  it.each(Object.entries(GEOMETRIES))(
    'gives identical answers and bitmaps for random operation sequences (%s geometry)',
    async (_, geometry) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(roaming, { minLength: 1, maxLength: 60 }),
          fc.integer({ min: 0, max: DAY_MS - 1 }),
          (ops, start) => agree(geometry, ops, D0 + start),
        ),
        { numRuns: 200 },
      );
    },
  );

  it('sees late marks to past days through the copies both instances hold (sparse geometry)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(sameDay, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: DAY_MS / 2 }),
        (ops, start) => agree(GEOMETRIES.sparse, ops, D0 + start),
      ),
      { numRuns: 200 },
    );
  });
});
