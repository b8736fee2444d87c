/**
 * What `freshet simulate` measures, and its report: duplicates served to a reader within 7 days
 * (virtual time), page fill, fallbacks, non-2xx answers, client-side latency per action, and the
 * seen filter's drops read from the Prometheus counter `freshet_seen_filter_dropped_total`.
 */
import { DAY_MS } from '../../kernel/clock.js';

/** The two for-you actions. */
export type FeedAction = 'refresh' | 'load_more';

/** How full the pages of one action were. */
export interface PageStats {
  pages: number;
  /** Pages with no item. */
  empty: number;
  /** Pages with 1..limit-1 items. */
  short: number;
  /** Pages with `limit` items. */
  full: number;
  /** Mean items per page (0 when no page). */
  meanItems: number;
}

/** Latency of one action, client-measured, ms rounded to 0.1. */
export interface LatencyStats {
  n: number;
  p50: number;
  p99: number;
}

/** A repeat served within the window: what, to whom, and how long (virtual ms) after last time. */
export interface Duplicate {
  readerId: string;
  itemId: string;
  gapMs: number;
}

/** The result of a simulation. */
export interface SimulateReport {
  sessions: number;
  /** Feed requests (refresh + load_more). */
  requests: number;
  /** `PUT /v1/users/:id/interests` requests. */
  interestRequests: number;
  itemsServed: number;
  distinctReaders: number;
  readersWithInterests: number;
  /** Items served again to the same reader within 7 virtual days of the previous serving (must be 0). */
  duplicates: number;
  /** The first duplicates (up to 10), for diagnosis. */
  duplicateExamples: Duplicate[];
  pages: Record<FeedAction, PageStats>;
  /** load_more answers with `X-Freshet-Refreshed: 1` (silent fall back to a refresh). */
  fallbacks: number;
  /** Non-2xx answers (and 2xx answers whose envelope code is not 0, as `200/code`) by status;
   * `network` counts requests that got no answer. Must be empty. */
  errors: Record<string, number>;
  latencyMs: Record<FeedAction, LatencyStats>;
  /** Delta of `freshet_seen_filter_dropped_total` over the run; null when the server has no such metric. */
  seenFilterDropped: number | null;
  /** Virtual time span of the sessions replayed, ISO 8601. */
  virtualFrom: string;
  virtualTo: string;
  /** Wall-clock duration of the replay, ms. */
  wallMs: number;
  /** 0 when duplicates = 0 and no error answers, 1 otherwise. */
  exitCode: number;
}

/** The window within which a repeat counts as a duplicate (ms). */
export const DUPLICATE_WINDOW_MS = 7 * DAY_MS;

/** Nearest-rank percentile (p in 0..100) of unsorted values, ms rounded to 0.1; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return Math.round(sorted[rank - 1]! * 10) / 10;
}

/**
 * Sums the samples of one metric in Prometheus text format (all label sets).
 * @returns the sum; 0 when the metric is declared (`# TYPE`) but has no sample yet; null when absent.
 */
export function promMetricSum(text: string, name: string): number | null {
  let declared = false;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) {
      if (line.startsWith(`# TYPE ${name} `)) declared = true;
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m && m[1] === name) {
      declared = true;
      const v = Number(m[3]);
      if (Number.isFinite(v)) sum += v;
    }
  }
  return declared ? sum : null;
}

/** Accumulates what the simulation observes. */
export class SimulateStats {
  private readonly served = new Map<string, Map<string, number>>(); // reader → item → last served, virtual ms
  private readonly latencies: Record<FeedAction, number[]> = { refresh: [], load_more: [] };
  private readonly pageSizes: Record<FeedAction, Map<number, number>> = { refresh: new Map(), load_more: new Map() };
  sessions = 0;
  requests = 0;
  interestRequests = 0;
  itemsServed = 0;
  duplicates = 0;
  readonly duplicateExamples: Duplicate[] = [];
  fallbacks = 0;
  readonly errors: Record<string, number> = {};

  constructor(private readonly limit: number) {}

  /** Records a page of `itemIds` served to `readerId` at virtual time `nowMs`, after `latencyMs`. */
  page(
    action: FeedAction,
    readerId: string,
    itemIds: readonly string[],
    nowMs: number,
    latencyMs: number,
    refreshed: boolean,
  ): void {
    this.latencies[action].push(latencyMs);
    const sizes = this.pageSizes[action];
    sizes.set(itemIds.length, (sizes.get(itemIds.length) ?? 0) + 1);
    if (refreshed) this.fallbacks++;
    this.itemsServed += itemIds.length;
    let seen = this.served.get(readerId);
    if (!seen) this.served.set(readerId, (seen = new Map()));
    for (const id of itemIds) {
      const last = seen.get(id);
      if (last !== undefined && nowMs - last < DUPLICATE_WINDOW_MS) {
        this.duplicates++;
        if (this.duplicateExamples.length < 10)
          this.duplicateExamples.push({ readerId, itemId: id, gapMs: nowMs - last });
      }
      seen.set(id, nowMs);
    }
  }

  /** Records an unsuccessful answer: an HTTP status, `200/<code>`, or `network`. */
  error(kind: string): void {
    this.errors[kind] = (this.errors[kind] ?? 0) + 1;
  }

  private pageStats(action: FeedAction): PageStats {
    let pages = 0;
    let items = 0;
    const s = { empty: 0, short: 0, full: 0 };
    for (const [size, count] of this.pageSizes[action]) {
      pages += count;
      items += size * count;
      if (size === 0) s.empty += count;
      else if (size < this.limit) s.short += count;
      else s.full += count;
    }
    return { pages, ...s, meanItems: pages ? Math.round((items / pages) * 10) / 10 : 0 };
  }

  /** The final report. */
  report(extra: {
    readersWithInterests: number;
    seenFilterDropped: number | null;
    virtualFrom: number;
    virtualTo: number;
    wallMs: number;
  }): SimulateReport {
    const latency = (a: FeedAction): LatencyStats => ({
      n: this.latencies[a].length,
      p50: percentile(this.latencies[a], 50),
      p99: percentile(this.latencies[a], 99),
    });
    const errorCount = Object.values(this.errors).reduce((a, b) => a + b, 0);
    return {
      sessions: this.sessions,
      requests: this.requests,
      interestRequests: this.interestRequests,
      itemsServed: this.itemsServed,
      distinctReaders: this.served.size,
      readersWithInterests: extra.readersWithInterests,
      duplicates: this.duplicates,
      duplicateExamples: this.duplicateExamples,
      pages: { refresh: this.pageStats('refresh'), load_more: this.pageStats('load_more') },
      fallbacks: this.fallbacks,
      errors: { ...this.errors },
      latencyMs: { refresh: latency('refresh'), load_more: latency('load_more') },
      seenFilterDropped: extra.seenFilterDropped,
      virtualFrom: new Date(extra.virtualFrom).toISOString(),
      virtualTo: new Date(extra.virtualTo).toISOString(),
      wallMs: Math.round(extra.wallMs),
      exitCode: this.duplicates > 0 || errorCount > 0 ? 1 : 0,
    };
  }
}

/** The report as an aligned two-column text table (one line per figure). */
export function formatReport(r: SimulateReport): string {
  const pages = (p: PageStats) =>
    `${p.pages} pages: ${p.full} full, ${p.short} short, ${p.empty} empty; ${p.meanItems} items/page`;
  const lat = (l: LatencyStats) => `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms (n=${l.n})`;
  const errors = Object.entries(r.errors);
  const rows: [string, string][] = [
    ['virtual time', `${r.virtualFrom} → ${r.virtualTo}`],
    ['wall time', `${(r.wallMs / 1000).toFixed(1)} s`],
    ['sessions', String(r.sessions)],
    ['distinct readers', `${r.distinctReaders} (${r.readersWithInterests} with interests)`],
    ['requests', `${r.requests} feed + ${r.interestRequests} interests`],
    ['items served', String(r.itemsServed)],
    ['duplicates within 7 days', `${r.duplicates}${r.duplicates ? '  ← must be 0' : ''}`],
    ['refresh pages', pages(r.pages.refresh)],
    ['load_more pages', pages(r.pages.load_more)],
    ['fallbacks (load_more → refresh)', String(r.fallbacks)],
    ['non-2xx responses', errors.length ? `${errors.map(([k, v]) => `${k}: ${v}`).join(', ')}  ← must be none` : '0'],
    ['latency refresh', lat(r.latencyMs.refresh)],
    ['latency load_more', lat(r.latencyMs.load_more)],
    ['dropped by the seen filter', r.seenFilterDropped === null ? 'n/a' : String(r.seenFilterDropped)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  for (const d of r.duplicateExamples)
    lines.push(`  duplicate: reader ${d.readerId} item ${d.itemId} again after ${(d.gapMs / 1000).toFixed(0)} s`);
  return lines.join('\n');
}
