/**
 * What the discover feed reports (metrics), without knowing Prometheus. Names are fixed in
 * src/discover/adapters/prometheus-discover-metrics.ts and listed in docs/operations.md.
 */
export interface DiscoverMetrics {
  /** A page's phase 2 was deferred: the vector index was still starting, so newest items filled the page. */
  phase2Deferred(): void;
  /** An impression write that failed (logged, never surfaced to the client). */
  impressionWriteFailed(): void;
  /** Items delivered in a page (impressions). */
  impressions(n: number): void;
}

/** Metrics that record nothing. */
export const noDiscoverMetrics: DiscoverMetrics = {
  phase2Deferred: () => {},
  impressionWriteFailed: () => {},
  impressions: () => {},
};
