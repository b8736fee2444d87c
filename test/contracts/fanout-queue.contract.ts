/**
 * The FanoutQueue port contract (src/following/fanout-queue.ts), adopted through test/support/contract.ts.
 * The factory's queue, over an empty store, retries 3 times in total with a short backoff.
 */
import { describe, expect, it } from 'vitest';
import type { FanoutJob, FanoutQueue } from '../../src/following/fanout-queue.js';

export interface FanoutQueueHarness {
  queue: FanoutQueue;
}

const job = (tid: number): FanoutJob => ({ tid, itemId: `i${tid}`, authorId: 'a', nowMs: 1, enqueuedAtMs: Date.now() });

async function withQueue(factory: () => Promise<FanoutQueueHarness>, body: (q: FanoutQueue) => Promise<void>) {
  const h = await factory();
  try {
    await body(h.queue);
  } finally {
    await h.queue.close();
  }
}

export function fanoutQueueContract(name: string, factory: () => Promise<FanoutQueueHarness>): void {
  describe(`FanoutQueue contract: ${name}`, () => {
    it('runs every job once, with its data, and reports completion', async () => {
      await withQueue(factory, async (q) => {
        const seen: number[] = [];
        const completed: number[] = [];
        const c = q.consume(async (j) => void seen.push(j.tid), {
          concurrency: 4,
          onCompleted: (j) => completed.push(j.tid),
        });
        await q.enqueue([job(1), job(2), job(3)]);
        await q.idle();
        await c.close();
        expect(seen.sort()).toEqual([1, 2, 3]);
        expect(completed.sort()).toEqual([1, 2, 3]);
        expect(await q.backlog()).toBe(0);
      });
    });

    it('does not duplicate a job enqueued again while it waits', async () => {
      await withQueue(factory, async (q) => {
        await q.enqueue([job(7)]);
        await q.enqueue([job(7), job(8)]);
        expect(await q.backlog()).toBe(2);
        const seen: number[] = [];
        const c = q.consume(async (j) => void seen.push(j.tid));
        await q.idle();
        await c.close();
        expect(seen.sort()).toEqual([7, 8]);
      });
    });

    it('retries a failing job with its checkpoint until it succeeds', async () => {
      await withQueue(factory, async (q) => {
        const runs: { attempt: number; after: string | null | undefined }[] = [];
        const c = q.consume(async (j, ctx) => {
          runs.push({ attempt: ctx.attempt, after: j.after });
          await ctx.checkpoint(`step${ctx.attempt}`);
          if (ctx.attempt < 3) throw new Error('transient');
        });
        await q.enqueue([job(9)]);
        await q.idle();
        await c.close();
        expect(runs).toEqual([
          { attempt: 1, after: undefined },
          { attempt: 2, after: 'step1' },
          { attempt: 3, after: 'step2' },
        ]);
      });
    });

    it('gives up after the last attempt and reports the failure', async () => {
      await withQueue(factory, async (q) => {
        const failed: number[] = [];
        let runs = 0;
        const c = q.consume(
          async () => {
            runs++;
            throw new Error('permanent');
          },
          { onFailed: (j) => failed.push(j.tid) },
        );
        await q.enqueue([job(11)]);
        await q.idle();
        await c.close();
        expect(runs).toBe(3);
        expect(failed).toEqual([11]);
      });
    });
  });
}
