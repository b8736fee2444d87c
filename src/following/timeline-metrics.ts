/**
 * What the following timeline reports (metrics), without knowing Prometheus. Names are fixed in
 * src/following/adapters/prometheus-timeline-metrics.ts and listed in the README.
 */

export interface TimelineMetrics {
  /** One fan-out job done: inbox deliveries, whether the author was pulled (celebrity), lag in ms. */
  fanout(deliveries: number, pulled: boolean, lagMs: number): void;
  /** A fan-out job that failed its last attempt (its pending row stays; the sweep retries it). */
  fanoutFailed(): void;
  /** One timeline read: latency ms, and whether the inbox had to be rebuilt from PostgreSQL. */
  read(ms: number, rebuilt: boolean, fromSql: boolean): void;
  /** Ids dropped at read time and removed lazily, by reason. */
  lazyRemoved(reason: 'deleted' | 'unfollowed', n: number): void;
  /** Open realtime streams in this process, after a change. */
  streams(open: number): void;
  /** A realtime stream ended: the client left, it was dropped as slow, or the server shut down. */
  streamEnded(reason: 'client' | 'slow' | 'shutdown'): void;
}

/** Metrics that record nothing. */
export const noTimelineMetrics: TimelineMetrics = {
  fanout: () => {},
  fanoutFailed: () => {},
  read: () => {},
  lazyRemoved: () => {},
  streams: () => {},
  streamEnded: () => {},
};
