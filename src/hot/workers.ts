/**
 * The hot ranking's background workers, started by `freshet serve` (container `startWorkers`) and
 * stopped when the app closes: three interval timers on the injected clock's time —
 * - rescoring every `rescoreMs` (then trimming to the cap),
 * - checkpoint + archive every `checkpointMs` (the bound on what a loss can take),
 * - snapshot refresh every `cacheRefreshMs`, so `GET /v1/hot` requests never wait for one.
 * With `maintenance: false` only the snapshot refresh runs: under `freshet serve --workers N` every
 * worker keeps its own snapshot, but rescoring and archiving (store-wide work, safe but redundant in N
 * processes) run in one worker (src/cli/cluster.ts).
 * A tick that is still running when the next one is due is skipped, never stacked. Failures are logged
 * and retried at the next tick. `stop()` clears the timers and waits for running ticks.
 */
import type { Clock } from '../kernel/clock.js';
import type { Logger } from '../kernel/observability.js';
import type { HotMaintenance } from './maintenance.js';
import type { HotRanking } from './service.js';

/** Intervals of the workers, ms. */
export interface HotWorkerIntervals {
  rescoreMs: number;
  checkpointMs: number;
  cacheRefreshMs: number;
}

/** Running workers. */
export interface HotWorkers {
  /** Stops the timers and waits for the ticks in progress. */
  stop(): Promise<void>;
}

/** Starts the timers (unref'd: they never keep the process alive on their own). */
export function startHotWorkers(
  hot: HotRanking,
  maintenance: HotMaintenance,
  clock: Clock,
  every: HotWorkerIntervals,
  log: Logger,
  withMaintenance = true,
): HotWorkers {
  const running = new Set<Promise<unknown>>();
  const timers: NodeJS.Timeout[] = [];
  const schedule = (name: string, ms: number, task: () => Promise<unknown>) => {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const run = task()
        .catch((err: unknown) => log.warn({ err, worker: name }, 'hot worker tick failed'))
        .finally(() => {
          busy = false;
          running.delete(run);
        });
      running.add(run);
    }, ms);
    timer.unref();
    timers.push(timer);
  };
  if (withMaintenance) {
    schedule('rescore', every.rescoreMs, () => maintenance.rescore(clock.now()));
    schedule('checkpoint', every.checkpointMs, () => maintenance.archive(clock.now()));
  }
  schedule('hot-cache', every.cacheRefreshMs, () => hot.refresh(clock.now()));
  return {
    async stop() {
      for (const t of timers) clearInterval(t);
      await Promise.all([...running]);
    },
  };
}
