/**
 * What `freshet simulate following` measures and prints: publishes, deliveries, fan-out lag, timeline
 * read latency, rebuilds, inbox memory, and the exact check of sampled timelines against SQL.
 */
import { percentile } from './simulate-report.js';

/** The result of a following simulation. */
export interface FollowingReport {
  virtualFrom: string;
  virtualTo: string;
  wallMs: number;
  graphUsers: number;
  authors: number;
  /** Mapped authors above the celebrity threshold, and the threshold. */
  celebrities: number;
  celebrityThreshold: number;
  /** Followers of the most-followed mapped author. */
  topFollowers: number;
  published: number;
  deleted: number;
  readers: number;
  sessions: number;
  reads: number;
  rebuilds: number;
  unfollows: number;
  /** Fan-out jobs done, of which left to pull (celebrity items). */
  fanoutJobs: number;
  pulledJobs: number;
  /** Tids pushed into inboxes. */
  deliveries: number;
  lagMs: { p50: number; p99: number; n: number };
  readMs: { p50: number; p99: number; n: number };
  /** Inboxes and the bytes Redis reports for them (`MEMORY USAGE`), or null in process. */
  inboxes: { count: number; entries: number; bytes: number | null };
  /** Readers whose whole timeline was paged and compared with SQL, and how many differed. */
  checked: number;
  mismatches: number;
  mismatchExamples: string[];
  exitCode: number;
}

/** Accumulates observations. */
export class FollowingStats {
  readonly lag: number[] = [];
  readonly reads: number[] = [];
  deliveries = 0;
  fanoutJobs = 0;
  pulledJobs = 0;
  rebuilds = 0;
  sessions = 0;
  unfollows = 0;
  deleted = 0;
  published = 0;

  static summary(values: readonly number[]): { p50: number; p99: number; n: number } {
    return { p50: percentile(values, 50), p99: percentile(values, 99), n: values.length };
  }
}

/** The report as an aligned two-column table. */
export function formatFollowingReport(r: FollowingReport): string {
  const lat = (l: { p50: number; p99: number; n: number }) => `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms (n=${l.n})`;
  const mem = r.inboxes.bytes === null ? 'n/a (in-process store)' : `${(r.inboxes.bytes / 1048576).toFixed(2)} MiB (${Math.round(r.inboxes.bytes / Math.max(1, r.inboxes.entries))} B/entry)`;
  const rows: [string, string][] = [
    ['virtual time', `${r.virtualFrom} → ${r.virtualTo}`],
    ['wall time', `${(r.wallMs / 1000).toFixed(1)} s`],
    ['graph', `${r.graphUsers} users; ${r.authors} authors mapped, most followed has ${r.topFollowers}`],
    ['celebrities', `${r.celebrities} authors above ${r.celebrityThreshold} followers`],
    ['published / deleted', `${r.published} / ${r.deleted}`],
    ['fan-out jobs', `${r.fanoutJobs} (${r.pulledJobs} celebrity items left to pull)`],
    ['deliveries', String(r.deliveries)],
    ['fan-out lag', lat(r.lagMs)],
    ['readers / sessions / reads', `${r.readers} / ${r.sessions} / ${r.reads}`],
    ['inbox rebuilds', String(r.rebuilds)],
    ['unfollows', String(r.unfollows)],
    ['timeline read latency', lat(r.readMs)],
    ['inboxes', `${r.inboxes.count} holding ${r.inboxes.entries} ids`],
    ['inbox memory', mem],
    ['timelines checked vs SQL', `${r.checked}: ${r.mismatches} mismatches${r.mismatches ? '  ← must be 0' : ''}`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return [...rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`), ...r.mismatchExamples.map((m) => `  mismatch: ${m}`)].join('\n');
}
