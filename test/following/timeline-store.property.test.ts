/**
 * Property test: the in-process TimelineStore is the executable spec of the Redis one. Random sequences
 * of every write (outbox appends, pushes, rebuilds begun and completed, backfill merges, removals) over a
 * few readers and authors run against both; after each operation the answers (push counts, merge
 * results) must be equal, and at the end every inbox and outbox must read the same state, floor and tids
 * for random ranges. Two shapes: tiny lengths (4) over tids 1..40, so trimming and floors happen all the
 * time; and lengths of 24 over 160 tids near 2^52 (the 7-byte encoding's high bytes), long enough that the
 * Redis ring grows, wraps around and takes late (out-of-order) pushes into its middle (includes/ring.lua).
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
const TTL = 3_600_000;

/** One shape of the property: entries kept, tids drawn from base + 1..base + span, operations per run. */
interface Shape {
  maxLen: number;
  base: number;
  span: number;
  ops: number;
  runs: number;
}

const SHAPES: Record<string, Shape> = {
  'tiny boxes, small tids': { maxLen: 4, base: 0, span: 40, ops: 40, runs: 300 },
  'rings of 24, tids near 2^52': { maxLen: 24, base: 2 ** 52, span: 160, ops: 120, runs: 60 },
};

/** Random operations of one shape. Tids come from a small range, so repeats (idempotence) and old tids (below floors) are frequent. */
function operations(shape: Shape) {
  const tid = fc.integer({ min: 1, max: shape.span }).map((t) => shape.base + t);
  const tids = fc.array(tid, { maxLength: 8 });
  const floor = fc.oneof(
    fc.constant(0),
    fc.integer({ min: 0, max: shape.span }).map((t) => shape.base + t),
  );
  // pushes dominate, as in production
  const push = fc.record({ kind: fc.constant('push' as const), readers: fc.subarray([0, 1, 2]), tid });
  return fc.oneof(
    {
      arbitrary: fc.record({ kind: fc.constant('append' as const), who: fc.nat({ max: AUTHORS.length - 1 }), tid }),
      weight: 2,
    },
    { arbitrary: push, weight: 4 },
    {
      arbitrary: fc.record({ kind: fc.constant('begin' as const), who: fc.nat({ max: READERS.length - 1 }) }),
      weight: 1,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('complete' as const),
        who: fc.nat({ max: READERS.length - 1 }),
        tids,
        floor,
      }),
      weight: 1,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('merge' as const),
        who: fc.nat({ max: READERS.length - 1 }),
        tids,
        floor,
      }),
      weight: 1,
    },
    {
      arbitrary: fc.record({ kind: fc.constant('removeIn' as const), who: fc.nat({ max: READERS.length - 1 }), tids }),
      weight: 1,
    },
    {
      arbitrary: fc.record({ kind: fc.constant('removeOut' as const), who: fc.nat({ max: AUTHORS.length - 1 }), tids }),
      weight: 1,
    },
  );
}
type Op = ReturnType<typeof operations> extends fc.Arbitrary<infer T> ? T : never;

/** Applies one operation; returns what it answered (compared between the stores). */
async function apply(s: TimelineStore, o: Op, maxLen: number, prepare = false): Promise<unknown> {
  switch (o.kind) {
    case 'append':
      return s.appendToOutbox(AUTHORS[o.who]!, o.tid, maxLen, TTL);
    case 'push':
      return s.pushToInboxes(
        o.readers.map((i) => READERS[i]!),
        o.tid,
        maxLen,
      );
    case 'begin':
      return s.beginRebuild(READERS[o.who]!, TTL);
    case 'complete':
      if (prepare) await s.beginRebuild(READERS[o.who]!, TTL);
      // a rebuild completes only a prepared inbox, as populateInbox does
      if ((await s.readInbox(READERS[o.who]!, { hi: Infinity, lo: 0, count: 1 })).state === 'missing') return 'skipped';
      return s.completeRebuild(
        READERS[o.who]!,
        [...new Set(o.tids)].sort((a, b) => b - a),
        o.floor,
        maxLen,
        TTL,
      );
    case 'merge':
      return s.mergeIntoInbox(
        READERS[o.who]!,
        [...new Set(o.tids)].sort((a, b) => b - a),
        o.floor,
        maxLen,
      );
    case 'removeIn':
      return s.removeFromInbox(READERS[o.who]!, o.tids);
    case 'removeOut':
      return s.removeFromOutbox(AUTHORS[o.who]!, o.tids);
  }
}

/** Everything a reader of the stores can observe, over a few ranges. */
async function snapshot(s: TimelineStore, shape: Shape): Promise<unknown> {
  const at = (f: number) => shape.base + Math.round(shape.span * f);
  const ranges = [
    { hi: Infinity, lo: 0, count: 100 },
    { hi: at(0.75), lo: at(0.125), count: 2 },
    { hi: at(0.5), lo: 0, count: 3 },
    { hi: Infinity, lo: at(0.9), count: 5 },
    { hi: at(0.95), lo: at(0.05), count: 1_000 },
  ];
  const out: unknown[] = [];
  for (const r of ranges) {
    for (const reader of READERS) out.push(await s.readInbox(reader, r));
    out.push(await s.readOutboxes(AUTHORS, r));
  }
  return out;
}

describe('TimelineStore property: memory = Redis', () => {
  for (const [name, shape] of Object.entries(SHAPES)) {
    it(`random write sequences leave both stores answering the same (${name})`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(operations(shape), { minLength: Math.ceil(shape.ops / 2), maxLength: shape.ops, size: 'max' }),
          async (ops) => {
            const memory = new MemoryTimelineStore();
            const onRedis = new RedisTimelineStore(redis, new Keys(nextPrefix()));
            // r0 and r1 start ready (most pushes land), r2 missing until an operation prepares it
            for (const st of [memory, onRedis])
              for (const r of READERS.slice(0, 2))
                await apply(st, { kind: 'complete', who: READERS.indexOf(r), tids: [], floor: 0 }, shape.maxLen, true);
            for (const o of ops)
              expect(await apply(onRedis, o, shape.maxLen)).toEqual(await apply(memory, o, shape.maxLen));
            expect(await snapshot(onRedis, shape)).toEqual(await snapshot(memory, shape));
          },
        ),
        { numRuns: shape.runs },
      );
    }, 120_000);
  }
});
