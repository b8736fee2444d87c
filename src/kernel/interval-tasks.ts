/**
 * Background work on interval timers, the one way every room runs it (the hot ranking's workers, the
 * learning room's builder and training): a tick still running when the next is due is skipped, never
 * stacked; a failure is logged and the work is tried again at the next tick; the timers are unref'd (they
 * never keep a process alive on their own); `stop()` clears them and waits for the ticks in progress.
 */
import type { Logger } from './observability.js';

/** A set of interval timers (see the module doc). */
export class IntervalTasks {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<unknown>>();

  /** @param what names the tasks in the log line of a failed tick (e.g. `hot worker`). */
  constructor(
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  /** Whether any task was started. */
  get started(): boolean {
    return this.timers.length > 0;
  }

  /** Runs `task` every `ms` ms (first after `ms`), skipping a tick while the previous one runs. */
  every(name: string, ms: number, task: () => Promise<unknown>): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const run = task()
        .catch((err: unknown) => this.log.warn({ err, worker: name }, `${this.what} tick failed`))
        .finally(() => {
          busy = false;
          this.running.delete(run);
        });
      this.running.add(run);
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  /** Clears the timers and waits for the ticks in progress. */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await Promise.all([...this.running]);
  }
}
