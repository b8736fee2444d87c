/**
 * `freshet simulate`: replays real reader sessions (MIND behaviors, see simulate-sessions.ts)
 * against a running Freshet HTTP service on virtual time, and checks the for-you feed's promise:
 * no item is served twice to a reader within 7 days, and every request succeeds.
 *
 * Steps:
 * 1. read and shift the sessions (`start`, default 2016-09-20T00:00:00Z), keep the first `sessions`;
 * 2. `GET /healthz` and an authenticated probe (fails fast when nothing answers or the service key is
 *    refused, naming where the key comes from);
 * 3. `PUT /v1/users/:id/interests` for the readers {@link interestsFor} gives terms (about half);
 * 4. read `freshet_seen_filter_dropped_total` from `GET /metrics`;
 * 5. replay: each session is one `refresh` then `loadMores` × `load_more`, `limit` items each, all
 *    through `freshet-engine/client` (retries off, so every failure counts) with the service key, `X-Freshet-Reader: <user_id>` and `X-Freshet-Now` = session virtual time
 *    + 1 s per request. Sessions start in time order, at most `concurrency` at once, and the
 *    sessions of one reader never overlap;
 * 6. read the counter again; print the report table (stdout) and return the report.
 * The caller sets the process exit code from `report.exitCode` (1 on duplicates or failed requests).
 */
import { FreshetClient, FreshetClientError } from '../../client/index.js';
import { Progress } from '../progress.js';
import { checkServer } from '../server.js';
import { SECOND_MS } from '../../kernel/clock.js';
import { formatReport, promMetricSum, SimulateStats, type FeedAction, type SimulateReport } from './simulate-report.js';
import {
  DEFAULT_START,
  interestsFor,
  notMindError,
  readMindSessions,
  shiftSessions,
  type VirtualSession,
} from './simulate-sessions.js';

export { DEFAULT_START } from './simulate-sessions.js';
export type { SimulateReport } from './simulate-report.js';

/** Options of {@link runSimulate}. */
export interface SimulateOptions {
  /** Base URL of the service, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** How the URL was found (src/cli/server.ts), for messages; default `--url`. */
  foundBy?: string;
  serviceKey: string;
  /** Where the service key comes from, for the message when the server refuses it. */
  keySource?: string;
  /** The MIND behaviors file (`.tsv` or `.tsv.gz`). */
  behaviorsPath: string;
  /** Replay only the first N sessions in time order (default all). */
  sessions?: number;
  /** Sessions in flight at once (default 8). */
  concurrency?: number;
  /** `load_more` requests after each session's `refresh` (default 4). */
  loadMores?: number;
  /** Items per page, 1..100 (default 20). */
  limit?: number;
  /** ISO 8601 virtual time the first session's UTC day is moved to (default 2016-09-20T00:00:00Z). */
  start?: string;
  /** Draw a progress bar (default: when stderr is a TTY; otherwise a progress line every 5 s). */
  progress?: boolean;
  /** Where the report table goes (default stdout). */
  out?: (text: string) => void;
  /** Per-request timeout, ms (default 30 000). */
  timeoutMs?: number;
}

const METRIC = 'freshet_seen_filter_dropped_total';

/** The MIND sessions of the behaviors file, shifted onto the virtual start, at most `opts.sessions`. */
async function readSessions(opts: SimulateOptions): Promise<VirtualSession[]> {
  const { sessions: all, invalid } = await readMindSessions(opts.behaviorsPath);
  if (all.length === 0) throw notMindError(opts.behaviorsPath, invalid);
  if (invalid.length > 0)
    process.stderr.write(
      `simulate: ${invalid.length} invalid behaviors lines skipped (first: line ${invalid[0]!.line}: ${invalid[0]!.reason})\n`,
    );
  const sessions = shiftSessions(all, opts.start ?? DEFAULT_START).slice(0, opts.sessions ?? all.length);
  if (sessions.length === 0) throw new Error(`no sessions in ${opts.behaviorsPath}`);
  return sessions;
}

/** Plays one session: a refresh, then `loadMores` load_more a virtual second apart, each page counted. */
function sessionPlayer(
  client: FreshetClient,
  stats: SimulateStats,
  progress: Progress,
  limit: number,
  loadMores: number,
): (s: VirtualSession) => Promise<void> {
  return async (s) => {
    const actions: FeedAction[] = ['refresh', ...Array<FeedAction>(loadMores).fill('load_more')];
    for (const [i, action] of actions.entries()) {
      const nowMs = s.virtualMs + i * SECOND_MS;
      const call = { limit, reader: s.userId, now: nowMs };
      stats.requests++;
      const t0 = performance.now();
      try {
        const page = await (action === 'refresh' ? client.forYou.refresh(call) : client.forYou.loadMore(call));
        stats.page(
          action,
          s.userId,
          page.items.map((i) => i.id),
          nowMs,
          performance.now() - t0,
          page.refreshed,
        );
      } catch (err) {
        stats.error(errorKind(err));
      }
    }
    stats.sessions++;
    progress.increment(1, `${stats.requests} requests`);
  };
}

/**
 * Runs the simulation and prints the report.
 * @throws Error when the behaviors file cannot be read, an option is out of range, or the service
 *   does not answer `/healthz`. Failed feed requests do not throw: they are counted in the report.
 */
export async function runSimulate(opts: SimulateOptions): Promise<SimulateReport> {
  const limit = opts.limit ?? 20;
  const concurrency = opts.concurrency ?? 8;
  const loadMores = opts.loadMores ?? 4;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new Error('limit must be an integer in 1..100');
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('concurrency must be a positive integer');
  if (!Number.isInteger(loadMores) || loadMores < 0) throw new Error('loadMores must be an integer ≥ 0');
  const base = opts.url.replace(/\/+$/, '');
  const timeoutMs = opts.timeoutMs ?? 30_000;
  // retries off: every failed request is counted in the report
  const client = new FreshetClient({ baseUrl: base, serviceKey: opts.serviceKey, timeoutMs, retry: { attempts: 1 } });
  const out = opts.out ?? ((text: string) => process.stdout.write(`${text}\n`));

  const sessions = await readSessions(opts);

  await checkServer(
    { url: base, foundBy: opts.foundBy ?? '--url' },
    opts.serviceKey,
    opts.keySource ?? "FRESHET_SERVICE_KEY or the data folder's secrets.json",
    timeoutMs,
  );
  process.stderr.write(
    `simulate: ${sessions.length} sessions against ${base} (found by ${opts.foundBy ?? '--url'}); writes interests and impressions of their readers there\n`,
  );

  const stats = new SimulateStats(limit);
  const firstMs = sessions[0]!.virtualMs;
  const readers = [...new Set(sessions.map((s) => s.userId))];
  const withInterests = readers.filter((r) => interestsFor(r).length > 0);
  await pool(withInterests, concurrency, async (reader) => {
    stats.interestRequests++;
    await client.users.setInterests(reader, interestsFor(reader)).catch((err: unknown) => stats.error(errorKind(err)));
  });

  const before = await readMetric(client);
  const progress = new Progress({ label: 'simulate', total: sessions.length, counts: true, tty: opts.progress });
  const started = performance.now();

  const playSession = sessionPlayer(client, stats, progress, limit, loadMores);
  try {
    await replayByReader(sessions, concurrency, playSession);
  } finally {
    progress.stop();
  }
  const wallMs = performance.now() - started;

  const after = await readMetric(client);
  const report = stats.report({
    readersWithInterests: withInterests.length,
    seenFilterDropped: before === null || after === null ? null : after - before,
    virtualFrom: firstMs,
    virtualTo: sessions.at(-1)!.virtualMs + loadMores * SECOND_MS,
    wallMs,
  });
  out(formatReport(report));
  return report;
}

/**
 * The report's name of a failed request: `<HTTP status>/<envelope code>` for an error answer,
 * `<status>/not-json` for an answer that is not an envelope, else `network`, `timeout` or `aborted`.
 */
function errorKind(err: unknown): string {
  if (!(err instanceof FreshetClientError)) return 'network';
  if (err.kind === 'http') return `${err.status}/${err.code}`;
  return err.kind === 'bad-response' ? `${err.status}/not-json` : err.kind;
}

/** The sum of the seen-filter counter on `/metrics`, or null when the metric (or `/metrics`) is absent. */
async function readMetric(client: FreshetClient): Promise<number | null> {
  try {
    return promMetricSum(await client.metrics(), METRIC);
  } catch {
    return null;
  }
}

/** Runs `fn` over `items` with at most `concurrency` calls in flight. */
async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * Starts sessions in the given (time) order with at most `concurrency` in flight, never two of one
 * reader at once: a session whose reader is busy waits for that reader's previous session (holding
 * its slot, so later sessions do not overtake it by more than `concurrency`).
 */
export async function replayByReader(
  sessions: readonly VirtualSession[],
  concurrency: number,
  play: (s: VirtualSession) => Promise<void>,
): Promise<void> {
  const tails = new Map<string, Promise<void>>(); // reader → its last started session
  await pool(sessions, concurrency, async (s) => {
    const run = (tails.get(s.userId) ?? Promise.resolve()).then(() => play(s));
    tails.set(s.userId, run);
    try {
      await run;
    } finally {
      if (tails.get(s.userId) === run) tails.delete(s.userId);
    }
  });
}
