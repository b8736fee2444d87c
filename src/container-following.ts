/**
 * Wiring of the following timeline (note 4), called by container.ts: PostgreSQL graph and timeline
 * index, the timeline store (Redis when configured, else in process), the fan-out queue (BullMQ on the
 * same Redis, else in process) and the services.
 *
 * - Embedded default (no Redis): the in-process queue can only be consumed in this process, so a fan-out
 *   worker starts here at once; its sweep re-enqueues what a crash left pending.
 * - With Redis: this process only enqueues; `freshet worker fanout` runs the workers (or call
 *   `startWorker()`, as the tests and the simulation do).
 */
import { Cluster, Redis } from 'ioredis';
import type { Logger as Pino } from 'pino';
import type { Config } from './config.js';
import type { Sql } from './adapters/postgres/sql.js';
import type { RedisClient } from './adapters/redis/client.js';
import type { Keys } from './adapters/redis/keys.js';
import type { Registry } from 'prom-client';
import type { FanoutJob, FanoutQueue } from './ports/fanout-queue.js';
import type { SocialGraph } from './ports/social-graph.js';
import type { TimelineIndex } from './ports/timeline-index.js';
import type { TimelineStore } from './ports/timeline-store.js';
import { PostgresSocialGraph } from './adapters/postgres/social-graph.js';
import { PostgresTimelineIndex } from './adapters/postgres/timeline-index.js';
import { MemoryTimelineStore } from './adapters/memory/timeline-store.js';
import { MemoryFanoutQueue } from './adapters/memory/fanout-queue.js';
import { RedisTimelineStore } from './adapters/redis/timeline-store.js';
import { BullFanoutQueue, type BullQueueOptions } from './adapters/redis/fanout-queue.js';
import { PromTimelineMetrics } from './adapters/prometheus-timeline.js';
import { FollowingTimeline } from './services/following-timeline.js';
import { FanoutWorker, type FanoutOutcome, type RunningWorker } from './services/fanout-worker.js';

/** The following timeline of one Freshet instance. */
export interface Following {
  timeline: FollowingTimeline;
  worker: FanoutWorker;
  graph: SocialGraph;
  index: TimelineIndex;
  store: TimelineStore;
  queue: FanoutQueue;
  /** Whether this process already runs a fan-out worker (the embedded default does). */
  readonly inlineWorker: boolean;
  /** Starts a fan-out worker in this process (`concurrency` jobs at once, default from the config). */
  startWorker(concurrency?: number): RunningWorker;
  /** Calls `listener` after every fan-out job a worker of this process finished; returns the unsubscribe. */
  onFanout(listener: FanoutListener): () => void;
  /** Stops the workers started here and the queue. */
  close(): Promise<void>;
}

/** Sees a finished fan-out job, its outcome and its lag (ms, publish → done, wall clock). */
export type FanoutListener = (job: FanoutJob, outcome: FanoutOutcome, lagMs: number) => void;

/** Where the Redis-backed pieces live (absent: in process). */
export interface FollowingRedis {
  redis: RedisClient;
  keys: Keys;
}

/** Opens a BullMQ connection like the configured client, with `maxRetriesPerRequest: null` (BullMQ's need). */
export function bullConnector(config: Config): () => RedisClient {
  return () => {
    if (config.redisClusterNodes?.length) return new Cluster(config.redisClusterNodes, { redisOptions: { maxRetriesPerRequest: null } });
    return new Redis(config.redisUrl!, { maxRetriesPerRequest: null });
  };
}

/**
 * Wires the following timeline.
 * @param bull overrides of the BullMQ options (tests shorten locks).
 */
export function wireFollowing(
  config: Config,
  sql: Sql,
  hot: FollowingRedis | null,
  registry: Registry,
  log: Pino,
  bull: Partial<BullQueueOptions> = {},
): Following {
  const c = config.following;
  const graph = new PostgresSocialGraph(sql);
  const index = new PostgresTimelineIndex(sql);
  const store: TimelineStore = hot ? new RedisTimelineStore(hot.redis, hot.keys) : new MemoryTimelineStore();
  const queue: FanoutQueue = hot
    ? new BullFanoutQueue({ connect: bullConnector(config), prefix: hot.keys.fanoutQueuePrefix(), attempts: c.fanoutAttempts, ...bull })
    : new MemoryFanoutQueue({ attempts: c.fanoutAttempts });
  const metrics = new PromTimelineMetrics(registry);
  const timeline = new FollowingTimeline(
    { graph, index, store, queue, metrics, log },
    { activeWindowMs: c.activeWindowMs, inboxLength: c.inboxLength, outboxLength: c.outboxLength, followBackfill: c.followBackfill },
  );
  const worker = new FanoutWorker(
    { graph, index, store, queue, metrics, log },
    {
      activeWindowMs: c.activeWindowMs,
      inboxLength: c.inboxLength,
      outboxLength: c.outboxLength,
      celebrityThreshold: c.celebrityThreshold,
      chunkSize: c.fanoutChunk,
      staleMs: c.sweepMs,
      sweepEveryMs: c.sweepMs,
    },
  );
  const running = new Set<RunningWorker>();
  const listeners = new Set<FanoutListener>();
  const startWorker = (concurrency = c.fanoutConcurrency): RunningWorker => {
    const w = worker.start(concurrency, (job, outcome, lagMs) => listeners.forEach((l) => l(job, outcome, lagMs)));
    const handle: RunningWorker = {
      stop: async (force) => {
        running.delete(handle);
        await w.stop(force);
      },
    };
    running.add(handle);
    return handle;
  };
  if (!hot) startWorker();
  return {
    timeline,
    worker,
    graph,
    index,
    store,
    queue,
    inlineWorker: !hot,
    startWorker,
    onFanout: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    close: async () => {
      await Promise.all([...running].map((w) => w.stop()));
      await queue.close();
      await store.close();
    },
  };
}
