/**
 * Prometheus metrics of the following timeline, registered on the instance's registry:
 * - `freshet_fanout_deliveries_total` counter — tids pushed into inboxes
 * - `freshet_fanout_jobs_total{mode="push|pull"}` counter — fan-out jobs done (pull: a celebrity's item)
 * - `freshet_fanout_failed_total` counter — jobs that failed their last attempt (swept again later)
 * - `freshet_fanout_lag_seconds` histogram — publish → fan-out done (wall clock)
 * - `freshet_timeline_read_seconds{path="redis|rebuild|sql"}` histogram — following-timeline reads
 * - `freshet_timeline_lazy_removed_total{reason="deleted|unfollowed"}` counter
 * - `freshet_stream_connections` gauge — open `GET /v1/feeds/following/stream` connections
 * - `freshet_stream_ended_total{reason="client|slow|shutdown"}` counter — streams ended, by why
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { TimelineMetrics } from '../timeline-metrics.js';

/** {@link TimelineMetrics} on prom-client. */
export class PromTimelineMetrics implements TimelineMetrics {
  private readonly deliveries: Counter;
  private readonly jobs: Counter;
  private readonly failed: Counter;
  private readonly lag: Histogram;
  private readonly reads: Histogram;
  private readonly removed: Counter;
  private readonly open: Gauge;
  private readonly ended: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.deliveries = new Counter({
      name: 'freshet_fanout_deliveries_total',
      help: 'Tids pushed into inboxes',
      registers,
    });
    this.jobs = new Counter({
      name: 'freshet_fanout_jobs_total',
      help: 'Fan-out jobs done',
      labelNames: ['mode'],
      registers,
    });
    this.failed = new Counter({
      name: 'freshet_fanout_failed_total',
      help: 'Fan-out jobs that failed their last attempt',
      registers,
    });
    this.lag = new Histogram({
      name: 'freshet_fanout_lag_seconds',
      help: 'Publish to fan-out done, wall clock',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.reads = new Histogram({
      name: 'freshet_timeline_read_seconds',
      help: 'Following-timeline reads',
      labelNames: ['path'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    });
    this.removed = new Counter({
      name: 'freshet_timeline_lazy_removed_total',
      help: 'Ids removed lazily at read time',
      labelNames: ['reason'],
      registers,
    });
    this.open = new Gauge({
      name: 'freshet_stream_connections',
      help: 'Open following-timeline event streams',
      registers,
    });
    this.ended = new Counter({
      name: 'freshet_stream_ended_total',
      help: 'Following-timeline event streams ended, by why',
      labelNames: ['reason'],
      registers,
    });
  }

  streams(open: number): void {
    this.open.set(open);
  }

  streamEnded(reason: 'client' | 'slow' | 'shutdown'): void {
    this.ended.inc({ reason });
  }

  fanout(deliveries: number, pulled: boolean, lagMs: number): void {
    this.deliveries.inc(deliveries);
    this.jobs.inc({ mode: pulled ? 'pull' : 'push' });
    this.lag.observe(lagMs / 1000);
  }

  fanoutFailed(): void {
    this.failed.inc();
  }

  read(ms: number, rebuilt: boolean, fromSql: boolean): void {
    this.reads.observe({ path: rebuilt ? 'rebuild' : fromSql ? 'sql' : 'redis' }, ms / 1000);
  }

  lazyRemoved(reason: 'deleted' | 'unfollowed', n: number): void {
    if (n > 0) this.removed.inc({ reason }, n);
  }
}
