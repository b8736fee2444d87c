/**
 * Property test: the in-process per-reader seen filter (note 3) is the executable spec of the Redis
 * one. Random sequences of markSeen / seen / describe over a few readers and items, with virtual time
 * moving forward by up to 40 days (so filters expire and restart), run against both with a tiny initial
 * capacity (so sub-filters open often and false positives happen): every answer and every description
 * must be identical, the bitmaps equal byte for byte, and an item marked while the filter lived must
 * answer true until the reader has been idle for the TTL.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/kernel/clock.js';
import { MemoryReaderSeenFilter } from '../../src/seen/memory-reader-seen-filter.js';
import { RedisReaderSeenFilter } from '../../src/seen/redis-reader-seen-filter.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { deleteByPrefix, fileRedis } from '../support/redis.js';
import { redisReaderBitmap } from '../support/adapters.js';
import { geometrySignature } from '../../src/seen/scalable-bloom.js';

const { redis, nextPrefix } = fileRedis();
const READERS = ['u_0', 'u_1', 'u_2'];
const ITEMS = Array.from({ length: 80 }, (_, i) => `doc_${i}`);
const TTL = 30 * DAY_MS;
const SETTINGS = { initialCapacity: 8, errorRate: 0.2, ttlMs: TTL };

const op = fc.record({
  kind: fc.constantFrom('mark', 'mark', 'seen', 'describe'),
  reader: fc.nat({ max: READERS.length - 1 }),
  items: fc.array(fc.nat({ max: ITEMS.length - 1 }), { maxLength: 15 }),
  advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: DAY_MS }), fc.integer({ min: 0, max: 40 * DAY_MS })),
});

describe('per-reader seen filter: memory is the spec of Redis', () => {
  it('agrees on every answer, description and byte, and never forgets a live mark', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const prefix = nextPrefix();
        const onRedis = new RedisReaderSeenFilter(redis, new Keys(prefix), SETTINGS);
        const inMemory = new MemoryReaderSeenFilter(SETTINGS);
        const marked = new Map<string, Set<string>>(); // reader → items marked since its filter (re)started
        const last = new Map<string, number>(); // reader → last activity
        let now = Date.UTC(2026, 2, 5);
        try {
          for (const o of ops) {
            now += o.advanceMs;
            const reader = READERS[o.reader]!;
            const items = o.items.map((i) => ITEMS[i]!);
            const idle = now - (last.get(reader) ?? -Infinity) >= TTL;
            if (idle) marked.delete(reader);
            if (o.kind === 'describe') {
              expect(await onRedis.describe(reader, now)).toEqual(await inMemory.describe(reader, now));
              continue;
            }
            if (o.kind === 'mark') {
              await onRedis.markSeen(reader, items, now);
              await inMemory.markSeen(reader, items, now);
              if (items.length > 0) {
                const set = marked.get(reader) ?? new Set<string>();
                items.forEach((i) => set.add(i));
                marked.set(reader, set);
              }
            } else {
              const [r, m] = [await onRedis.seen(reader, items, now), await inMemory.seen(reader, items, now)];
              expect(r).toEqual(m);
              items.forEach((it, i) => {
                if (marked.get(reader)?.has(it)) expect(r[i]).toBe(true);
              });
            }
            if (items.length > 0 && (o.kind === 'mark' || marked.has(reader)))
              last.set(reader, Math.max(now, last.get(reader) ?? now));
          }
          for (const reader of READERS) {
            const sig = geometrySignature(SETTINGS.initialCapacity, SETTINGS.errorRate);
            const bytes = await redisReaderBitmap(redis, new Keys(prefix), reader, sig);
            const mem =
              (await inMemory.describe(reader, now)).lastActiveMs === null ? undefined : inMemory.bitmapOf(reader);
            if ((await onRedis.describe(reader, now)).lastActiveMs === null) continue; // gone on both (checked above)
            expect(Buffer.compare(bytes ?? Buffer.alloc(0), Buffer.from(mem ?? new Uint8Array(0)))).toBe(0);
          }
        } finally {
          await deleteByPrefix(redis, prefix);
        }
      }),
      { numRuns: 150 },
    );
  });
});
