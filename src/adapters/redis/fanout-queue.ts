/**
 * The fan-out queue on BullMQ (Redis): one queue `fanout` under the prefix `keys.fanoutQueuePrefix()`
 * (a single hash tag, as BullMQ requires on a Cluster). Job id = `t<tid>`, so a job enqueued again while
 * it waits or runs is ignored. Retries: `attempts` runs with exponential backoff; completed and finally
 * failed jobs are removed (the `fanout_pending` row stays until a fan-out completes, and the worker's
 * sweep re-enqueues it). A worker that dies mid-job loses its lock after `lockDurationMs`; BullMQ's
 * stalled-job check then moves the job back to waiting and another worker runs it again.
 *
 * BullMQ needs its own connections (`maxRetriesPerRequest: null`, blocking reads): the adapter opens
 * them from `connect()` and closes them on close.
 */
import { Queue, Worker, type Job } from 'bullmq';
import type { ConsumeOptions, FanoutConsumer, FanoutHandler, FanoutJob, FanoutQueue } from '../../ports/fanout-queue.js';
import { closeRedis, type RedisClient } from './client.js';

/** Name of the BullMQ queue. */
export const FANOUT_QUEUE = 'fanout';

/** Options of {@link BullFanoutQueue}. */
export interface BullQueueOptions {
  /** Opens a new connection (standalone or Cluster) with `maxRetriesPerRequest: null`. */
  connect(): RedisClient;
  /** BullMQ key prefix (from `Keys.fanoutQueuePrefix()`). */
  prefix: string;
  /** Runs per job in total (default 10). */
  attempts?: number;
  /** First retry delay, ms, doubled each retry (default 200). */
  backoffMs?: number;
  /** How long a worker's lock on a job lasts without renewal (default 30 000 ms). */
  lockDurationMs?: number;
  /** How often workers look for stalled jobs (default 30 000 ms). */
  stalledIntervalMs?: number;
}

/** {@link FanoutQueue} on BullMQ. */
export class BullFanoutQueue implements FanoutQueue {
  private readonly queue: Queue<FanoutJob>;
  private readonly connection: RedisClient;
  private readonly workers = new Set<{ worker: Worker<FanoutJob>; conn: RedisClient }>();

  constructor(private readonly opts: BullQueueOptions) {
    this.connection = opts.connect();
    this.queue = new Queue<FanoutJob>(FANOUT_QUEUE, {
      connection: this.connection as never,
      prefix: opts.prefix,
      defaultJobOptions: {
        attempts: opts.attempts ?? 10,
        backoff: { type: 'exponential', delay: opts.backoffMs ?? 200 },
        removeOnComplete: true,
        removeOnFail: true,
      },
    });
  }

  async enqueue(jobs: readonly FanoutJob[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.queue.addBulk(jobs.map((data) => ({ name: FANOUT_QUEUE, data, opts: { jobId: `t${data.tid}` } })));
  }

  consume(handler: FanoutHandler, opts: ConsumeOptions = {}): FanoutConsumer {
    const conn = this.opts.connect();
    const worker = new Worker<FanoutJob>(
      FANOUT_QUEUE,
      async (job: Job<FanoutJob>) => {
        const ctx = {
          attempt: job.attemptsMade + 1,
          checkpoint: async (after: string) => {
            await job.updateData({ ...job.data, after });
          },
        };
        await handler(job.data, ctx);
      },
      {
        connection: conn as never,
        prefix: this.opts.prefix,
        concurrency: opts.concurrency ?? 1,
        lockDuration: this.opts.lockDurationMs ?? 30_000,
        stalledInterval: this.opts.stalledIntervalMs ?? 30_000,
        maxStalledCount: 1_000,
      },
    );
    worker.on('completed', (job: Job<FanoutJob>) => opts.onCompleted?.(job.data, job.finishedOn ?? Date.now()));
    worker.on('failed', (job: Job<FanoutJob> | undefined, err: Error) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) opts.onFailed?.(job.data, err);
    });
    worker.on('error', () => undefined); // connection errors: ioredis reconnects, BullMQ resumes
    const entry = { worker, conn };
    this.workers.add(entry);
    return {
      close: async (force = false) => {
        this.workers.delete(entry);
        await worker.close(force);
        if (force) conn.disconnect();
        else await closeRedis(conn);
      },
    };
  }

  async backlog(): Promise<number> {
    const counts = await this.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  async idle(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const n = await this.backlog();
      if (n === 0) return;
      if (Date.now() > deadline) throw new Error(`fan-out queue not idle after ${timeoutMs} ms (${n} jobs)`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Closes the workers started here, the queue and the connections. */
  async close(): Promise<void> {
    for (const { worker, conn } of [...this.workers]) {
      await worker.close();
      await closeRedis(conn);
    }
    this.workers.clear();
    await this.queue.close();
    await closeRedis(this.connection);
  }

  /** Removes every job and key of the queue (tests, bench). */
  async obliterate(): Promise<void> {
    await this.queue.obliterate({ force: true });
  }
}
