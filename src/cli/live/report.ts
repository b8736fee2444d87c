/**
 * What `freshet simulate live` counted while it ran, its progress line and its closing summary.
 */
import type { HotPage } from '../../client/index.js';
import type { LivePlan } from './plan.js';

/** Why a live run stopped. */
export type StopReason = 'duration' | 'done' | 'interrupted' | 'stalled' | 'refused';

/** What the hot ranking answered for the views sent (`POST /v1/views` verdicts). */
export interface ViewVerdicts {
  counted: number;
  repeat: number;
  budget: number;
  flagged: number;
  expired: number;
  unknown: number;
}

/** The counts of a live run (mutated as answers come in). */
export class LiveStats {
  /** Views sent in answered requests, by the server's verdict. */
  readonly views: ViewVerdicts = { counted: 0, repeat: 0, budget: 0, flagged: 0, expired: 0, unknown: 0 };
  /** Of those, the planned reloads. */
  reloads = 0;
  /** `reply` engagements written (`created`), and those the server already had (idempotent). */
  replies = 0;
  repliesExisting = 0;
  /** For-you pages read, and the items they held. */
  feeds = 0;
  feedItems = 0;
  /** Posts republished. */
  published = 0;
  /** Events whose request failed, by `<status>/<code>` or `network`/`timeout`. */
  readonly failed = new Map<string, number>();
  /** Requests the server refused over its rate limit (429), and the events in them (not resent). */
  rateLimited = 0;
  /** Events dropped because their post was deleted on the server. */
  retired = 0;
  /** Events the run did not send: the server answered slower than the rate (backlog over 1 s) or asked it to wait (429). */
  behind = 0;
  /** The last failure's words. */
  lastError = '';

  /** Views sent in answered requests. */
  get viewsSent(): number {
    const v = this.views;
    return v.counted + v.repeat + v.budget + v.flagged + v.expired + v.unknown;
  }

  /** Events answered (views, replies, feed pages). */
  get answered(): number {
    return this.viewsSent + this.replies + this.repliesExisting + this.feeds;
  }

  /** Events whose request failed. */
  get failures(): number {
    let n = 0;
    for (const c of this.failed.values()) n += c;
    return n;
  }

  /** Counts `n` failed events of kind `kind`. */
  fail(kind: string, n: number, words: string): void {
    this.failed.set(kind, (this.failed.get(kind) ?? 0) + n);
    this.lastError = words;
  }
}

/** The progress line's detail: `views 1200 (1176 counted) · replies 310 · feed pages 64 · posts 21/30 · 20.0/s`. */
export function progressDetail(s: LiveStats, plan: LivePlan, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? (s.answered * 1000) / elapsedMs : 0;
  const failed = s.failures > 0 ? ` · ${s.failures} failed (last: ${s.lastError})` : '';
  return (
    `views ${s.viewsSent} (${s.views.counted} counted) · replies ${s.replies} · feed pages ${s.feeds} · ` +
    `posts ${s.published}/${plan.posts.length} · ${rate.toFixed(1)}/s${failed}`
  );
}

/** Everything the summary prints. */
export interface LiveSummary {
  url: string;
  foundBy: string;
  stats: LiveStats;
  plan: LivePlan;
  tag: string;
  rate: number;
  durationMs: number;
  elapsedMs: number;
  reason: StopReason;
  /** The hot ranking at the end (`GET /v1/hot?range=…`), or why it could not be read. */
  hot: { range: string; page: HotPage } | { error: string };
}

const REASONS: Record<StopReason, string> = {
  duration: 'reached --duration',
  done: 'sent every planned event',
  interrupted: 'stopped by Ctrl-C',
  stalled: 'stopped: the server stopped answering',
  refused: 'stopped: the server refused the service key',
};

/** The closing summary (stdout): what was sent and what the server made of it, and where to look. */
export function formatLiveSummary(r: LiveSummary): string {
  const s = r.stats;
  const v = s.views;
  const secs = r.elapsedMs / 1000;
  const rows: Array<[string, string]> = [
    ['server', `${r.url} (found by ${r.foundBy})`],
    ['ran', `${fmtDuration(r.elapsedMs)} of ${fmtDuration(r.durationMs)} (${REASONS[r.reason]})`],
    ['events', `${s.answered} answered at ${(s.answered / Math.max(secs, 0.001)).toFixed(1)}/s (--rate ${r.rate})`],
    [
      'posts',
      `${s.published} of ${r.plan.posts.length} republished at wall time as live_${r.tag}_hn_<id> (tag "live")`,
    ],
    [
      'views',
      `${s.viewsSent} sent by ${r.plan.visitors} visitors live_v<n>: ${v.counted} counted, ${v.repeat} repeat ` +
        `(${s.reloads} planned reloads), ${v.budget} over budget, ${v.expired} expired, ${v.unknown} unknown`,
    ],
    [
      'replies',
      `${s.replies} reply engagements written${s.repliesExisting ? `, ${s.repliesExisting} already there` : ''}`,
    ],
    ['feed pages', `${s.feeds} for-you refreshes (${s.feedItems} items) by live_v0…live_v49`],
    [
      'scale',
      `${r.plan.scale.toFixed(3)} of the posts' ${r.plan.points} points and ${r.plan.comments} comments ` +
        `(${r.plan.events} events planned)`,
    ],
  ];
  if (s.failures > 0)
    rows.push(['failed', `${s.failures} events: ${[...s.failed].map(([k, n]) => `${k} ×${n}`).join(', ')}`]);
  if (s.rateLimited > 0)
    rows.push([
      'rate limited',
      `${s.rateLimited} requests answered 429: the server limits the service key (FRESHET_RATE_SERVICE); lower --rate or raise it`,
    ]);
  if (s.behind > 0)
    rows.push([
      'behind',
      `${s.behind} events not sent: the server answered slower than --rate, or asked to wait (429)`,
    ]);
  if (s.retired > 0) rows.push(['deleted', `${s.retired} events dropped: their post was deleted meanwhile`]);
  const lines = ['', 'simulate live', ...rows.map(([k, val]) => `  ${k.padEnd(13)}${val}`), '', ...hotLines(r)];
  lines.push('', `Watch it: ${r.url}/ui/#/hot (the explorer), or GET ${r.url}/v1/hot`);
  return lines.join('\n');
}

function hotLines(r: LiveSummary): string[] {
  if ('error' in r.hot) return [`hot ranking: could not be read (${r.hot.error})`];
  const { range, page } = r.hot;
  const at = new Date(page.computed_at_ms).toISOString().slice(0, 19).replace('T', ' ');
  const head = `hot ranking now (GET /v1/hot?range=${range}: a snapshot computed at ${at} UTC, recomputed every ${page.refresh_s} s)`;
  if (page.items.length === 0)
    return [head, '  (empty: the snapshot was computed before the first counted views; it shows them within a minute)'];
  return [
    head,
    '     #  pv     uv     score    title',
    ...page.items.map(
      (it, i) =>
        `  ${String(i + 1).padStart(4)}  ${String(it.pv).padEnd(6)} ${String(it.uv).padEnd(6)} ${it.score.toFixed(2).padEnd(8)} ${it.title.slice(0, 60)}`,
    ),
  ];
}

/** `4m05s`, `12s`, `1h02m`. */
export function fmtDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
