/**
 * What the hot ranking reports (metrics), without knowing Prometheus. Names are fixed in
 * src/hot/adapters/prometheus-hot-metrics.ts and listed in the README.
 */
import type { SuspiciousCounts, ViewVerdict } from './domain.js';

export interface HotMetrics {
  /** Views handled by this process, by verdict (`counted` or a suspicious / refused kind). */
  views(verdict: ViewVerdict, n?: number): void;
  /** One rescoring pass: items rescored, trimmed, and its duration in ms. */
  rescored(rescored: number, trimmed: number, ms: number): void;
  /** One checkpoint: items written, whether it completed, when (epoch ms). */
  checkpointed(items: number, ok: boolean, atMs: number): void;
  /** Items archived (counters moved to PostgreSQL and removed from the hot store). */
  archived(items: number): void;
  /** Where scrapes read the store's suspicious totals (all processes, all shards). */
  suspiciousSource(read: () => Promise<SuspiciousCounts>): void;
}

/** Metrics that record nothing. */
export const noHotMetrics: HotMetrics = {
  views: () => {},
  rescored: () => {},
  checkpointed: () => {},
  archived: () => {},
  suspiciousSource: () => {},
};
