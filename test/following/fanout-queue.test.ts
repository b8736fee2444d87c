/**
 * The FanoutQueue contract on the in-process queue and on BullMQ (real Redis, a key prefix per test), and
 * a BullMQ producer whose connection's first INFO fails still enqueueing.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Keys } from '../../src/kernel/redis/keys.js';
import { MemoryFanoutQueue } from '../../src/following/adapters/memory-fanout-queue.js';
import { BullFanoutQueue } from '../../src/following/adapters/bullmq-fanout-queue.js';
import { fanoutQueueContract } from '../contracts/fanout-queue.contract.js';
import { TEST_REDIS_URL, uniquePrefix } from '../support/env.js';
import { adopt, memory, redisEngine } from '../support/contract.js';

adopt(
  fanoutQueueContract,
  memory,
  () => ({ queue: new MemoryFanoutQueue({ attempts: 3, backoffMs: 5 }) }),
  'in-process',
);

adopt(
  fanoutQueueContract,
  redisEngine(),
  ({ keys }) => ({
    queue: new BullFanoutQueue({
      connect: () => new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }),
      prefix: keys.fanoutQueuePrefix(),
      attempts: 3,
      backoffMs: 10,
    }),
  }),
  'bullmq',
);

describe('BullFanoutQueue producer', () => {
  it('enqueues although the first INFO on its connection failed (a missed deadline at start does not break it for good)', async () => {
    const prefix = new Keys(uniquePrefix()).fanoutQueuePrefix();
    let failedInfo = 0;
    const connectProducer = () => {
      const c = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3, commandTimeout: 1_000 });
      // once ready, the next INFO misses its deadline, as a starting server's did on a loaded machine
      c.once('ready', () => {
        const info = c.info.bind(c) as (...args: unknown[]) => Promise<string>;
        let first = true;
        (c as unknown as { info: (...args: unknown[]) => Promise<string> }).info = (...args: unknown[]) => {
          if (!first) return info(...args);
          first = false;
          failedInfo++;
          return Promise.reject(new Error('Command timed out'));
        };
      });
      return c;
    };
    const queue = new BullFanoutQueue({
      connect: () => new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }),
      connectProducer,
      prefix,
      attempts: 1,
    });
    try {
      await queue.enqueue([{ tid: 1, itemId: 'i1', authorId: 'a', nowMs: 0, enqueuedAtMs: Date.now() }]);
      await queue.enqueue([{ tid: 2, itemId: 'i2', authorId: 'a', nowMs: 0, enqueuedAtMs: Date.now() }]);
      expect(await queue.backlog()).toBe(2);
      expect(failedInfo).toBe(0); // the producer sends no INFO of its own: nothing to fail
    } finally {
      await queue.obliterate();
      await queue.close();
    }
  });
});
