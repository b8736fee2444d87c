/**
 * A periodic background task of the maintenance process (retention sweeps): run once soon after start,
 * then every `everyMs`; a run never overlaps the previous one; a failure is logged and the next run
 * tries again. The timer does not keep the process alive.
 */
import type { Logger } from '../kernel/observability.js';

/**
 * Starts `run` every `everyMs` (wall clock). @returns the stop function (idempotent; a run in progress
 * finishes on its own).
 */
export function startSweep(name: string, everyMs: number, log: Logger, run: () => Promise<unknown>): () => void {
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    run()
      .then((done) => {
        if (typeof done === 'number' && done > 0) log.info({ sweep: name, removed: done }, 'retention sweep');
      })
      .catch((err: unknown) => log.warn({ err, sweep: name }, 'sweep failed; the next run tries again'))
      .finally(() => {
        running = false;
      });
  };
  const first = setTimeout(tick, Math.min(everyMs, 30_000));
  const timer = setInterval(tick, everyMs);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
