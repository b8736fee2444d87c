/**
 * The fan-out queue on BullMQ (Redis): one queue `fanout` under the prefix `keys.fanoutQueuePrefix()`
 * (a single hash tag, as BullMQ requires on a Cluster). Job id = `t<tid>`, so a job enqueued again while
 * it waits or runs is ignored. Retries: `attempts` runs with exponential backoff; completed and finally
 * failed jobs are removed (the `fanout_pending` row stays until a fan-out completes, and the worker's
 * sweep re-enqueues it).
 *
 * **A worker that dies mid-job**. Its job stays in BullMQ's active list, and its tid pins
 * the visibility watermark (src/following/timeline-index.ts) — every newer item stays hidden — until
 * another worker's stalled check moves the job back to waiting. That check (BullMQ
 * `moveStalledJobsToWait`) runs in every worker every `stalledIntervalMs`, at most once per interval per
 * queue (a `stalled-check` key with that time to live), in two passes: one pass puts every active job in
 * the `stalled` set (a live worker's lock renewal takes its jobs out again), the next moves those whose
 * lock key is gone. So a dead worker's job runs again at most lockDuration + 2 × stalledInterval after
 * the kill: 90 s with BullMQ's defaults (30 s + 30 s), ~40 s typically — what was measured. Here the lock is
 * {@link DEFAULT_LOCK_MS} (renewed every half of it) and the check every {@link DEFAULT_STALLED_MS}: at most
 * ~4 s (test/faults/worker-kill.test.ts measures it with real processes and `kill -9`).
 * The cost: each worker renews its jobs' locks once a second (one script call for all of them) and
 * calls the stalled check once a second (a no-op within the interval): a few Redis calls a second per
 * worker. A worker whose event loop stalls longer than the lock (a > 1 s pause) loses its job to
 * another, which runs it again: harmless, fan-out jobs are idempotent (pushes are ZADDs of the same
 * member, the pending row is deleted once), and `maxStalledCount` is high so such a job is never failed
 * for it. A lock shorter than a worker's worst pause only costs duplicate work; set
 * `FRESHET_FANOUT_LOCK_MS` above it on machines with long pauses.
 * Jobs record the worker that runs them (`processedBy` = `<host>:<pid>`).
 *
 * **A producer that never enqueues** (why a job of a worker killed mid-job once waited ~15 minutes to be recovered).
 * BullMQ initialises a connection once — wait until ready, then an `INFO` for the version check — and
 * every command awaits that one promise. The producer connection carries the request deadline
 * (`FRESHET_REDIS_TIMEOUT_MS`, 1 s), so on a loaded machine the `INFO` of a starting server could time
 * out; the rejected promise then failed every enqueue of that process — each publish's and each sweep's
 * ("Redis unavailable: command timed out" once a sweep interval) — until it restarted: fan-outs stayed
 * pending, the watermark stayed pinned, and the following timeline showed nothing new, with every
 * process alive and Redis answering. The producer's queue skips that check (Freshet needs Redis ≥ 6.2
 * anyway, README); test/following/fanout-queue.test.ts fails the first `INFO` after connecting and enqueues.
 *
 * BullMQ needs its own connections (`maxRetriesPerRequest: null`, blocking reads): the adapter opens
 * them from `connect()` and closes them on close. Redis failures of `enqueue` and `backlog` are
 * classified like every Redis adapter's (src/kernel/redis/errors.ts: an outage is STORE_UNAVAILABLE).
 * Connection errors of the queue, the workers and their connections (ioredis reconnects, BullMQ resumes)
 * are logged as one line each through `log`, at most one per {@link BULL_ERROR_LOG_MS} — without a
 * listener BullMQ prints every failed reconnect as a multi-line stack.
 */
import { hostname } from 'node:os';
import { Queue, Worker, type Job } from 'bullmq';
import {
  DEFAULT_FANOUT_ATTEMPTS,
  DEFAULT_FANOUT_BACKOFF_MS,
  type ConsumeOptions,
  type FanoutConsumer,
  type FanoutHandler,
  type FanoutJob,
  type FanoutQueue,
} from '../fanout-queue.js';
import { closeRedis, type RedisClient } from '../../kernel/redis/client.js';
import { redisCall } from '../../kernel/redis/errors.js';

/** Name of the BullMQ queue. */
export const FANOUT_QUEUE = 'fanout';

/** How often a BullMQ connection error is logged at most, ms (the same outage repeats every retry). */
export const BULL_ERROR_LOG_MS = 10_000;

/** Default lock of a running job, ms (BullMQ's is 30,000): renewed every 1,000 ms. */
export const DEFAULT_LOCK_MS = 2_000;
/** Default interval of the stalled-job check, ms (BullMQ's is 30,000). */
export const DEFAULT_STALLED_MS = 1_000;

/** Where connection errors are logged (a pino logger fits). */
export interface BullErrorLog {
  warn(obj: object, msg: string): void;
}

/** Options of {@link BullFanoutQueue}. */
export interface BullQueueOptions {
  /** Opens a new connection (standalone or Cluster) with `maxRetriesPerRequest: null`. */
  connect(): RedisClient;
  /**
   * Opens the queue's own (producer) connection, which blocks on nothing: it may carry the request
   * deadline, so a publish on a stalled Redis fails in time instead of hanging (default: `connect`).
   */
  connectProducer?(): RedisClient;
  /** BullMQ key prefix (from `Keys.fanoutQueuePrefix()`). */
  prefix: string;
  /** Runs per job in total (default 10). */
  attempts?: number;
  /** First retry delay, ms, doubled each retry (default 200). */
  backoffMs?: number;
  /** How long a worker's lock on a job lasts without renewal (default {@link DEFAULT_LOCK_MS}). */
  lockDurationMs?: number;
  /** How often workers look for stalled jobs (default {@link DEFAULT_STALLED_MS}). */
  stalledIntervalMs?: number;
  /** Connection errors go here, one line at most every {@link BULL_ERROR_LOG_MS} (default: stderr). */
  log?: BullErrorLog;
}

/** {@link FanoutQueue} on BullMQ. */
export class BullFanoutQueue implements FanoutQueue {
  private readonly queue: Queue<FanoutJob>;
  private readonly connection: RedisClient;
  private readonly workers = new Set<{ worker: Worker<FanoutJob>; conn: RedisClient }>();
  private lastErrorLogMs = -Infinity;
  /** Connection errors since the last logged one (logged with the next line). */
  private errorsSinceLog = 0;

  constructor(private readonly opts: BullQueueOptions) {
    this.connection = opts.connectProducer?.() ?? opts.connect();
    this.connection.on('error', this.onError('queue connection'));
    this.queue = new Queue<FanoutJob>(FANOUT_QUEUE, {
      connection: this.connection as never,
      prefix: opts.prefix,
      // BullMQ checks the server version with one INFO when a connection opens and keeps that promise:
      // if the INFO fails (the producer's request deadline passed on a loaded machine at start), every
      // later add rejects with the same error for the life of the process. No check, no such failure.
      skipVersionCheck: true,
      defaultJobOptions: {
        attempts: opts.attempts ?? DEFAULT_FANOUT_ATTEMPTS,
        backoff: { type: 'exponential', delay: opts.backoffMs ?? DEFAULT_FANOUT_BACKOFF_MS },
        removeOnComplete: true,
        removeOnFail: true,
      },
    });
    this.queue.on('error', this.onError('queue'));
  }

  /** A rate-limited one-line logger of `source`'s errors (see the module doc). */
  private onError(source: string): (err: Error) => void {
    return (err: Error) => {
      this.errorsSinceLog++;
      const now = Date.now();
      if (now - this.lastErrorLogMs < BULL_ERROR_LOG_MS) return;
      this.lastErrorLogMs = now;
      const detail = {
        source,
        err: err.message,
        code: (err as NodeJS.ErrnoException).code,
        errors: this.errorsSinceLog,
      };
      this.errorsSinceLog = 0;
      if (this.opts.log) this.opts.log.warn(detail, 'fan-out queue: redis connection error (retrying)');
      else process.stderr.write(`fan-out queue: redis connection error (retrying): ${source}: ${err.message}\n`);
    };
  }

  async remove(tids: readonly number[]): Promise<void> {
    // a job that is running (locked) cannot be removed: it finishes, and its push finds no erased inbox
    await Promise.all(tids.map((tid) => this.queue.remove(`t${tid}`).catch(() => 0)));
  }

  async enqueue(jobs: readonly FanoutJob[]): Promise<void> {
    if (jobs.length === 0) return;
    await redisCall(
      this.queue.addBulk(jobs.map((data) => ({ name: FANOUT_QUEUE, data, opts: { jobId: `t${data.tid}` } }))),
    );
  }

  consume(handler: FanoutHandler, opts: ConsumeOptions = {}): FanoutConsumer {
    const conn = this.opts.connect();
    conn.on('error', this.onError('worker connection'));
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
        lockDuration: this.opts.lockDurationMs ?? DEFAULT_LOCK_MS,
        stalledInterval: this.opts.stalledIntervalMs ?? DEFAULT_STALLED_MS,
        maxStalledCount: 1_000,
        name: `${hostname()}:${process.pid}`,
      },
    );
    worker.on('completed', (job: Job<FanoutJob>) => opts.onCompleted?.(job.data, job.finishedOn ?? Date.now()));
    worker.on('failed', (job: Job<FanoutJob> | undefined, err: Error) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) opts.onFailed?.(job.data, err);
    });
    worker.on('error', this.onError('worker')); // connection errors: ioredis reconnects, BullMQ resumes
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
    const counts = await redisCall(
      this.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children'),
    );
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
