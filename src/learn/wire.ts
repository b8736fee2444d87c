/**
 * Wiring of the learning room (docs/learning.md), called by src/compose/open.ts: the interactions and the
 * learned tables on PostgreSQL (PGlite on the embedded default), the collaborative recall every process
 * serves from, and — started by `startWorkers` in the process that runs maintenance — the builder's
 * ticks (neighbours, popularity) and the factor model's training.
 */
import type { Stores } from '../kernel/stores.js';
import type { Sql } from '../kernel/sql/sql.js';
import type { RetentionTask } from '../kernel/sql/retention.js';
import { IntervalTasks } from '../kernel/interval-tasks.js';
import type { AlsSettings } from './als.js';
import { LearnBuilder, type BuilderSettings } from './builder.js';
import { FactorIndex, FactorTrainer } from './factor-model.js';
import type { InteractionStore } from './interactions.js';
import type { ModelStore } from './model-store.js';
import { LearnedRecall } from './recall.js';
import { PostgresInteractionStore } from './adapters/postgres-interactions.js';
import { PostgresModelStore } from './adapters/postgres-model-store.js';

/** Settings of the learning room (`FRESHET_LEARN_*`); durations in ms. */
export interface LearnSettings {
  builder: BuilderSettings;
  als: AlsSettings;
  /** Builder tick period (`FRESHET_LEARN_TICK_S`). */
  tickMs: number;
  /** Factor training period (`FRESHET_LEARN_TRAIN_S`; 0: never train). */
  trainMs: number;
  /** How long a serving process keeps a neighbour row, and how often it checks for a new model. */
  cacheMs: number;
  /** Neighbour rows a process caches at most. */
  cacheRows: number;
  /** Interactions older than this become tombstones, then go (`FRESHET_LEARN_RETENTION_DAYS`; 0: kept). */
  retentionMs: number;
}

/** The learning room of one instance. */
export interface Learn {
  interactions: InteractionStore;
  models: ModelStore;
  builder: LearnBuilder;
  trainer: FactorTrainer;
  factors: FactorIndex;
  recall: LearnedRecall;
  /** Starts the builder's ticks and the training timer (`startWorkers` of the maintenance process). */
  startWorkers(): void;
  /** Runs the builder until nothing is stale, then trains once (a replay's settle step; tests). */
  settle(nowMs: number): Promise<void>;
  close(): Promise<void>;
}

/** Wires the learning room over the stores. */
export function wireLearn(s: LearnSettings, stores: Stores): Learn {
  // background work (the builder's reads and writes, training) on the jobs pool; serving reads on the main one
  const jobs = stores.sqlJobs ?? stores.sql;
  const interactions = new PostgresInteractionStore(stores.sql);
  const models = new PostgresModelStore(jobs);
  const builder = new LearnBuilder(new PostgresInteractionStore(jobs), models, s.builder, stores.log);
  const trainer = new FactorTrainer(builder, models, s.als, stores.log);
  const factors = new FactorIndex(models, { ...s.als, pollMs: s.cacheMs }, () => stores.clock.now());
  const recall = new LearnedRecall(
    interactions,
    new PostgresModelStore(stores.sql),
    { historyCap: s.builder.historyCap, rowCacheTtlMs: s.cacheMs, rowCacheRows: s.cacheRows },
    factors,
  );
  const tasks = new IntervalTasks(stores.log, 'learn worker');
  return {
    interactions,
    models,
    builder,
    trainer,
    factors,
    recall,
    startWorkers() {
      if (tasks.started) return;
      tasks.every('learn-builder', s.tickMs, () => builder.tick(stores.clock.now()));
      if (s.trainMs > 0) tasks.every('learn-trainer', s.trainMs, () => trainer.train(stores.clock.now()));
    },
    async settle(nowMs) {
      await builder.settle(nowMs);
      if (s.trainMs > 0) await trainer.train(nowMs);
      recall.clear();
      await factors.refresh(true);
    },
    async close() {
      trainer.stop(); // a training in progress ends at its next slice, unsaved
      await tasks.stop();
    },
  };
}

/** Rows one retention step touches at most. */
const RETENTION_STEP = 5000;

/**
 * The retention of `interactions` (docs/operations.md "Retention"): pairs whose last signal is older than
 * the retention become tombstones (the builder drops them at its next tick), and tombstones ten ticks
 * older than that are deleted — in steps of at most 5,000 rows each.
 */
export function learnRetention(s: LearnSettings, sql: Sql): RetentionTask {
  const store = new PostgresInteractionStore(sql);
  return {
    table: 'interactions',
    async step(_after, nowMs) {
      if (s.retentionMs <= 0) return { deleted: 0, next: null };
      const cut = nowMs - s.retentionMs;
      const [tombstoned, deleted] = await store.expire(cut, cut - 10 * s.tickMs, RETENTION_STEP);
      const more = tombstoned === RETENTION_STEP || deleted === RETENTION_STEP;
      return { deleted, next: more ? 'more' : null };
    },
  };
}
