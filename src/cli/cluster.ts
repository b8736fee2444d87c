/**
 * The primary of `freshet serve --workers N` (PostgreSQL + Redis deployments): N worker processes
 * (node:cluster) run the whole app and share the listening port — the primary accepts connections and
 * hands them to the workers in turn (cluster's round-robin, the default on Linux) and serves nothing
 * itself. The workers are stateless: every piece of state lives in PostgreSQL and Redis, so any worker
 * answers any request (a worker's in-process caches — hot snapshot, past seen days, verified tokens —
 * are its own copies of store data).
 *
 * - **Which worker runs what.** Every worker runs what is per process: the HTTP app, the hot snapshot
 *   refresh, the seen-filter checkpoints of its own journal takes (leased: src/seen/seen-checkpointer.ts),
 *   final checkpoints on close. Worker 1 also runs the store-wide jobs: hot rescoring and archiving
 *   (safe in several processes, but redundant) and the fan-out worker with its crash sweep (BullMQ jobs
 *   by id; unless `FRESHET_SERVE_FANOUT=off`). A replacement of worker 1 takes them over.
 * - **A worker that dies** (crash, kill, out of memory) is replaced at once under the same number;
 *   after {@link MAX_QUICK_DEATHS} deaths within {@link QUICK_DEATH_MS} of their start in a row a
 *   worker's replacement waits {@link RESPAWN_BACKOFF_MS} (a broken deployment does not spin).
 * - **SIGTERM / SIGINT**: every worker closes gracefully (its own close-with-grace: stops accepting,
 *   finishes requests, checkpoints, closes the stores, within the grace `FRESHET_SHUTDOWN_GRACE_S`); the
 *   primary exits 0 once all have exited cleanly, 1 when one failed or they took over the grace + 5 s
 *   (then they are killed).
 * - **SIGHUP**: a rolling restart — one worker at a time is replaced by a new one that listens before
 *   the old one closes, so the port never stops answering (e.g. after a configuration change).
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';

/** How much longer than the grace the primary waits for its workers before it kills them (ms). */
export const PRIMARY_EXTRA_GRACE_MS = 5_000;
/** A worker that dies this soon after its start counts as a quick death (ms). */
export const QUICK_DEATH_MS = 5_000;
/** Quick deaths in a row before a replacement is delayed. */
export const MAX_QUICK_DEATHS = 3;
/** The delay of a replacement after {@link MAX_QUICK_DEATHS} quick deaths in a row (ms). */
export const RESPAWN_BACKOFF_MS = 5_000;
/** Environment variable the primary sets to tell a worker its number (1..N); internal, not a setting. */
export const WORKER_ENV = 'FRESHET_WORKER_NUMBER';

/** The number of this process when it is a `serve --workers` worker (1..N); null otherwise. */
export function workerNumber(env: NodeJS.ProcessEnv = process.env): number | null {
  if (!cluster.isWorker) return null;
  const n = Number(env[WORKER_ENV]);
  return Number.isInteger(n) && n > 0 ? n : null;
}

/** One worker slot: the number it keeps across replacements. */
interface Slot {
  n: number;
  worker: Worker;
  startedAt: number;
  quickDeaths: number;
  /** Whether it has listened: a worker stopped before that served nothing, however it ended. */
  listened: boolean;
}

/**
 * Runs the primary: forks `workers` workers, logs `freshet workers listening` once all of them listen,
 * replaces dead ones, and handles the signals of the module doc. Resolves once every worker listens.
 * @param host the configured HOST, for the URL logged (its port is the one the workers listen on).
 * @param graceMs a worker's shutdown grace (`FRESHET_SHUTDOWN_GRACE_S`, ms); the primary waits
 *   {@link PRIMARY_EXTRA_GRACE_MS} more.
 * @throws Error when a worker exits before it listens (the others are stopped first).
 */
export async function runPrimary(workers: number, host: string, log: Logger, graceMs: number): Promise<void> {
  const primary = new Primary(log, graceMs);
  primary.handleSignals();
  const port = await primary.startAll(workers);
  const h = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  const url = `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
  log.info({ url, explorer: `${url}/ui/`, docs: `${url}/docs`, workers }, 'freshet workers listening');
}

/** The primary's state and its steps: fork, replace, start all, stop all, rolling restart. */
class Primary {
  private readonly slots = new Map<number, Slot>();
  private stopping = false;
  private restarting = false;

  constructor(
    private readonly log: Logger,
    private readonly graceMs: number,
  ) {}

  /** SIGTERM / SIGINT stop every worker; SIGHUP restarts them one at a time. */
  handleSignals(): void {
    process.on('SIGTERM', () => void this.stopAll('SIGTERM'));
    process.on('SIGINT', () => void this.stopAll('SIGINT'));
    process.on('SIGHUP', () => void this.rollingRestart());
  }

  /**
   * Forks workers 1..n and waits until each listens. @returns the port they share (never settles when
   *   a SIGTERM/SIGINT arrives first: {@link stopAll} then exits the process).
   * @throws Error when one exits first (every worker is then stopped, none replaced).
   */
  async startAll(n: number): Promise<number> {
    const first = Array.from({ length: n }, (_, i) => this.fork(i + 1));
    try {
      const ports = await Promise.all(first.map(listening));
      return ports[0]!;
    } catch (err) {
      // a signal during the start: the workers stop before they listen, and stopAll exits the process
      if (this.stopping) return new Promise<number>(() => undefined);
      this.stopping = true; // no replacement: a worker that cannot start is a configuration or store problem
      for (const s of this.slots.values()) s.worker.process.kill('SIGTERM');
      throw err;
    }
  }

  /** Starts worker `n` (a first start or a replacement) in its slot. */
  private fork(n: number, quickDeaths = 0): Slot {
    const worker = cluster.fork({ [WORKER_ENV]: String(n) });
    const slot: Slot = { n, worker, startedAt: Date.now(), quickDeaths, listened: false };
    worker.once('listening', () => (slot.listened = true));
    this.slots.set(n, slot);
    this.log.info({ worker: n, workerPid: worker.process.pid }, 'worker started');
    worker.once('exit', (code, signal) => this.onExit(slot, code, signal));
    return slot;
  }

  /** A worker exited: logged when stopping or replaced already, else replaced (after a back-off when it keeps dying). */
  private onExit(slot: Slot, code: number | null, signal: string | null): void {
    const replaced = this.slots.get(slot.n) !== slot; // a rolling restart already put a new worker in its place
    const who = { worker: slot.n, workerPid: slot.worker.process.pid, code, signal };
    if (this.stopping || replaced) return void this.log.info(who, 'worker exited');
    const quick = Date.now() - slot.startedAt < QUICK_DEATH_MS ? slot.quickDeaths + 1 : 0;
    const delay = quick >= MAX_QUICK_DEATHS ? RESPAWN_BACKOFF_MS : 0;
    this.log.error({ ...who, respawnInMs: delay }, 'worker died; replacing it');
    const timer = setTimeout(() => {
      if (!this.stopping) this.fork(slot.n, quick);
    }, delay);
    timer.unref();
  }

  /** SIGTERM to every live worker; exits 0 when all exit cleanly, 1 when one fails or they outlast the grace. */
  private async stopAll(signal: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.log.info({ signal, workers: this.slots.size }, 'shutting down the workers');
    const live = [...this.slots.values()].filter((s) => !s.worker.isDead());
    // A worker still loading when the SIGTERM comes has no handler yet and ends by the signal: it served
    // nothing and held nothing, so that is a clean stop too.
    const exits = live.map(
      (s) =>
        new Promise<boolean>((resolve) =>
          s.worker.once('exit', (code, sig) => resolve(code === 0 || (!s.listened && sig === 'SIGTERM'))),
        ),
    );
    for (const s of live) s.worker.process.kill('SIGTERM');
    const timeout = new Promise<'timeout'>((resolve) =>
      setTimeout(() => resolve('timeout'), this.graceMs + PRIMARY_EXTRA_GRACE_MS).unref(),
    );
    const result = await Promise.race([Promise.all(exits), timeout]);
    if (result === 'timeout') {
      this.log.error('workers did not exit in time; killing them');
      for (const s of live) s.worker.process.kill('SIGKILL');
      process.exit(1);
    }
    const failed = result.filter((clean) => !clean).length;
    if (failed > 0) this.log.error({ failed }, 'a worker did not shut down cleanly');
    process.exit(failed > 0 ? 1 : 0);
  }

  /** Replaces the workers one at a time; each new one listens before the old one stops accepting. */
  private async rollingRestart(): Promise<void> {
    if (this.restarting || this.stopping) return;
    this.restarting = true;
    this.log.info({ workers: this.slots.size }, 'rolling restart');
    try {
      for (const n of [...this.slots.keys()].sort((a, b) => a - b)) {
        if (this.stopping) break;
        const old = this.slots.get(n)!;
        await listening(this.fork(n));
        old.worker.process.kill('SIGTERM');
      }
      this.log.info('rolling restart done');
    } catch (err) {
      this.log.error({ err }, 'rolling restart stopped: a new worker did not start');
    } finally {
      this.restarting = false;
    }
  }
}

/** Resolves with the port once the slot's worker listens; rejects when it exits first. */
function listening(slot: Slot): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    slot.worker.once('listening', (address) => resolve(address.port));
    slot.worker.once('exit', (code) => reject(new Error(`worker ${slot.n} exited with ${code} before listening`)));
  });
}
