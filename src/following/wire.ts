/**
 * Wiring of the following timeline (docs/following.md), called by src/compose/open.ts: PostgreSQL graph and timeline
 * index, the timeline store (Redis when configured, else in process), the fan-out queue (BullMQ on the
 * same Redis, else in process) and the services.
 *
 * - Embedded default (no Redis): the in-process queue can only be consumed in this process, so a fan-out
 *   worker starts here at once; its sweep re-enqueues what a crash left pending.
 * - With Redis: this process only enqueues; `freshet worker fanout` runs the workers (or call
 *   `startWorker()`, as the tests and the simulation do).
 */
import type { Stores } from '../kernel/stores.js';
import type { Sql } from '../kernel/sql/sql.js';
import type { FanoutJob, FanoutQueue } from './fanout-queue.js';
import type { SocialGraph } from './social-graph.js';
import type { TimelineIndex } from './timeline-index.js';
import type { TimelineStore } from './timeline-store.js';
import { PostgresSocialGraph } from './adapters/postgres-social-graph.js';
import { PostgresTimelineIndex } from './adapters/postgres-timeline-index.js';
import { MemoryTimelineStore } from './adapters/memory-timeline-store.js';
import { MemoryFanoutQueue } from './adapters/memory-fanout-queue.js';
import { RedisTimelineStore } from './adapters/redis-timeline-store.js';
import { BullFanoutQueue, type BullQueueOptions } from './adapters/bullmq-fanout-queue.js';
import { PromTimelineMetrics } from './adapters/prometheus-timeline-metrics.js';
import { FollowingTimeline } from './service.js';
import { FanoutWorker, type FanoutOutcome, type RunningWorker } from './fanout-worker.js';
import type { TimelineSignal } from './timeline-signal.js';
import { MemoryTimelineSignal } from './adapters/memory-timeline-signal.js';
import { RedisTimelineSignal } from './adapters/redis-timeline-signal.js';
import { StreamHub, type StreamSettings } from './stream-hub.js';
import type { ExclusionSource } from '../kernel/exclusion-source.js';
import { PostgresUsersVacuum } from './adapters/postgres-users-vacuum.js';
import type { RetentionTask } from '../kernel/sql/retention.js';

/** The following timeline of one Freshet instance. */
export interface Following {
  timeline: FollowingTimeline;
  worker: FanoutWorker;
  graph: SocialGraph;
  index: TimelineIndex;
  store: TimelineStore;
  queue: FanoutQueue;
  /** Watermark moves: raised after each fan-out job of this process's workers, heard by `stream` (in process, or Redis pub/sub). */
  signal: TimelineSignal;
  /** The open `GET /v1/feeds/following/stream` connections of this process. */
  stream: StreamHub;
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

/** Settings of the following timeline (`FRESHET_ACTIVE_DAYS`, `FRESHET_INBOX_LENGTH`, … `FRESHET_SERVE_FANOUT`); durations in ms. */
export interface FollowingSettings {
  /**
   * The following design's active window: a reader who has not read for longer gets its inbox rebuilt on the next read,
   * and inboxes (and outboxes) expire this long after their last read (publish) on Redis, so a cold
   * reader's inbox gets no pushes.
   */
  activeWindowMs: number;
  inboxLength: number;
  outboxLength: number;
  /** Authors with at least this many followers are pulled on read instead of pushed (docs/following.md). */
  celebrityThreshold: number;
  /** Items of a newly followed author copied into the reader's inbox. */
  followBackfill: number;
  fanoutChunk: number;
  fanoutConcurrency: number;
  fanoutAttempts: number;
  /** The crash sweep's period and the age of a pending fan-out it re-enqueues. */
  sweepMs: number;
  /**
   * BullMQ lock of a running fan-out job, ms (`FRESHET_FANOUT_LOCK_MS`, 2,000; renewed every half): a
   * killed worker's job is free again this long after its last renewal at most.
   */
  lockMs: number;
  /** How often workers move jobs whose lock expired back to waiting, ms (`FRESHET_FANOUT_STALLED_MS`, 1,000). */
  stalledMs: number;
  /** Whether `freshet serve` on Redis also runs a fan-out worker (the embedded default always does). */
  serveFanout: boolean;
  /** Limits and timings of the realtime stream. */
  stream: StreamSettings;
}

/** The upkeep of the graph's tables run by the app's retention pass (PGlite: `VACUUM users`), on `sql`. */
export function followingUpkeep(sql: Sql): RetentionTask {
  return new PostgresUsersVacuum(sql);
}

/**
 * Wires the following timeline.
 * @param bull overrides of the BullMQ options (tests shorten locks).
 * @param exclusions the readers' preferences (muted authors and words, languages) the timeline applies.
 */
export function wireFollowing(
  c: FollowingSettings,
  stores: Stores,
  bull: Partial<BullQueueOptions> = {},
  exclusions?: ExclusionSource,
): Following {
  const { sql, log } = stores;
  const hot = stores.redis;
  const graph = new PostgresSocialGraph(sql);
  const index = new PostgresTimelineIndex(sql);
  const store: TimelineStore = hot ? new RedisTimelineStore(hot.redis, hot.keys) : new MemoryTimelineStore();
  const queue = fanoutQueueOf(c, stores, bull);
  const metrics = new PromTimelineMetrics(stores.registry);
  const parts = { graph, index, store, queue, metrics, log };
  const timeline = new FollowingTimeline(
    { ...parts, exclusions },
    {
      activeWindowMs: c.activeWindowMs,
      inboxLength: c.inboxLength,
      outboxLength: c.outboxLength,
      followBackfill: c.followBackfill,
    },
  );
  const worker = new FanoutWorker(parts, {
    activeWindowMs: c.activeWindowMs,
    inboxLength: c.inboxLength,
    outboxLength: c.outboxLength,
    celebrityThreshold: c.celebrityThreshold,
    chunkSize: c.fanoutChunk,
    staleMs: c.sweepMs,
    sweepEveryMs: c.sweepMs,
  });
  const signal: TimelineSignal = hot
    ? new RedisTimelineSignal(hot.redis, hot.connectBlocking, hot.keys.timelineSignal(), log)
    : new MemoryTimelineSignal();
  const stream = new StreamHub(timeline, index, signal, c.stream, log, metrics);
  const workers = fanoutWorkers(worker, signal, c.fanoutConcurrency);
  if (!hot) workers.startWorker();
  return {
    timeline,
    worker,
    graph,
    index,
    store,
    queue,
    signal,
    stream,
    inlineWorker: !hot,
    startWorker: workers.startWorker,
    onFanout: workers.onFanout,
    close: async () => {
      await stream.close();
      await signal.close();
      await workers.stopAll();
      await queue.close();
      await store.close();
    },
  };
}

/** The fan-out queue: BullMQ on Redis, else in process. */
function fanoutQueueOf(c: FollowingSettings, stores: Stores, bull: Partial<BullQueueOptions>): FanoutQueue {
  const hot = stores.redis;
  return hot
    ? new BullFanoutQueue({
        connect: hot.connectBlocking,
        connectProducer: hot.connectProducer,
        prefix: hot.keys.fanoutQueuePrefix(),
        attempts: c.fanoutAttempts,
        lockDurationMs: c.lockMs,
        stalledIntervalMs: c.stalledMs,
        log: stores.log,
        ...bull,
      })
    : new MemoryFanoutQueue({ attempts: c.fanoutAttempts });
}

/**
 * The fan-out workers of this process: each finished job publishes its tid on the signal (the watermark
 * may have moved: every process's open streams catch up) and tells the listeners.
 */
function fanoutWorkers(worker: FanoutWorker, signal: TimelineSignal, defaultConcurrency: number) {
  const running = new Set<RunningWorker>();
  const listeners = new Set<FanoutListener>();
  const startWorker = (concurrency = defaultConcurrency): RunningWorker => {
    const w = worker.start(concurrency, (job, outcome, lagMs) => {
      signal.publish(job.tid); // the watermark may have moved: every process's open streams catch up
      listeners.forEach((l) => l(job, outcome, lagMs));
    });
    const handle: RunningWorker = {
      stop: async (force) => {
        running.delete(handle);
        await w.stop(force);
      },
    };
    running.add(handle);
    return handle;
  };
  return {
    startWorker,
    onFanout: (listener: FanoutListener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    stopAll: async () => {
      await Promise.all([...running].map((w) => w.stop()));
    },
  };
}
