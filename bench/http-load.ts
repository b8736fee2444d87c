/**
 * A closed-loop HTTP load generator for bench/feed.ts, run in a child process so that the client's
 * own work (building requests, parsing responses) does not share the server's event loop — as
 * with a real client.
 *
 * A plan is a pool of sessions; each session is one client (its own headers, e.g. a reader token)
 * sending the same request `times` times, one after the other. `concurrency` workers, each on a
 * keep-alive connection, take sessions from the pool and send requests back to back (a closed
 * loop) until `iterations` requests in all or `seconds` have passed, or the pool is empty. Each
 * worker first sends `warmup` unmeasured `GET /healthz` (opens its connection, warms the JIT).
 *
 * The parent calls {@link runLoad}; the child answers with the latency summary, the count of each
 * HTTP status, and how many responses carried `x-freshet-refreshed` (a `load_more` that found no
 * cache and refreshed).
 */
import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { STOP, closedLoop, type Summary } from './stats.js';
import { isEntry } from './support.js';

/** One HTTP request (JSON body when present). */
export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
}

/** One client: its headers and the request it repeats `times` times. */
export interface LoadSession {
  headers: Record<string, string>;
  request: LoadRequest;
  times: number;
}

/** What to run. `iterations` is capped at the requests the sessions hold. */
export interface LoadPlan {
  url: string;
  concurrency: number;
  iterations: number;
  seconds: number;
  warmup: number;
  sessions: LoadSession[];
}

/** What the child measured. */
export interface LoadResult {
  summary: Summary;
  /** HTTP status → responses. */
  statuses: Record<string, number>;
  /** Responses with `x-freshet-refreshed: 1`. */
  refreshed: number;
}

/** Runs `plan` in a fresh child process and resolves with its result. */
export function runLoad(plan: LoadPlan): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [], { execArgv: process.execArgv, stdio: 'inherit' });
    child.once('message', (result) => resolve(result as LoadResult));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`http-load child exited with ${code}`));
    });
    child.send(plan);
  });
}

/** Sends one request on `agent`; resolves with the status and whether it was a silent refresh. */
function send(
  agent: Agent,
  url: URL,
  headers: Record<string, string>,
  req: LoadRequest,
): Promise<{ status: number; refreshed: boolean }> {
  const body = req.body === undefined ? undefined : JSON.stringify(req.body);
  return new Promise((resolve, reject) => {
    const r = request(
      url.origin + req.path,
      {
        method: req.method,
        agent,
        headers:
          body === undefined
            ? headers
            : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, refreshed: res.headers['x-freshet-refreshed'] === '1' }),
        );
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}

/** A worker's place in the session pool: sessions are handed out in order, one at a time. */
function sessionCursor(sessions: readonly LoadSession[]) {
  let next = 0;
  return (current: { session?: LoadSession; left: number }) => {
    if (current.left === 0) {
      current.session = sessions[next++];
      current.left = current.session?.times ?? 0;
    }
    current.left--;
    return current.session;
  };
}

/** Runs a plan in this process. */
async function execute(plan: LoadPlan): Promise<LoadResult> {
  const url = new URL(plan.url);
  const agent = new Agent({ keepAlive: true, maxSockets: plan.concurrency });
  const statuses: Record<string, number> = {};
  let refreshed = 0;
  const take = sessionCursor(plan.sessions);
  const workers = Array.from({ length: plan.concurrency }, () => ({
    session: undefined as LoadSession | undefined,
    left: 0,
  }));
  const total = plan.sessions.reduce((n, s) => n + s.times, 0);
  const summary = await closedLoop(
    async (w, i) => {
      if (i < 0) return send(agent, url, {}, { method: 'GET', path: '/healthz' });
      const session = take(workers[w]!);
      if (!session) return STOP;
      const r = await send(agent, url, session.headers, session.request);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.refreshed) refreshed++;
    },
    {
      concurrency: plan.concurrency,
      iterations: Math.min(plan.iterations, total),
      seconds: plan.seconds,
      warmup: plan.warmup,
    },
  );
  agent.destroy();
  return { summary, statuses, refreshed };
}

if (isEntry(import.meta.url) && process.send) {
  process.once('message', (plan) => {
    execute(plan as LoadPlan).then(
      (result) => process.send!(result, () => process.exit(0)),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}
