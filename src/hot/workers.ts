/**
 * The hot ranking's background workers, started by `freshet serve` (container `startWorkers`) and
 * stopped when the app closes: three interval timers on the injected clock's time —
 * - rescoring every `rescoreMs` (then trimming to the cap),
 * - checkpoint + archive every `checkpointMs` (the bound on what a loss can take),
 * - snapshot refresh every `cacheRefreshMs`, so `GET /v1/hot` requests never wait for one.
 * With `maintenance: false` only the snapshot refresh runs: under `freshet serve --workers N` every
 * worker keeps its own snapshot, but rescoring and archiving (store-wide work, safe but redundant in N
 * processes) run in one worker (src/cli/cluster.ts).
 * The timers are src/kernel/interval-tasks.ts's: a tick still running when the next is due is skipped,
 * a failure logged and retried at the next tick; `stop()` clears them and waits for running ticks.
 */
import type { Clock } from '../kernel/clock.js';
import type { Logger } from '../kernel/observability.js';
import { IntervalTasks } from '../kernel/interval-tasks.js';
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
  const tasks = new IntervalTasks(log, 'hot worker');
  if (withMaintenance) {
    tasks.every('rescore', every.rescoreMs, () => maintenance.rescore(clock.now()));
    tasks.every('checkpoint', every.checkpointMs, () => maintenance.archive(clock.now()));
  }
  tasks.every('hot-cache', every.cacheRefreshMs, () => hot.refresh(clock.now()));
  return { stop: () => tasks.stop() };
}
