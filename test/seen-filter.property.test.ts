/**
 * Property test: the memory seen filter is the executable spec of the Redis one. Random sequences of
 * markSeen/seen over a few readers, items and virtual days run against both with the same (tiny,
 * collision-prone) geometry and shard count; every answer must be identical, false positives
 * included, the live bitmaps must hold the same bytes, and a member marked within the window must
 * always answer true.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, startOfDay } from '../src/domain/clock.js';
import { sizeWindow } from '../src/domain/bloom.js';
import { MemorySeenFilter } from '../src/adapters/memory/seen-filter.js';
import { RedisSeenFilter } from '../src/adapters/redis/seen-filter.js';
import { Keys } from '../src/adapters/redis/keys.js';
import { closeRedis, createRedis } from '../src/adapters/redis/client.js';
import { TEST_REDIS_URL, uniquePrefix } from './support/env.js';
import { deleteByPrefix } from './support/redis.js';

const redis = createRedis({ url: TEST_REDIS_URL });
const filePrefix = uniquePrefix();
let run = 0;

afterAll(async () => {
  await deleteByPrefix(redis, filePrefix);
  await closeRedis(redis);
});

const DAYS = 3;
const SHARDS = 2;
/** 30 members per day at 20 % for the whole window: answers at capacity collide often. */
const geometry = sizeWindow(30, 0.2, DAYS);
const READERS = ['u_0', 'u_1', 'u_2', 'u_3'];
const ITEMS = Array.from({ length: 60 }, (_, i) => `doc_${i}`);

const op = fc.record({
  kind: fc.constantFrom('mark', 'seen'),
  reader: fc.nat({ max: READERS.length - 1 }),
  items: fc.array(fc.nat({ max: ITEMS.length - 1 }), { maxLength: 20 }),
  /** Virtual time moves forward only: Redis keys expire on its own clock, days on `nowMs`. */
  advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 6 * HOUR_MS }), fc.integer({ min: 0, max: 2 * DAY_MS })),
});

describe('SeenFilter: memory and Redis agree', () => {
  it('gives identical answers and bitmaps for random operation sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: DAY_MS - 1 }), async (ops, startOffset) => {
        const prefix = `${filePrefix}${run++}:`;
        const onRedis = new RedisSeenFilter(redis, new Keys(prefix, SHARDS), geometry, { days: DAYS });
        const inMemory = new MemorySeenFilter(geometry, { days: DAYS, shards: SHARDS });
        const lastMarked = new Map<string, number>(); // `reader item` → epoch ms of its last mark
        let now = Date.UTC(2026, 2, 5) + startOffset;
        try {
          for (const o of ops) {
            now += o.advanceMs;
            const reader = READERS[o.reader]!;
            const items = o.items.map((i) => ITEMS[i]!);
            if (o.kind === 'mark') {
              await Promise.all([onRedis.markSeen(reader, items, now), inMemory.markSeen(reader, items, now)]);
              for (const item of items) lastMarked.set(`${reader} ${item}`, now);
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
      }),
      { numRuns: 100 },
    );
  });
});
