/**
 * The in-process fan-out queue of the embedded default: jobs wait in an array, consumers run them with a
 * bounded concurrency, a failed job is retried after `backoffMs × 2^(attempt−1)` up to `attempts` runs.
 * A job is never queued twice while waiting, delayed or running (same tid).
 *
 * Durability comes from PostgreSQL, not from here: a published item keeps its `fanout_pending` row until
 * its fan-out completes, and the fan-out worker's sweep re-enqueues rows left behind — so jobs this queue
 * lost in a crash are run again after the restart.
 */
import {
  DEFAULT_FANOUT_ATTEMPTS,
  DEFAULT_FANOUT_BACKOFF_MS,
  type ConsumeOptions,
  type FanoutConsumer,
  type FanoutHandler,
  type FanoutJob,
  type FanoutQueue,
} from '../fanout-queue.js';

/** Retry policy of {@link MemoryFanoutQueue}. */
export interface MemoryQueueOptions {
  /** Runs per job in total (default 10). */
  attempts?: number;
  /** Delay before the first retry, ms; doubles each retry (default 100). */
  backoffMs?: number;
}

interface Entry {
  job: FanoutJob;
  attempt: number;
}

interface Consumer {
  handler: FanoutHandler;
  opts: ConsumeOptions;
  running: Set<Promise<void>>;
  closed: boolean;
}

/** {@link FanoutQueue} in process. */
export class MemoryFanoutQueue implements FanoutQueue {
  private readonly waiting: Entry[] = [];
  private readonly known = new Map<number, Entry>(); // tid → entry (waiting, delayed or running)
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly consumers: Consumer[] = [];
  private readonly attempts: number;
  private readonly backoffMs: number;

  constructor(opts: MemoryQueueOptions = {}) {
    this.attempts = opts.attempts ?? DEFAULT_FANOUT_ATTEMPTS;
    this.backoffMs = opts.backoffMs ?? DEFAULT_FANOUT_BACKOFF_MS;
  }

  async remove(tids: readonly number[]): Promise<void> {
    for (const tid of tids) {
      const i = this.waiting.findIndex((e) => e.job.tid === tid);
      if (i >= 0) {
        this.waiting.splice(i, 1);
        this.known.delete(tid);
      }
    }
  }

  async enqueue(jobs: readonly FanoutJob[]): Promise<void> {
    for (const job of jobs) {
      if (this.known.has(job.tid)) continue;
      const entry = { job: { ...job }, attempt: 1 };
      this.known.set(job.tid, entry);
      this.waiting.push(entry);
    }
    this.dispatch();
  }

  consume(handler: FanoutHandler, opts: ConsumeOptions = {}): FanoutConsumer {
    const c: Consumer = { handler, opts, running: new Set(), closed: false };
    this.consumers.push(c);
    this.dispatch();
    return {
      close: async (force = false) => {
        c.closed = true;
        this.consumers.splice(this.consumers.indexOf(c), 1);
        if (!force) await Promise.all([...c.running]);
      },
    };
  }

  async backlog(): Promise<number> {
    return this.known.size;
  }

  async idle(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.known.size > 0) {
      if (Date.now() > deadline)
        throw new Error(`fan-out queue not idle after ${timeoutMs} ms (${this.known.size} jobs)`);
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.waiting.length = 0;
    this.known.clear();
    await Promise.all(this.consumers.map((c) => Promise.all([...c.running])));
  }

  private dispatch(): void {
    for (const c of this.consumers) {
      const limit = c.opts.concurrency ?? 1;
      while (!c.closed && c.running.size < limit && this.waiting.length > 0) this.run(c, this.waiting.shift()!);
    }
  }

  private run(c: Consumer, entry: Entry): void {
    const ctx = { attempt: entry.attempt, checkpoint: async (after: string) => void (entry.job.after = after) };
    const p: Promise<void> = Promise.resolve()
      .then(() => c.handler({ ...entry.job }, ctx))
      .then(
        () => {
          this.known.delete(entry.job.tid);
          c.opts.onCompleted?.(entry.job, Date.now());
        },
        (err: unknown) => this.retry(c, entry, err),
      )
      .finally(() => {
        c.running.delete(p);
        this.dispatch();
      });
    c.running.add(p);
  }

  private retry(c: Consumer, entry: Entry, err: unknown): void {
    if (entry.attempt >= this.attempts) {
      this.known.delete(entry.job.tid);
      c.opts.onFailed?.(entry.job, err);
      return;
    }
    const delay = this.backoffMs * 2 ** (entry.attempt - 1);
    entry.attempt++;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.known.has(entry.job.tid)) return; // the queue was closed
      this.waiting.push(entry);
      this.dispatch();
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }
}
