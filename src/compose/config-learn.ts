/**
 * The learning room's section of the configuration (docs/operations.md "Learning"): its variables with
 * their ranges and defaults, and the parser that turns them into {@link LearnSettings}. Kept beside
 * config.ts, which spreads {@link LEARN_ENV} into its one environment schema.
 */
import { DAY_MS, HOUR_MS } from '../kernel/clock.js';
import { intVar as int, numVar as num } from './env.js';
import type { LearnSettings } from '../learn/wire.js';

/**
 * The variables. Defaults: k = 100 neighbours (Gorse's); shrinkage λ = 10 and a 500-pair history (measured
 * on ml-latest-small beside λ = 0 and 100, all pairs and 200 — docs/learning.md); 64 factors, λ = 10, α = 1,
 * 10 alternations (the same page: 32/64 factors, λ 1–30, α 1–10 measured); popularity halves every 24 h.
 */
export const LEARN_ENV = {
  FRESHET_LEARN_NEIGHBOURS: int(1, 1000, 100),
  FRESHET_LEARN_SHRINK: num(0, 10_000, 10),
  FRESHET_LEARN_HISTORY: int(1, 10_000, 500),
  FRESHET_LEARN_BUDGET: int(1000, 10_000_000_000, 50_000_000),
  FRESHET_LEARN_TICK_S: num(0.05, 86_400, 30),
  FRESHET_LEARN_TRAIN_S: num(0, 30 * 86_400, 600),
  FRESHET_LEARN_FACTORS: int(2, 512, 64),
  FRESHET_LEARN_REGULARIZATION: num(0.0001, 10_000, 10),
  FRESHET_LEARN_ALPHA: num(0, 10_000, 1),
  FRESHET_LEARN_ITERATIONS: int(1, 100, 10),
  FRESHET_LEARN_CACHE_S: num(0.05, 3600, 60),
  FRESHET_LEARN_CACHE_ROWS: int(100, 10_000_000, 20_000),
  FRESHET_LEARN_RETENTION_DAYS: num(0, 3650, 90),
  FRESHET_POPULARITY_HALF_LIFE_H: num(0.01, 24 * 3650, 24),
};

/** The parsed values of {@link LEARN_ENV}. */
type LearnEnv = { [K in keyof typeof LEARN_ENV]: number };

/** The learning room's settings (src/learn/wire.ts). */
export function learnSettings(e: LearnEnv): LearnSettings {
  return {
    builder: {
      k: e.FRESHET_LEARN_NEIGHBOURS,
      shrink: e.FRESHET_LEARN_SHRINK,
      historyCap: e.FRESHET_LEARN_HISTORY,
      budget: e.FRESHET_LEARN_BUDGET,
      popularityHalfLifeMs: Math.round(e.FRESHET_POPULARITY_HALF_LIFE_H * HOUR_MS),
    },
    als: {
      factors: e.FRESHET_LEARN_FACTORS,
      regularization: e.FRESHET_LEARN_REGULARIZATION,
      alpha: e.FRESHET_LEARN_ALPHA,
      iterations: e.FRESHET_LEARN_ITERATIONS,
      // Takács et al. 2011 and Frederickson's `implicit`: 3 warm-started steps per solve
      cgSteps: 3,
      seed: 42,
    },
    tickMs: Math.round(e.FRESHET_LEARN_TICK_S * 1000),
    trainMs: Math.round(e.FRESHET_LEARN_TRAIN_S * 1000),
    cacheMs: Math.round(e.FRESHET_LEARN_CACHE_S * 1000),
    cacheRows: e.FRESHET_LEARN_CACHE_ROWS,
    retentionMs: Math.round(e.FRESHET_LEARN_RETENTION_DAYS * DAY_MS),
  };
}
