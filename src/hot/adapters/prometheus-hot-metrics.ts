/**
 * Prometheus metrics of the hot ranking, registered on the instance's registry (src/observe/metrics.ts):
 * - `freshet_hot_views_total{verdict="counted|repeat|budget|flagged|expired|unknown"}` counter — views
 *   this process handled; the suspicious kinds never reach PV/UV/score
 * - `freshet_hot_suspicious_views{kind="repeat|budget|flagged"}` gauge — the store's totals over every
 *   process and shard, read from the store at scrape time
 * - `freshet_hot_rescore_duration_seconds` histogram, `freshet_hot_trimmed_total` counter
 * - `freshet_hot_checkpoints_total{result="ok|failed"}`, `freshet_hot_checkpoint_items_total`,
 *   `freshet_hot_last_checkpoint_timestamp_seconds` (virtual time of the last complete checkpoint)
 * - `freshet_hot_archived_items_total`
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { SUSPICIOUS_KINDS, type SuspiciousCounts, type ViewVerdict } from '../domain.js';
import type { HotMetrics } from '../hot-metrics.js';

/** {@link HotMetrics} on a prom-client registry. */
export class PromHotMetrics implements HotMetrics {
  private readonly viewsTotal: Counter;
  private readonly rescoreSeconds: Histogram;
  private readonly trimmedTotal: Counter;
  private readonly checkpoints: Counter;
  private readonly checkpointItems: Counter;
  private readonly lastCheckpoint: Gauge;
  private readonly archivedTotal: Counter;
  private readSuspicious: (() => Promise<SuspiciousCounts>) | null = null;

  constructor(registry: Registry) {
    const registers = [registry];
    this.viewsTotal = new Counter({
      name: 'freshet_hot_views_total',
      help: 'Views handled, by verdict (only counted ones reach PV/UV/score)',
      labelNames: ['verdict'],
      registers,
    });
    this.rescoreSeconds = new Histogram({
      name: 'freshet_hot_rescore_duration_seconds',
      help: 'Duration of one rescoring pass',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers,
    });
    this.trimmedTotal = new Counter({
      name: 'freshet_hot_trimmed_total',
      help: 'Items trimmed off the ranking after rescoring',
      registers,
    });
    this.checkpoints = new Counter({
      name: 'freshet_hot_checkpoints_total',
      help: 'Checkpoints of the hot counters to PostgreSQL',
      labelNames: ['result'],
      registers,
    });
    this.checkpointItems = new Counter({
      name: 'freshet_hot_checkpoint_items_total',
      help: 'Item rows written by checkpoints',
      registers,
    });
    this.lastCheckpoint = new Gauge({
      name: 'freshet_hot_last_checkpoint_timestamp_seconds',
      help: 'Time of the last complete checkpoint (epoch s)',
      registers,
    });
    this.archivedTotal = new Counter({
      name: 'freshet_hot_archived_items_total',
      help: 'Items whose counters were archived to PostgreSQL and left the hot store',
      registers,
    });
    const self = this;
    new Gauge({
      name: 'freshet_hot_suspicious_views',
      help: "Suspicious views kept out of PV/UV/score, by kind (the store's totals, all processes)",
      labelNames: ['kind'],
      registers,
      async collect() {
        if (!self.readSuspicious) return;
        const totals = await self.readSuspicious().catch(() => null);
        if (totals) for (const kind of SUSPICIOUS_KINDS) this.set({ kind }, totals[kind]);
      },
    });
  }

  views(verdict: ViewVerdict, n = 1): void {
    if (n > 0) this.viewsTotal.inc({ verdict }, n);
  }
  rescored(_rescored: number, trimmed: number, ms: number): void {
    this.rescoreSeconds.observe(ms / 1000);
    if (trimmed > 0) this.trimmedTotal.inc(trimmed);
  }
  checkpointed(items: number, ok: boolean, atMs: number): void {
    this.checkpoints.inc({ result: ok ? 'ok' : 'failed' });
    if (items > 0) this.checkpointItems.inc(items);
    if (ok) this.lastCheckpoint.set(Math.floor(atMs / 1000));
  }
  archived(items: number): void {
    if (items > 0) this.archivedTotal.inc(items);
  }
  suspiciousSource(read: () => Promise<SuspiciousCounts>): void {
    this.readSuspicious = read;
  }
}
