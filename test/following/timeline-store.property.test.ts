/**
 * Property test: the in-process TimelineStore is the executable spec of the Redis one. Random sequences
 * of every write (outbox appends, pushes, rebuilds begun and completed, backfill merges, removals) over a
 * few readers and authors, with tiny lengths so trimming and floors happen all the time, run against both;
 * after each operation the answers (push counts, merge results) must be equal, and at the end every
 * inbox and outbox must read the same state, floor and tids for random ranges.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryTimelineStore } from '../../src/following/adapters/memory-timeline-store.js';
import { RedisTimelineStore } from '../../src/following/adapters/redis-timeline-store.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import type { TimelineStore } from '../../src/following/timeline-store.js';
import { fileRedis } from '../support/redis.js';

const { redis, nextPrefix } = fileRedis();

const READERS = ['r0', 'r1', 'r2'];
const AUTHORS = ['a0', 'a1'];
const MAX_LEN = 4;
const TTL = 3_600_000;
/** Tids from a small range, so repeats (idempotence) and old tids (below floors) are frequent. */
const tid = fc.integer({ min: 1, max: 40 });
const tids = fc.array(tid, { maxLength: 8 });

const op = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), who: fc.nat({ max: AUTHORS.length - 1 }), tid }),
  fc.record({ kind: fc.constant('push' as const), readers: fc.subarray([0, 1, 2]), tid }),
  fc.record({ kind: fc.constant('begin' as const), who: fc.nat({ max: READERS.length - 1 }) }),
  fc.record({
    kind: fc.constant('complete' as const),
    who: fc.nat({ max: READERS.length - 1 }),
    tids,
    floor: fc.integer({ min: 0, max: 40 }),
  }),
  fc.record({
    kind: fc.constant('merge' as const),
    who: fc.nat({ max: READERS.length - 1 }),
    tids,
    floor: fc.integer({ min: 0, max: 40 }),
  }),
  fc.record({ kind: fc.constant('removeIn' as const), who: fc.nat({ max: READERS.length - 1 }), tids }),
  fc.record({ kind: fc.constant('removeOut' as const), who: fc.nat({ max: AUTHORS.length - 1 }), tids }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

/** Applies one operation; returns what it answered (compared between the stores). */
async function apply(s: TimelineStore, o: Op): Promise<unknown> {
  switch (o.kind) {
    case 'append':
      return s.appendToOutbox(AUTHORS[o.who]!, o.tid, MAX_LEN, 3_600_000);
    case 'push':
      return s.pushToInboxes(
        o.readers.map((i) => READERS[i]!),
        o.tid,
        MAX_LEN,
      );
    case 'begin':
      return s.beginRebuild(READERS[o.who]!, TTL);
    case 'complete':
      // a rebuild completes only a prepared inbox, as populateInbox does
      if ((await s.readInbox(READERS[o.who]!, { hi: Infinity, lo: 0, count: 1 })).state === 'missing') return 'skipped';
      return s.completeRebuild(
        READERS[o.who]!,
        [...new Set(o.tids)].sort((a, b) => b - a),
        o.floor,
        MAX_LEN,
        TTL,
      );
    case 'merge':
      return s.mergeIntoInbox(
        READERS[o.who]!,
        [...new Set(o.tids)].sort((a, b) => b - a),
        o.floor,
        MAX_LEN,
      );
    case 'removeIn':
      return s.removeFromInbox(READERS[o.who]!, o.tids);
    case 'removeOut':
      return s.removeFromOutbox(AUTHORS[o.who]!, o.tids);
  }
}

/** Everything a reader of the stores can observe, over a few ranges. */
async function snapshot(s: TimelineStore): Promise<unknown> {
  const ranges = [
    { hi: Infinity, lo: 0, count: 100 },
    { hi: 30, lo: 5, count: 2 },
    { hi: 20, lo: 0, count: 3 },
  ];
  const out: unknown[] = [];
  for (const r of ranges) {
    for (const reader of READERS) out.push(await s.readInbox(reader, r));
    out.push(await s.readOutboxes(AUTHORS, r));
  }
  return out;
}

describe('TimelineStore property: memory = Redis', () => {
  it('random write sequences leave both stores answering the same', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const memory = new MemoryTimelineStore();
        const onRedis = new RedisTimelineStore(redis, new Keys(nextPrefix()));
        for (const o of ops) expect(await apply(onRedis, o)).toEqual(await apply(memory, o));
        expect(await snapshot(onRedis)).toEqual(await snapshot(memory));
      }),
      { numRuns: 300 },
    );
  }, 120_000);
});
