/**
 * Prometheus metrics (prom-client): one registry per Freshet instance, served at `/metrics`.
 *
 * Names (the README's "Metrics" table):
 * - `freshet_http_request_duration_seconds{method,route,status}` histogram
 * - `freshet_recall_candidates{feed}` histogram — candidates per recall
 * - `freshet_seen_filter_dropped_total{feed}` counter — candidates the seen filter removed
 * - `freshet_feed_cache_total{feed,result="hit|short|fallback"}` counter — load_more outcomes
 * - `freshet_impression_write_failures_total{feed}` counter
 * - `freshet_item_cache_lookups_total{result="hit|miss|bypass"}` counter — ids hydrated from the item
 *   cache, read from the database, or read while the cache was bypassed (src/content/cached-content-store.ts)
 * - `freshet_items_published_total` counter — new items published by this process (an edit of a
 *   published item is not counted); views are `freshet_hot_views_total` (src/hot/adapters/prometheus-hot-metrics.ts)
 * - `freshet_feed_impressions_total{feed}`, `freshet_feed_clicks_total{feed}`,
 *   `freshet_feed_engagements_total{feed,kind}` counters — online quality: items served by a feed, the
 *   counted views and the engagements the client attributed to it (`feed` of a view or an engagement);
 *   clicks / impressions is the feed's click-through rate (docs/learning.md "Online quality")
 * - the store readings of the Overview page: src/observe/overview-metrics.ts
 * plus prom-client's default process metrics under `freshet_`.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FeedMetrics } from '../kernel/observability.js';
import type { ItemCacheMetrics, ItemCacheResult } from '../content/cached-content-store.js';

/** The metrics of one Freshet instance. */
export class PromMetrics implements FeedMetrics, ItemCacheMetrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'freshet_http_request_duration_seconds',
    help: 'HTTP request latency in seconds',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  private readonly recall = new Histogram({
    name: 'freshet_recall_candidates',
    help: 'Candidates returned by one recall',
    labelNames: ['feed'],
    buckets: [0, 10, 50, 100, 200, 300, 400, 500, 1000, 2000],
    registers: [this.registry],
  });
  private readonly dropped = new Counter({
    name: 'freshet_seen_filter_dropped_total',
    help: 'Candidates removed because the seen filter answered seen',
    labelNames: ['feed'],
    registers: [this.registry],
  });
  private readonly cache = new Counter({
    name: 'freshet_feed_cache_total',
    help: 'load_more outcomes: hit (full page), short (last page), fallback (silent refresh)',
    labelNames: ['feed', 'result'],
    registers: [this.registry],
  });
  private readonly impressionFailures = new Counter({
    name: 'freshet_impression_write_failures_total',
    help: 'Impression writes to the seen filter that failed (logged, not surfaced)',
    labelNames: ['feed'],
    registers: [this.registry],
  });

  private readonly itemLookups = new Counter({
    name: 'freshet_item_cache_lookups_total',
    help: 'Item ids hydrated: hit (from the item cache), miss (read from the database), bypass (cache not live)',
    labelNames: ['result'],
    registers: [this.registry],
  });

  private readonly impressionsServed = new Counter({
    name: 'freshet_feed_impressions_total',
    help: 'Items delivered in feed pages (impressions), by feed',
    labelNames: ['feed'],
    registers: [this.registry],
  });
  private readonly clicksCounted = new Counter({
    name: 'freshet_feed_clicks_total',
    help: 'Counted views the client attributed to a feed (clicks on its impressions), by feed',
    labelNames: ['feed'],
    registers: [this.registry],
  });
  private readonly engagementsCounted = new Counter({
    name: 'freshet_feed_engagements_total',
    help: 'Engagements the client attributed to a feed, by feed and kind',
    labelNames: ['feed', 'kind'],
    registers: [this.registry],
  });

  private readonly publishedItems = new Counter({
    name: 'freshet_items_published_total',
    help: 'New items published by this process (edits of published items not counted)',
    registers: [this.registry],
  });

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'freshet_' });
  }

  recallSize(feed: string, n: number): void {
    this.recall.observe({ feed }, n);
  }
  seenDropped(feed: string, n: number): void {
    if (n > 0) this.dropped.inc({ feed }, n);
  }
  cacheResult(feed: string, result: 'hit' | 'short' | 'fallback'): void {
    this.cache.inc({ feed, result });
  }
  impressionWriteFailed(feed: string): void {
    this.impressionFailures.inc({ feed });
  }
  impressions(feed: string, n: number): void {
    if (n > 0) this.impressionsServed.inc({ feed: metricFeed(feed) }, n);
  }
  /** Counts `n` clicks (counted views) attributed to `feed`. */
  clicks(feed: string, n: number): void {
    if (n > 0) this.clicksCounted.inc({ feed: metricFeed(feed) }, n);
  }
  /** Counts an engagement of `kind` attributed to `feed`. */
  engaged(feed: string, kind: string): void {
    this.engagementsCounted.inc({ feed: metricFeed(feed), kind });
  }
  /** Counts `n` new items published. */
  published(n: number): void {
    this.publishedItems.inc(n);
  }
  lookups(result: ItemCacheResult, ids: number): void {
    if (ids > 0) this.itemLookups.inc({ result }, ids);
  }
}

/** A feed's label in the metrics: the feeds' own label (`for_you`, as the recall metrics name it), whatever the API calls it. */
function metricFeed(feed: string): string {
  return feed === 'for-you' ? 'for_you' : feed;
}
