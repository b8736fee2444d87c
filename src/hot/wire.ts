/**
 * Wiring of the hot ranking (docs/hot.md), called by src/compose/open.ts: the counters (Redis when configured,
 * else in process), the PostgreSQL archive of checkpoints, the metrics, the ranking service and its
 * maintenance; restores counters a lost store forgot from the checkpoints, and starts/stops the
 * background workers (rescoring, checkpoints, snapshot refresh).
 */
import type { Stores } from '../kernel/stores.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import type { HotParams } from './domain.js';
import type { HotCounters, HotRules } from './hot-counters.js';
import type { HotArchive } from './hot-archive.js';
import { MemoryHotCounters } from './adapters/memory-hot-counters.js';
import { RedisHotCounters } from './adapters/redis-hot-counters.js';
import { PostgresHotArchive } from './adapters/postgres-hot-archive.js';
import { PromHotMetrics } from './adapters/prometheus-hot-metrics.js';
import { HotRanking } from './service.js';
import { HotMaintenance } from './maintenance.js';
import { startHotWorkers, type HotWorkers } from './workers.js';

/** Settings of the hot ranking (`FRESHET_HOT_*`); durations in ms. */
export interface HotSettings {
  /** The hot-ranking design's score parameters α, β, base, γ. */
  params: HotParams;
  /** Rate-limit window for one visitor and one item (the hot-ranking design: 10–15 min). */
  rateWindowMs: number;
  visitorBudgetPerMinute: number;
  /** Lifetime of the cached top list (the hot-ranking design: 60–120 s). */
  cacheRefreshMs: number;
  rescoreMs: number;
  /** Checkpoint period: the bound on what a lost store forgets. */
  checkpointMs: number;
  /** Items published longer ago are not counted, and their counters are archived; 0 = never (`KEEP_FOREVER`, docs/hot.md "Retention"). */
  retentionMs: number;
  /** Ranked items kept per shard (the hot-ranking design: 1000). */
  cap: number;
  /** Hot-shard keys (N = 1 gives the hot-ranking design's single `hot:score`). */
  shards: number;
}

/** The hot ranking of one instance. */
export interface Hot {
  ranking: HotRanking;
  maintenance: HotMaintenance;
  counters: HotCounters;
  archive: HotArchive;
  /**
   * Starts the background workers (idempotent); `close` stops them. `maintenance: false` starts only the
   * snapshot refresh (another process rescores and archives; see workers.ts).
   */
  startWorkers(opts?: { maintenance?: boolean }): void;
  /** Stops the workers and writes a final checkpoint (nothing counted is lost on a graceful close). */
  close(): Promise<void>;
}

/** The store-facing rules of the hot counters, from the settings. */
export function hotRules(s: HotSettings): HotRules {
  const { params, rateWindowMs, visitorBudgetPerMinute, retentionMs, cap } = s;
  return { params, rateWindowMs, visitorBudgetPerMinute, retentionMs, cap };
}

/**
 * Wires the hot ranking over the stores; with `recover` (default true), restores lost counter shards
 * from the checkpoints first. A store that does not answer yet never keeps the service from starting:
 * the checkpoint worker recovers before its next checkpoint, and views are counted meanwhile.
 */
export async function wireHot(s: HotSettings, stores: Stores, content: ContentStore, recover = true): Promise<Hot> {
  const { log, clock } = stores;
  const counters: HotCounters = stores.redis
    ? new RedisHotCounters(stores.redis.redis, stores.redis.keys, hotRules(s))
    : new MemoryHotCounters(hotRules(s));
  const metrics = new PromHotMetrics(stores.registry);
  metrics.suspiciousSource(() => counters.suspiciousTotals());
  const { params, cacheRefreshMs, cap, retentionMs } = s;
  const ranking = new HotRanking({ counters, content, metrics, log }, { params, cacheRefreshMs, cap, retentionMs });
  // checkpoints, rescoring and restores run on the job clients: never cut by the request deadline
  const jobCounters: HotCounters = stores.redis?.jobs
    ? new RedisHotCounters(stores.redis.jobs, stores.redis.keys, hotRules(s))
    : counters;
  const archive = new PostgresHotArchive(stores.sqlJobs ?? stores.sql);
  const maintenance = new HotMaintenance({ counters: jobCounters, archive, metrics, log }, { retentionMs });
  if (recover)
    await maintenance
      .recover(clock.now())
      .catch((err: unknown) => log.warn({ err }, 'hot counters: recovery postponed'));
  let workers: HotWorkers | undefined;
  let closed: Promise<void> | undefined;
  return {
    ranking,
    maintenance,
    counters,
    archive,
    startWorkers: (opts = {}) => {
      const every = { rescoreMs: s.rescoreMs, checkpointMs: s.checkpointMs, cacheRefreshMs: s.cacheRefreshMs };
      workers ??= startHotWorkers(ranking, maintenance, clock, every, log, opts.maintenance !== false);
    },
    close: () =>
      (closed ??= (async () => {
        await workers?.stop();
        await maintenance
          .checkpoint(clock.now())
          .catch((err: unknown) => log.error({ err }, 'final hot checkpoint failed'));
      })()),
  };
}
