/**
 * Prometheus metrics of the discover feed, on the instance's registry (src/app/metrics.ts):
 * - `freshet_discover_index_ready` gauge — 1 once phase 2's vector index answers without waiting for
 *   its start (in-process: snapshot loaded or every embedding read; pgvector: set up), 0 before
 * - `freshet_discover_phase2_deferred_total` counter — pages whose phase 2 was deferred while the
 *   index started (newest items filled them; the session's cursor stays in phase 2)
 * - impression write failures go to the feeds' shared `freshet_impression_write_failures_total{feed="discover"}`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FeedMetrics } from '../../kernel/observability.js';
import type { DiscoverMetrics } from '../discover-metrics.js';

/** The feed label of discover in the shared feed metrics. */
const FEED = 'discover';

/** {@link DiscoverMetrics} on a prom-client registry. */
export class PromDiscoverMetrics implements DiscoverMetrics {
  private readonly deferred: Counter;

  /**
   * @param feeds the feeds' shared metrics (the impression write failures)
   * @param indexReady read at scrape time: whether the vector index is ready
   */
  constructor(
    registry: Registry,
    private readonly feeds: FeedMetrics,
    indexReady: () => boolean,
  ) {
    const registers = [registry];
    this.deferred = new Counter({
      name: 'freshet_discover_phase2_deferred_total',
      help: 'Discover pages whose phase 2 was deferred while the vector index started',
      registers,
    });
    new Gauge({
      name: 'freshet_discover_index_ready',
      help: "1 once the discover feed's vector index answers without waiting for its start",
      registers,
      collect() {
        this.set(indexReady() ? 1 : 0);
      },
    });
  }

  phase2Deferred(): void {
    this.deferred.inc();
  }

  impressionWriteFailed(): void {
    this.feeds.impressionWriteFailed(FEED);
  }
}
