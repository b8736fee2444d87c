/**
 * The report of `freshet simulate discover`: counters gathered while replaying, and the table printed.
 */
import type { DiscoverSource } from '../../discover/service.js';

/** Latency summary, ms. */
export interface Latency {
  p50: number;
  p99: number;
  max: number;
}

/** What `simulate discover` measured. */
export interface DiscoverReport {
  items: number;
  readers: { mind: number; movielens: number };
  signals: number;
  sessions: number;
  pages: number;
  served: number;
  /** Items served twice to one reader within the seen filter's lifetime (must be 0). */
  duplicates: number;
  shortPages: number;
  lastPages: number;
  /** Mean items per page by source. */
  phaseMix: Record<DiscoverSource, number>;
  /** Share of pages holding at least one item of each source. */
  pagesWith: Record<DiscoverSource, number>;
  excluded: Record<string, number>;
  seenDropped: number;
  latencyMs: Latency;
  wallMs: number;
  exitCode: number;
}

/** p50 / p99 / max of samples (nearest rank). */
export function latency(samples: number[]): Latency {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]! : 0);
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(s.at(-1) ?? 0) };
}

const round = (x: number) => Math.round(x * 100) / 100;

/** The report as a plain-text table. */
export function formatDiscoverReport(r: DiscoverReport): string {
  const mix = (Object.keys(r.phaseMix) as DiscoverSource[]).map((k) => `${k} ${r.phaseMix[k].toFixed(2)}`).join(' · ');
  const share = (Object.keys(r.pagesWith) as DiscoverSource[])
    .map((k) => `${k} ${(100 * r.pagesWith[k]).toFixed(1)} %`)
    .join(' · ');
  const excluded =
    Object.entries(r.excluded)
      .map(([k, v]) => `${k} ${v}`)
      .join(' · ') || 'none';
  return [
    'freshet simulate discover',
    `  items (HN posts)            ${r.items}`,
    `  readers                     ${r.readers.mind} MIND + ${r.readers.movielens} MovieLens`,
    `  reader signals              ${r.signals}`,
    `  sessions / pages            ${r.sessions} / ${r.pages}`,
    `  items served                ${r.served}`,
    `  duplicates served           ${r.duplicates}`,
    `  short pages (not last)      ${r.shortPages}`,
    `  last pages (cursor null)    ${r.lastPages}`,
    `  phase mix, items per page   ${mix}`,
    `  pages holding each source   ${share}`,
    `  excluded, by rule           ${excluded}`,
    `  dropped by the seen filter  ${r.seenDropped}`,
    `  page latency p50 / p99 / max ${r.latencyMs.p50} / ${r.latencyMs.p99} / ${r.latencyMs.max} ms`,
    `  wall time                   ${(r.wallMs / 1000).toFixed(1)} s`,
  ].join('\n');
}
