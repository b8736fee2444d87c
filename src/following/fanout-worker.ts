/**
 * FanoutWorker: runs fan-out jobs (the following design's 发布Feed流程, after the queue).
 *
 * One job = one published item:
 * 1. append its tid to the author's outbox (again: idempotent, so a publish that crashed before its own
 *    outbox write is repaired here);
 * 2. celebrity (followers > threshold, the following design's 大V): no push — the author's pull tid is raised, so readers
 *    merge the outbox at read time (读扩散);
 *    otherwise push the tid into **every inbox that exists** among the author's followers, paged by
 *    follower id in chunks of `chunkSize` (followers who ever read: only they can hold one), with a
 *    checkpoint after each chunk (a retry resumes there);
 * 3. delete the pending row: the tid becomes visible once every smaller tid is done (the watermark).
 *
 * **Why every existing inbox, not the followers active at the job's time.** A read trusts an inbox whose
 * state is `ready` (above its floor, PostgreSQL is never asked), so an inbox that exists must receive
 * every push. Choosing followers by `last_active_at ≥ job time − active window` did not guarantee it:
 * a job whose time runs ahead of the reader's (a publisher's clock ahead of the reader's server, a
 * publish without `X-Freshet-Now` beside virtual-time reads) or that read the graph just before a read
 * moved `last_active_at` forward skipped a reader whose inbox a later read still trusted, and the item
 * was missing from that timeline for as long as the inbox lived. Now the rule does not depend on any
 * clock: the push script delivers to each inbox whose state exists at that moment (tlPush), and an inbox
 * prepared afterwards finds the item in PostgreSQL (it is committed before its job runs). The following design's
 * hot/cold split (冷热分离, Misskey's follower hibernation) is kept by the inboxes themselves: a cold
 * reader's inbox expires (Redis: the active window after its last read) and then gets nothing — the job
 * visits it with one state check, no write.
 *
 * Idempotent: a retried or duplicated job pushes the same tid again, which changes nothing (ZADD of an
 * existing member); an entry trimmed meanwhile stays out (pushes at or below an inbox's floor are
 * dropped). A job whose pending row is gone — its fan-out done, or its author erased — writes nothing. Crash-safe: the pending row outlives a crash; `sweep()` re-enqueues rows older than
 * `staleMs` (wall clock), and runs at start and every `sweepEveryMs`.
 */
import type { FanoutConsumer, FanoutJob, JobContext } from './fanout-queue.js';
import { publishToTimeline } from './publish.js';
import type { TimelineDeps } from './service.js';

/** Tunables of the fan-out; durations in ms. */
export interface FanoutSettings {
  /** An outbox lives this long after its author's last publish, wall clock (default 7 days, the following design). */
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

/** Rows one sweep step reads (pending fan-outs, or unpublished items per round). */
export const SWEEP_BATCH = 1_000;
/**
 * Rounds of unpublished items one sweep publishes at most (the next sweep takes the rest), so a large
 * backlog (a data folder filled by an older importer) is spread over sweeps instead of stalling an
 * embedded server.
 */
export const SWEEP_MAX_ROUNDS = 5;

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
    // done already, or its author erased (the row goes with the erase): a job queued again writes nothing,
    // so it never brings an erased author's outbox back
    if (!(await index.isPending(job.tid))) return { deliveries: 0, pulled: false };
    await store.appendToOutbox(job.authorId, job.tid, this.settings.outboxLength, this.settings.activeWindowMs);
    const author = await graph.authorInfo(job.authorId);
    const pulled = author.followers > this.settings.celebrityThreshold;
    const deliveries = pulled ? await this.leaveToPull(job) : await this.pushToFollowers(job, ctx);
    await index.completeFanout(job.tid);
    return { deliveries, pulled };
  }

  /**
   * Starts consuming the queue with `concurrency` jobs at once, and the sweep (one immediately, of every
   * pending fan-out; then every `sweepEveryMs`, of those older than `staleMs`).
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
          this.deps.log.error(
            { err, tid: job.tid, itemId: job.itemId },
            'fan-out job failed its last attempt; the sweep will retry it',
          );
        },
      },
    );
    const sweepOnce = (wallNowMs?: number) =>
      void this.sweep(wallNowMs).catch((err: unknown) => this.deps.log.warn({ err }, 'fan-out sweep failed'));
    // At start every pending fan-out is taken, however recent: an in-process queue starts empty, so each
    // one is orphaned (a CLI import that closed, a crash), and a queued BullMQ job is not added twice.
    sweepOnce(Date.now() + this.settings.staleMs);
    const timer = setInterval(() => sweepOnce(), this.settings.sweepEveryMs);
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
    const published = await this.publishUnpublished();
    const rows = await this.deps.index.pendingBefore(wallNowMs - this.settings.staleMs, SWEEP_BATCH);
    await this.deps.queue.enqueue(
      rows.map((r) => ({
        tid: r.tid,
        itemId: r.itemId,
        authorId: r.authorId,
        nowMs: r.nowMs,
        enqueuedAtMs: r.recordedAtMs,
      })),
    );
    return published + rows.length;
  }

  /**
   * Publishes committed items that never got a timeline id (their publish failed after the commit), in
   * batches of {@link SWEEP_BATCH}, each at its newest `update_time` (the time the failed request used),
   * and enqueues their fan-outs. Publishing is idempotent, so a request finishing meanwhile is harmless.
   * @returns how many items were published.
   */
  private async publishUnpublished(): Promise<number> {
    let total = 0;
    for (let round = 0; round < SWEEP_MAX_ROUNDS; round++) {
      const rows = await this.deps.index.unpublished(SWEEP_BATCH);
      if (rows.length === 0) break;
      const nowMs = Math.max(...rows.map((r) => r.updateTimeMs));
      const published = await publishToTimeline(
        { deps: this.deps, ...this.settings },
        rows.map((r) => r.itemId),
        nowMs,
      );
      total += published.length;
      if (rows.length < SWEEP_BATCH) break;
      await new Promise((resolve) => setImmediate(resolve)); // let requests run between rounds
    }
    if (total > 0)
      this.deps.log.warn({ items: total }, 'fan-out sweep published items whose publish had failed after their commit');
    return total;
  }

  private async leaveToPull(job: FanoutJob): Promise<number> {
    await this.deps.graph.markPulled(job.authorId, job.tid);
    return 0;
  }

  /**
   * Pushes into every existing inbox of the author's followers chunk by chunk, resuming after `job.after`
   * (Mastodon `push_to_home`; see the module doc for why not only active followers).
   */
  private async pushToFollowers(job: FanoutJob, ctx: Pick<JobContext, 'checkpoint'>): Promise<number> {
    const { graph, store } = this.deps;
    const { chunkSize, inboxLength } = this.settings;
    let after = job.after ?? null;
    let deliveries = 0;
    for (;;) {
      const readers = await graph.readingFollowers(job.authorId, after, chunkSize);
      if (readers.length === 0) break;
      deliveries += await store.pushToInboxes(readers, job.tid, inboxLength);
      after = readers[readers.length - 1]!;
      if (readers.length < chunkSize) break;
      await ctx.checkpoint(after);
    }
    return deliveries;
  }
}
