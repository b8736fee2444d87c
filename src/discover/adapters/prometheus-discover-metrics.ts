/**
 * Prometheus metrics of the discover feed, on the instance's registry (src/observe/metrics.ts):
 * - `freshet_discover_index_ready` gauge — 1 once phase 2's vector index answers without waiting for
 *   its start (in-process: snapshot loaded or every embedding read; pgvector: set up), 0 before
 * - `freshet_discover_index_bytes{memory}` gauge — the vector index's bytes in this process:
 *   `private` (its own heap and native memory) and `shared` (snapshot files viewed memory-mapped, one
 *   copy per host for every process viewing them; `FRESHET_DISCOVER_SHARED_INDEX`); 0 for pgvector
 * - `freshet_discover_phase2_deferred_total` counter — pages whose phase 2 was deferred while the
 *   index started (newest items filled them; the session's cursor stays in phase 2)
 * - impression write failures go to the feeds' shared `freshet_impression_write_failures_total{feed="discover"}`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FeedMetrics } from '../../kernel/observability.js';
import type { DiscoverMetrics } from '../discover-metrics.js';
import type { VectorSearchStats } from '../vector-search.js';

/** The feed label of discover in the shared feed metrics. */
const FEED = 'discover';

/** {@link DiscoverMetrics} on a prom-client registry. */
export class PromDiscoverMetrics implements DiscoverMetrics {
  private readonly deferred: Counter;

  /**
   * @param feeds the feeds' shared metrics (the impression write failures)
   * @param indexReady read at scrape time: whether the vector index is ready
   * @param indexStats read at scrape time: the vector index's size and bytes
   */
  constructor(
    registry: Registry,
    private readonly feeds: FeedMetrics,
    indexReady: () => boolean,
    indexStats: () => VectorSearchStats,
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
    new Gauge({
      name: 'freshet_discover_index_bytes',
      help: "Bytes of the discover feed's vector index in this process: private, or shared (memory-mapped snapshot files)",
      labelNames: ['memory'],
      registers,
      collect() {
        const s = indexStats();
        this.set({ memory: 'private' }, s.bytes);
        this.set({ memory: 'shared' }, s.sharedBytes ?? 0);
      },
    });
  }

  phase2Deferred(): void {
    this.deferred.inc();
  }

  impressionWriteFailed(): void {
    this.feeds.impressionWriteFailed(FEED);
  }
  impressions(n: number): void {
    this.feeds.impressions('discover', n);
  }
}
