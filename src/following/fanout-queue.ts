/**
 * FanoutQueue port: the durable queue between publishing and the fan-out worker (the following design: 消息进入队列服务).
 * BullMQ on Redis in production; an in-process queue in the embedded default.
 *
 * Contract (test/contracts/fanout-queue.contract.ts, against both adapters):
 * - At least once: every enqueued job reaches a handler; a handler that throws is retried (up to
 *   `attempts` in total, with a growing delay); a job whose worker died mid-way is run again (BullMQ:
 *   after its lock expires; in process: the pending row in PostgreSQL is swept back, see FanoutWorker).
 * - A job enqueued again while it is waiting or running is not duplicated (job id = its tid).
 * - `checkpoint(after)` stores progress with the job; a retry sees it in `job.after`.
 * - `idle()` resolves once nothing is waiting, delayed or running.
 */

/** One fan-out job: push one published item into its author's followers' inboxes. */
export interface FanoutJob {
  tid: number;
  itemId: string;
  authorId: string;
  /** The publisher's time (virtual in replays), epoch ms, as recorded with the pending fan-out (the push does not depend on it). */
  nowMs: number;
  /** Wall-clock epoch ms when the item was published (fan-out lag is measured from here). */
  enqueuedAtMs: number;
  /** The last follower id already delivered by an earlier attempt (resume point), if any. */
  after?: string | null;
}

/** What a handler gets besides the job. */
export interface JobContext {
  /** 1 for the first run, 2 for the first retry, … */
  attempt: number;
  /** Stores the resume point with the job (survives a retry). */
  checkpoint(after: string): Promise<void>;
}

export type FanoutHandler = (job: FanoutJob, ctx: JobContext) => Promise<void>;

/** Options of a consumer. */
export interface ConsumeOptions {
  /** Jobs run at once by this consumer (default 1). */
  concurrency?: number;
  /** Called after a job succeeded (its wall-clock completion time), for metrics. */
  onCompleted?(job: FanoutJob, finishedAtMs: number): void;
  /** Called when a job failed its last attempt. */
  onFailed?(job: FanoutJob, err: unknown): void;
}

/** A running consumer. */
export interface FanoutConsumer {
  /** Stops taking jobs; `force` does not wait for running ones (a crash, for tests). */
  close(force?: boolean): Promise<void>;
}

/** Runs of a fan-out job before it is left to the sweep (`FRESHET_FANOUT_ATTEMPTS` defaults to this). */
export const DEFAULT_FANOUT_ATTEMPTS = 10;
/** First retry delay of a failed fan-out job, doubled at each attempt (ms). */
export const DEFAULT_FANOUT_BACKOFF_MS = 200;

export interface FanoutQueue {
  /** Enqueues jobs (a job already waiting or running with the same tid is not added again). */
  enqueue(jobs: readonly FanoutJob[]): Promise<void>;
  /** Removes the waiting jobs of these timeline ids (erase: an erased author's fan-outs); running ones finish. */
  remove(tids: readonly number[]): Promise<void>;
  /** Starts a consumer running `handler`. */
  consume(handler: FanoutHandler, opts?: ConsumeOptions): FanoutConsumer;
  /** Jobs not finished: waiting + delayed + running. */
  backlog(): Promise<number>;
  /** Resolves when the backlog is 0 (polls). @throws Error after `timeoutMs` (default 30 s). */
  idle(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}
