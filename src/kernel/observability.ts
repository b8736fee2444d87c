/**
 * Observability ports: what services report (metrics) and log, without knowing Prometheus or pino.
 * Metric names are fixed in src/observe/metrics.ts and listed in the README.
 */

/** Minimal structured logger (pino-compatible). */
export interface Logger {
  /** Detail for tracing a run step by step (off at the default level). */
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What the for-you feed reports. */
export interface FeedMetrics {
  /** Candidates returned by recall for one refresh. */
  recallSize(feed: string, n: number): void;
  /** Candidates dropped because the seen filter answered "seen". */
  seenDropped(feed: string, n: number): void;
  /**
   * Outcome of a `load_more`: `hit` (a full page from the cache), `short` (a last, short page),
   * `fallback` (nothing cached → silent refresh).
   */
  cacheResult(feed: string, result: 'hit' | 'short' | 'fallback'): void;
  /** An impression write that failed (logged, never surfaced to the client). */
  impressionWriteFailed(feed: string): void;
  /** Items delivered in a page (impressions: the denominator of the click-through rate). */
  impressions(feed: string, n: number): void;
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
