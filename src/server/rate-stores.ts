/**
 * The stores of the edge's rate limit (src/server/limits.ts), each one budget per caller across every
 * limited route (the library's own stores keep one per route: `child` here returns the same store).
 *
 * - In process (the embedded default): the library's LRU store, shared.
 * - Redis: `@fastify/rate-limit`'s store interface over our client, keys (`rl:{u:<r>}`, `rl:service`: src/kernel/redis/keys.ts) and Lua
 * (`lua/edgeRate-1.lua`, loaded with LuaScripts). The library's own Redis store builds keys of its own and
 * runs inline Lua; this one keeps every key in the key families and every failure classified:
 * a Redis that fails or stalls answers `STORE_UNAVAILABLE` (503) within the request deadline, like
 * every other Redis call of a request; a Redis that answers but refuses writes (out of memory) lets the
 * request through uncounted, so reads keep being served under OOM as before.
 */
import { createRequire } from 'node:module';
import type { RouteOptions } from 'fastify';
import { replyCode } from '../kernel/redis/errors.js';
import { LuaScriptError, LuaScripts } from '../kernel/redis/lua.js';
import type { RedisHandle } from '../kernel/stores.js';

export const EDGE_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), ['edgeRate-1']);

/** `@fastify/rate-limit`'s store interface (what its request hook calls). */
export interface RateStore {
  incr(
    key: string,
    callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
    timeWindowMs?: number,
    max?: number,
  ): void;
  child(route: RouteOptions): RateStore;
}

/**
 * The store constructor the library takes (`store:`), bound to `redis` and the window (ms). The library's
 * keys are `service`, `u:<reader id>` (feed pages and views) or `o:<reader id>` (the reader's other routes):
 * its key generators are ours (src/server/limits.ts).
 */
export function redisRateStore(redis: RedisHandle, windowMs: number): new () => RateStore {
  const lua = EDGE_SCRIPTS.on(redis.redis);
  const over = new OverBudget();
  const store: RateStore = {
    incr(key, callback, _window, max) {
      // a caller already over its budget is answered here until its window ends: a flood costs no Redis
      const known = over.get(key, Date.now());
      if (known) return callback(null, known);
      const caller = key === 'service' ? 'service' : { readerId: key.slice(2) };
      const budget = key.startsWith('o:') ? 'other' : 'pages';
      lua
        .edgeRate([redis.keys.edgeRate(caller, budget)], [Math.max(1, Math.floor(windowMs))])
        .then((reply) => {
          if (!Array.isArray(reply) || reply.length !== 2)
            throw new LuaScriptError('edgeRate-1', 'returned something other than { count, ttl }');
          const result = { current: Number(reply[0]), ttl: Math.max(0, Number(reply[1])) };
          if (max !== undefined && result.current > max) over.set(key, result, Date.now());
          callback(null, result);
        })
        .catch((err: Error) => {
          // Redis answered but refuses writes (out of memory, read-only replica, failed snapshot): the
          // count is lost, not the request — reads stay served as on every route (docs/operations.md
          // "Faults"); a Redis that does not answer fails the request (503) as every Redis call does
          if (refusesWrites(err)) callback(null, { current: 0, ttl: windowMs });
          else callback(err);
        });
    },
    child: () => store,
  };
  return constructing(store);
}

/**
 * Callers known to be over their budget until their window ends (epoch ms), in this process: a flood of
 * refused requests is answered without a Redis round trip each. At most {@link OVER_BUDGET_MAX} callers
 * (the oldest entry goes first). It only ever answers "over" for a window Redis already said is over.
 */
class OverBudget {
  private readonly until = new Map<string, { current: number; endMs: number }>();

  get(key: string, nowMs: number): { current: number; ttl: number } | null {
    const e = this.until.get(key);
    if (!e) return null;
    if (e.endMs <= nowMs) {
      this.until.delete(key);
      return null;
    }
    e.current++;
    return { current: e.current, ttl: e.endMs - nowMs };
  }

  set(key: string, r: { current: number; ttl: number }, nowMs: number): void {
    if (this.until.size >= OVER_BUDGET_MAX) this.until.delete(this.until.keys().next().value!);
    this.until.set(key, { current: r.current, endMs: nowMs + r.ttl });
  }
}

/** Callers an {@link OverBudget} remembers. */
const OVER_BUDGET_MAX = 10_000;

/** Redis answered the count with a refusal to write (OOM, READONLY, MISCONF): see the store's `incr`. */
function refusesWrites(err: unknown): boolean {
  const cause = (err as { cause?: unknown }).cause ?? err;
  const message = cause instanceof Error ? cause.message : '';
  return WRITE_REFUSALS.has(replyCode(message));
}

const WRITE_REFUSALS = new Set(['OOM', 'READONLY', 'MISCONF']);

/** The library's in-process store (a fixed window per key in an LRU of `maxCallers` entries). */
const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  cache: number,
) => RateStore;

/** The store constructor of the in-process counts: the library's LRU store, one for every route. */
export function memoryRateStore(maxCallers: number): new () => RateStore {
  const store = new LocalStore(false, false, maxCallers);
  store.child = () => store;
  return constructing(store);
}

/** A constructor the library can `new` that hands back the one shared `store`. */
function constructing(store: RateStore): new () => RateStore {
  return class {
    constructor() {
      // biome-ignore lint/correctness/noConstructorReturn: the library constructs its store; all share one
      return store;
    }
  } as unknown as new () => RateStore;
}
