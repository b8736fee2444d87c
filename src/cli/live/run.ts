/**
 * `freshet simulate live`: sends the live plan (plan.ts) to a running server at wall time, rate-limited,
 * through `freshet-engine/client` with the service key — `POST /v1/items` for the republished posts,
 * `POST /v1/views` (one batch per post and tick), `POST /v1/engagements` (`reply`, as the visitor) and
 * `POST /v1/feeds/for-you` (`refresh` of 10, as a regular reader) — then prints a summary and the hot
 * ranking. The caller finds the server and checks its key first (src/cli/server.ts).
 *
 * Pacing: a token bucket filled at `rate` events/s and holding at most one second of events, drained
 * every {@link TICK_MS}; at most `maxInflight` requests in flight. A server slower than the rate lets
 * the bucket overflow, and a 429 pauses sending for its `Retry-After` (a second when it names none): those events are not sent later in a burst
 * but counted as `behind`. Stops at
 * `durationMs`, when the plan is spent, on `signal` (Ctrl-C; the requests in flight are awaited), or on
 * a failure that would only repeat: the key refused (401), or no answer at all for `stallMs` while
 * requests fail (a stopped or stalled server). The events of a request answered 429 (the service key's
 * rate limit, `FRESHET_RATE_SERVICE`) are counted as failed, not resent.
 */
import { FreshetClient, FreshetClientError } from '../../client/index.js';
import type { ViewInput } from '../../client/index.js';
import { type Clock, SECOND_MS, systemClock } from '../../kernel/clock.js';
import { Progress } from '../progress.js';
import { keyMismatchMessage } from '../server.js';
import { LivePlan, liveItem, liveRunTag, type LiveEvent, type PlannedPost } from './plan.js';
import type { LivePost } from './posts.js';
import { formatLiveSummary, LiveStats, progressDetail, type LiveSummary, type StopReason } from './report.js';
import { itemToRequestJson } from '../import.js';

/** Between two drains of the token bucket, ms. */
export const TICK_MS = 200;

/** Options of {@link runLive}. */
export interface LiveOptions {
  /** Base URL of the server and how it was found (for messages). */
  url: string;
  foundBy: string;
  serviceKey: string;
  /** Where the key comes from, for the message when the server refuses it. */
  keySource: string;
  /** The posts to replay (posts.ts). */
  posts: readonly LivePost[];
  /** Events per second (> 0). */
  rate: number;
  /** Longest run, ms (> 0). */
  durationMs: number;
  /** PRNG seed of the plan (default 1). */
  seed?: number;
  /** Wall clock (default the system's) and how to wait (default `setTimeout`); tests pass a manual pair. */
  clock?: Clock;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Stops the run (Ctrl-C). */
  signal?: AbortSignal;
  /** The client's fetch (tests: through Fastify's inject). */
  fetch?: typeof fetch;
  /** Per-request timeout, ms (default 10 000). */
  timeoutMs?: number;
  /** No successful answer for this long while requests fail stops the run, ms (default 15 000). */
  stallMs?: number;
  /** Requests in flight at most (default 64). */
  maxInflight?: number;
  /** Draw a progress bar (default: stderr is a terminal; otherwise a line every 5 s). */
  progress?: boolean;
  /** Where the summary goes (default stdout). */
  out?: (text: string) => void;
}

/** What {@link runLive} returns: the summary, and the one-line failure when it stopped on one. */
export interface LiveReport {
  summary: LiveSummary;
  /** Set when the run stopped on a failure (exit 1): what happened — what to do. */
  failure: string | null;
}

/** Waits `ms`, or less when `signal` aborts. */
export function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs the live replay and prints its summary.
 * @throws RangeError for a non-positive rate or duration or no posts. Failed requests do not throw: they
 *   are counted, and a run stopped by them returns `failure`.
 */
export async function runLive(opts: LiveOptions): Promise<LiveReport> {
  const clock = opts.clock ?? systemClock;
  const sleep = opts.sleep ?? sleepUnlessAborted;
  const start = clock.now();
  const tag = liveRunTag(start);
  const plan = new LivePlan(opts.posts, { rate: opts.rate, durationMs: opts.durationMs, seed: opts.seed ?? 1, tag });
  const client = new FreshetClient({
    baseUrl: opts.url,
    serviceKey: opts.serviceKey,
    timeoutMs: opts.timeoutMs ?? 10_000,
    retry: { attempts: 1 }, // every failure is counted; nothing is sent twice
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const stats = new LiveStats();
  const sender = new Sender(client, plan, stats, clock, opts);
  const progress = new Progress({ label: 'simulate live', total: plan.events, counts: true, tty: opts.progress });
  process.stderr.write(
    `simulate live: ${plan.posts.length} posts, ${plan.events} events at ${opts.rate}/s for up to ${Math.round(opts.durationMs / SECOND_MS)} s against ${opts.url} (found by ${opts.foundBy}); republishes the posts as live_${tag}_hn_<id> there\n`,
  );
  let reason: StopReason;
  try {
    reason = await pace(plan, sender, stats, progress, { ...opts, clock, sleep, start });
    await sender.drain();
  } finally {
    progress.stop();
  }
  if (sender.refused) reason = 'refused';
  const elapsedMs = clock.now() - start;
  const hot = await client.hot
    .top({ range: '72h', limit: 10 })
    .then((page) => ({ range: '72h', page }))
    .catch((err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }));
  const summary: LiveSummary = {
    url: opts.url,
    foundBy: opts.foundBy,
    stats,
    plan,
    tag,
    rate: opts.rate,
    durationMs: opts.durationMs,
    elapsedMs,
    reason,
    hot,
  };
  (opts.out ?? ((t: string) => process.stdout.write(`${t}\n`)))(formatLiveSummary(summary));
  return { summary, failure: failureOf(reason, sender, opts) };
}

function failureOf(reason: StopReason, sender: Sender, opts: LiveOptions): string | null {
  if (reason === 'refused') return sender.refused;
  if (reason === 'stalled')
    return `simulate live stopped: the server at ${opts.url} has not answered for ${Math.round((opts.stallMs ?? 15_000) / 1000)} s (last: ${sender.stats.lastError}) — check it (GET /readyz) and run the command again`;
  return null;
}

/** The pacing loop (see the module doc); returns why it stopped. */
async function pace(
  plan: LivePlan,
  sender: Sender,
  stats: LiveStats,
  progress: Progress,
  o: LiveOptions & { clock: Clock; sleep: NonNullable<LiveOptions['sleep']>; start: number },
): Promise<StopReason> {
  const cap = Math.max(1, o.rate); // one second of events
  let tokens = (o.rate * TICK_MS) / SECOND_MS;
  let last = o.start;
  for (;;) {
    const now = o.clock.now();
    const elapsed = now - o.start;
    if (o.signal?.aborted) return 'interrupted';
    if (sender.refused) return 'refused';
    if (sender.stalled(now)) return 'stalled';
    if (elapsed >= o.durationMs) return 'duration';
    if (plan.done) return 'done';
    tokens += (o.rate * (now - last)) / SECOND_MS;
    last = now;
    if (tokens > cap) {
      stats.behind += Math.floor(tokens - cap);
      tokens = cap;
    }
    const due = Math.floor(tokens);
    if (now < sender.pausedUntil) stats.behind += due; // the server asked to wait (429): not sent later in a burst
    tokens -= now < sender.pausedUntil ? due : await sender.tick(due, elapsed / o.durationMs);
    progress.update(stats.answered, progressDetail(stats, plan, elapsed));
    await o.sleep(TICK_MS, o.signal);
  }
}

/** Sends events and books their answers. */
class Sender {
  pausedUntil = 0;
  /** The message when the server refused the service key. */
  refused: string | null = null;
  private readonly inflight = new Set<Promise<void>>();
  private lastOkAt: number;
  private lastFailAt = -Infinity;

  constructor(
    private readonly client: FreshetClient,
    private readonly plan: LivePlan,
    readonly stats: LiveStats,
    private readonly clock: Clock,
    private readonly opts: LiveOptions,
  ) {
    this.lastOkAt = clock.now();
  }

  /** Nothing answered for `stallMs` while requests failed. */
  stalled(now: number): boolean {
    return this.lastFailAt > this.lastOkAt && now - this.lastOkAt >= (this.opts.stallMs ?? 15_000);
  }

  /**
   * Takes up to `budget` events from the plan at `fraction` of the run (publishing what falls due on the
   * way) and sends them; returns how many events it took.
   */
  async tick(budget: number, fraction: number): Promise<number> {
    const room = (this.opts.maxInflight ?? 64) - this.inflight.size;
    const events: Exclude<LiveEvent, { kind: 'publish' }>[] = [];
    while (events.length < budget && events.length < room) {
      const ev = this.plan.next(fraction);
      if (ev === null) break;
      if (ev.kind !== 'publish') events.push(ev);
      else if (!(await this.publish(ev.posts))) break;
    }
    const views = new Map<PlannedPost, Extract<LiveEvent, { kind: 'view' }>[]>();
    for (const ev of events) {
      if (ev.kind === 'view') views.set(ev.post, [...(views.get(ev.post) ?? []), ev]);
      else if (ev.kind === 'reply') this.track(this.reply(ev.post, ev.visitor));
      else this.track(this.feed(ev.reader));
    }
    for (const [post, batch] of views) this.track(this.views(post, batch));
    return events.length;
  }

  /** Waits for the requests in flight (each bounded by the request timeout). */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
  }

  /** Publishes `posts` at the wall clock; false when it failed (tried again next tick, or the posts retired). */
  private async publish(posts: PlannedPost[]): Promise<boolean> {
    const at = this.clock.now();
    try {
      await this.client.items.publish(posts.map((p) => itemToRequestJson(liveItem(p, at))));
      this.ok();
      this.stats.published += posts.length;
      return true;
    } catch (err) {
      const e = this.failure(err);
      if (e.status >= 400 && e.status < 500 && e.status !== 401 && e.status !== 429)
        for (const p of posts) this.stats.retired += this.plan.retire(p); // refused for good: its events go
      else this.plan.unpublish(posts);
      return false;
    }
  }

  private async views(post: PlannedPost, batch: Extract<LiveEvent, { kind: 'view' }>[]): Promise<void> {
    const body: ViewInput[] = batch.map((v) => ({ item_id: post.id, visitor_id: v.visitor }));
    try {
      const { summary } = await this.client.views.recordBatch(body);
      this.ok();
      for (const k of Object.keys(this.stats.views) as (keyof typeof summary)[]) this.stats.views[k] += summary[k];
      this.stats.reloads += batch.filter((v) => v.reload).length;
    } catch (err) {
      this.failed(err, batch.length, post);
    }
  }

  private async reply(post: PlannedPost, visitor: string): Promise<void> {
    try {
      const r = await this.client.engagements.record({ item_id: post.id, kind: 'reply' }, { reader: visitor });
      this.ok();
      if (r.created) this.stats.replies++;
      else this.stats.repliesExisting++;
    } catch (err) {
      this.failed(err, 1, post);
    }
  }

  private async feed(reader: string): Promise<void> {
    try {
      const page = await this.client.forYou.refresh({ limit: 10, reader });
      this.ok();
      this.stats.feeds++;
      this.stats.feedItems += page.items.length;
    } catch (err) {
      this.failed(err, 1);
    }
  }

  private track(p: Promise<void>): void {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  private ok(): void {
    this.lastOkAt = this.clock.now();
  }

  /** Books a failed request of `n` events (on `post`, for views and replies). */
  private failed(err: unknown, n: number, post?: PlannedPost): void {
    const e = this.failure(err);
    this.stats.fail(e.kind, n, e.words);
    if (e.status === 404 && post) this.stats.retired += this.plan.retire(post); // deleted meanwhile
  }

  /** Classifies a failure, and acts on the ones that change the run: 401 stops it, 429 pauses it. */
  private failure(err: unknown): { kind: string; status: number; words: string } {
    this.lastFailAt = this.clock.now();
    if (!(err instanceof FreshetClientError)) throw err;
    if (err.status === 401) this.refused ??= keyMismatchMessage(this.opts.url, this.opts.keySource);
    if (err.status === 429) {
      this.stats.rateLimited++;
      // as long as the server asked (Retry-After), a second when it named no time
      this.pausedUntil = this.clock.now() + (err.retryAfterMs ?? SECOND_MS);
    }
    const kind =
      err.kind === 'http'
        ? `${err.status}/${err.code}`
        : err.kind === 'bad-response'
          ? `${err.status}/not-json`
          : err.kind;
    return {
      kind,
      status: err.status,
      words: err.kind === 'http' ? `${err.status} ${err.msg}` : `${err.kind}: ${err.msg}`,
    };
  }
}
