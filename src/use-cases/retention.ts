/**
 * The retention sweeps of the PostgreSQL tables that grow with readers × time (docs/operations.md
 * "Retention"): each capability prunes its own tables through a {@link RetentionTask} (the discover
 * feed's reader signals, the exclusions' engagements and feedback), and this runner makes a pass over
 * each — step after step, each one bounded statement, until the task says the pass is over — every
 * `FRESHET_RETENTION_SWEEP_S`, in the maintenance worker (`startWorkers({ maintenance: true })`: one
 * process of a `serve --workers N` group). Passes are idempotent, so a pass cut by a crash or a
 * database outage is simply run again at the next interval; two processes sweeping at once delete each
 * row once. A pass that is still running when the next is due is not stacked.
 */
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../kernel/clock.js';
import type { Logger } from '../kernel/observability.js';
import type { RetentionTask } from '../kernel/sql/retention.js';

/** Steps of one task's pass at most (a guard: 10,000 steps reach 5,000,000 readers at 500 a step). */
const MAX_STEPS = 10_000;

/** Runs the retention passes (see the module doc). */
export class RetentionSweeper {
  private readonly deletedTotal: Counter | null;
  private running: Promise<Record<string, number>> | null = null;

  constructor(
    private readonly tasks: readonly RetentionTask[],
    private readonly log: Logger,
    registry?: Registry,
  ) {
    this.deletedTotal = registry
      ? new Counter({
          name: 'freshet_retention_deleted_rows_total',
          help: 'Rows deleted by the retention sweeps, by table',
          labelNames: ['table'],
          registers: [registry],
        })
      : null;
  }

  /**
   * One pass of every task at `nowMs` (joins the pass already running, if any).
   * @returns rows deleted per table.
   * @throws FreshetError STORE_UNAVAILABLE when the database does not answer (the next pass resumes).
   */
  sweep(nowMs: number): Promise<Record<string, number>> {
    this.running ??= this.pass(nowMs).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * Sweeps every `everyMs` on `clock`'s time (an unref'd timer: it never keeps the process alive).
   * Failures are logged and retried at the next interval. `stop()` clears the timer and waits for a pass.
   */
  start(clock: Clock, everyMs: number): { stop(): Promise<void> } {
    const timer = setInterval(() => {
      if (this.running) return;
      this.sweep(clock.now()).catch((err: unknown) => this.log.warn({ err }, 'retention sweep failed'));
    }, everyMs);
    timer.unref();
    return {
      stop: async () => {
        clearInterval(timer);
        await this.running?.catch(() => undefined);
      },
    };
  }

  private async pass(nowMs: number): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const task of this.tasks) {
      let total = 0;
      let after: string | null = null;
      for (let i = 0; i < MAX_STEPS; i++) {
        const step = await task.step(after, nowMs);
        total += step.deleted;
        if (step.next === null) break;
        after = step.next;
      }
      deleted[task.table] = total;
      this.deletedTotal?.inc({ table: task.table }, total);
    }
    if (Object.values(deleted).some((n) => n > 0)) this.log.info({ deleted }, 'retention sweep');
    return deleted;
  }
}
