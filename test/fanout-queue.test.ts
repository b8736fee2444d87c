/** The FanoutQueue contract on the in-process queue and on BullMQ (real Redis, a unique queue prefix). */
import { Redis } from 'ioredis';
import { MemoryFanoutQueue } from '../src/adapters/memory/fanout-queue.js';
import { BullFanoutQueue } from '../src/adapters/redis/fanout-queue.js';
import { Keys } from '../src/adapters/redis/keys.js';
import { fanoutQueueContract } from './contracts/fanout-queue.contract.js';
import { TEST_REDIS_URL, uniquePrefix } from './support/env.js';
import { dropPrefix } from './support/app.js';

fanoutQueueContract('in-process', async () => ({ queue: new MemoryFanoutQueue({ attempts: 3, backoffMs: 5 }), cleanup: async () => {} }));

fanoutQueueContract('bullmq', async () => {
  const prefix = uniquePrefix();
  const queue = new BullFanoutQueue({
    connect: () => new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }),
    prefix: new Keys(prefix).fanoutQueuePrefix(),
    attempts: 3,
    backoffMs: 10,
  });
  return { queue, cleanup: () => dropPrefix(prefix) };
});
