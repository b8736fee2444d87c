/**
 * FanoutWorker: runs fan-out jobs (design note 4's 发布Feed流程, after the queue).
 *
 * One job = one published item:
 * 1. append its tid to the author's outbox (again: idempotent, so a publish that crashed before its own
 *    outbox write is repaired here);
 * 2. celebrity (followers > threshold, note 4's 大V): no push — the author's pull tid is raised, so readers
 *    merge the outbox at read time (读扩散);
 *    otherwise push the tid into the inboxes of the author's **active** followers (last read within the
 *    active window of the job's time; note 4's 冷热分离, Misskey's follower hibernation), paged by
 *    follower id in chunks of `chunkSize`, with a checkpoint after each chunk (a retry resumes there);
 * 3. delete the pending row: the tid becomes visible once every smaller tid is done (the watermark).
 *
 * Idempotent: a retried or duplicated job pushes the same tid again, which changes nothing (ZADD of an
 * existing member); an entry trimmed meanwhile stays out (pushes at or below an inbox's floor are
 * dropped). Crash-safe: the pending row outlives a crash; `sweep()` re-enqueues rows older than
 * `staleMs` (wall clock), and runs at start and every `sweepEveryMs`.
 */
import type { FanoutConsumer, FanoutJob, JobContext } from '../ports/fanout-queue.js';
import type { TimelineDeps } from './following-timeline.js';

/** Tunables of the fan-out; durations in ms. */
export interface FanoutSettings {
  /** Followers who read within this window of the publish time get pushes (default 7 days, note 4). */
  activeWindowMs: number;
  /** Entries kept per inbox (default 800). */
  inboxLength: number;
  /** Entries kept per outbox (default 800). */
  outboxLength: number;
  /** More followers than this → celebrity: pulled, not pushed (default 10,000). */
  celebrityThreshold: number;
  /** Followers per chunk (one SQL page, one pipelined push). */
  chunkSize: number;
  /** Pending rows older than this (wall clock) are re-enqueued by the sweep. */
  staleMs: number;
  /** How often the sweep runs while the worker runs. */
  sweepEveryMs: number;
}

/** Ports the worker depends on: the same as the timeline's. */
export type FanoutDeps = TimelineDeps;

/** What one job did. */
export interface FanoutOutcome {
  deliveries: number;
  pulled: boolean;
}

/** A running worker. */
export interface RunningWorker {
  /** Stops taking jobs and the sweep; `force` abandons running jobs (a crash, for tests). */
  stop(force?: boolean): Promise<void>;
}

export class FanoutWorker {
  constructor(
    private readonly deps: FanoutDeps,
    private readonly settings: FanoutSettings,
  ) {}

  /**
   * Runs one job (see the module doc). Store errors propagate: the queue retries the job.
   * @returns deliveries made by this run and whether the item was left to be pulled.
   */
  async handle(job: FanoutJob, ctx: Pick<JobContext, 'checkpoint'>): Promise<FanoutOutcome> {
    const { graph, store, index } = this.deps;
    await store.appendToOutbox(job.authorId, job.tid, this.settings.outboxLength);
    const author = await graph.authorInfo(job.authorId);
    const pulled = author.followers > this.settings.celebrityThreshold;
    const deliveries = pulled ? await this.leaveToPull(job) : await this.pushToFollowers(job, ctx);
    await index.completeFanout(job.tid);
    return { deliveries, pulled };
  }

  /**
   * Starts consuming the queue with `concurrency` jobs at once, and the sweep (one immediately).
   * @param onDone called after each job with its outcome and lag (simulation, tests).
   */
  start(concurrency = 1, onDone?: (job: FanoutJob, outcome: FanoutOutcome, lagMs: number) => void): RunningWorker {
    const outcomes = new Map<number, FanoutOutcome>();
    const consumer: FanoutConsumer = this.deps.queue.consume(
      async (job, ctx) => {
        outcomes.set(job.tid, await this.handle(job, ctx));
      },
      {
        concurrency,
        onCompleted: (job, finishedAtMs) => {
          const outcome = outcomes.get(job.tid) ?? { deliveries: 0, pulled: false };
          outcomes.delete(job.tid);
          const lagMs = Math.max(0, finishedAtMs - job.enqueuedAtMs);
          this.deps.metrics.fanout(outcome.deliveries, outcome.pulled, lagMs);
          onDone?.(job, outcome, lagMs);
        },
        onFailed: (job, err) => {
          this.deps.metrics.fanoutFailed();
          this.deps.log.error({ err, tid: job.tid, itemId: job.itemId }, 'fan-out job failed its last attempt; the sweep will retry it');
        },
      },
    );
    const sweepOnce = () => void this.sweep().catch((err: unknown) => this.deps.log.warn({ err }, 'fan-out sweep failed'));
    sweepOnce();
    const timer = setInterval(sweepOnce, this.settings.sweepEveryMs);
    timer.unref();
    return {
      stop: async (force = false) => {
        clearInterval(timer);
        await consumer.close(force);
      },
    };
  }

  /**
   * Re-enqueues pending fan-outs recorded more than `staleMs` ago (wall clock): jobs a crash lost, or
   * that failed every attempt. Jobs still queued are not duplicated (same job id).
   * @returns how many were re-enqueued.
   */
  async sweep(wallNowMs = Date.now()): Promise<number> {
    const rows = await this.deps.index.pendingBefore(wallNowMs - this.settings.staleMs, 1_000);
    await this.deps.queue.enqueue(rows.map((r) => ({ tid: r.tid, itemId: r.itemId, authorId: r.authorId, nowMs: r.nowMs, enqueuedAtMs: r.recordedAtMs })));
    return rows.length;
  }

  private async leaveToPull(job: FanoutJob): Promise<number> {
    await this.deps.graph.markPulled(job.authorId, job.tid);
    return 0;
  }

  /** Pushes to active followers chunk by chunk, resuming after `job.after` (Mastodon `push_to_home`). */
  private async pushToFollowers(job: FanoutJob, ctx: Pick<JobContext, 'checkpoint'>): Promise<number> {
    const { graph, store } = this.deps;
    const { chunkSize, activeWindowMs, inboxLength } = this.settings;
    let after = job.after ?? null;
    let deliveries = 0;
    for (;;) {
      const readers = await graph.activeFollowers(job.authorId, job.nowMs - activeWindowMs, after, chunkSize);
      if (readers.length === 0) break;
      deliveries += await store.pushToInboxes(readers, job.tid, inboxLength);
      after = readers[readers.length - 1]!;
      if (readers.length < chunkSize) break;
      await ctx.checkpoint(after);
    }
    return deliveries;
  }
}
