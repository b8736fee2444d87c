/**
 * DiscoverPoolCache: the discover feed's ranked phase-2 pool, kept per reader session so the later
 * phase-2 pages of a session page through it instead of re-running the vector search (docs/discover.md). A pool
 * grows when a session pages past its end (the next search resumes after its last entry) until the
 * index has nothing more (`done`).
 *
 * Keyed by (reader, session start `t0`): the cursor carrying `t0` is HMAC-bound to its reader, and
 * everything the pool depends on is fixed per session — the reader query is as of `t0`, candidates are
 * published at or before `t0`. What can change within a session is re-checked on every page outside
 * this cache: exclusions and the seen filter (DiscoverFeed.clean), and liveness (hydration drops deleted
 * items; the feed also asks the index which cached candidates are still live).
 *
 * In process only, bounded in entries and in (estimated) bytes, least recently used evicted first; an
 * entry lives at most `ttlMs` and is dropped when its session leaves phase 2. Several processes (the
 * Redis deployment) each keep their own: a miss re-runs the search, which returns the same pool, so
 * correctness never depends on a hit.
 */

/** A session's ranked pool: best first, and whether the search has nothing after its last entry. */
export interface RankedPool {
  entries: PoolEntry[];
  done: boolean;
}

/** One ranked candidate: item, author, cosine to the reader (the phase-2 sort key). */
export interface PoolEntry {
  id: string;
  authorId: string;
  key: number;
}

/** Bounds of the cache. */
export interface PoolCacheLimits {
  /** Most sessions kept (default 1,000). */
  entries: number;
  /** Most estimated bytes over all pools (default 32 MiB). */
  bytes: number;
  /** Longest an entry is kept, ms (default 10 minutes). */
  ttlMs: number;
}

const DEFAULTS: PoolCacheLimits = { entries: 1000, bytes: 32 * 1024 * 1024, ttlMs: 10 * 60_000 };

/** Estimated heap bytes of a pool: UTF-16 strings plus ~64 B of object and number per candidate. */
function sizeOf(pool: RankedPool): number {
  let n = 64;
  for (const c of pool.entries) n += 64 + 2 * (c.id.length + c.authorId.length);
  return n;
}

/** LRU of ranked pools by (reader, t0). Not shared between processes. */
export class DiscoverPoolCache {
  private readonly map = new Map<string, { pool: RankedPool; bytes: number; expiresAt: number }>();
  private total = 0;
  readonly limits: PoolCacheLimits;

  constructor(limits: Partial<PoolCacheLimits> = {}) {
    this.limits = { ...DEFAULTS, ...limits };
  }

  /** The cached ranked pool of the session (reader, `t0`), or undefined; `nowMs` is wall time (ms). */
  get(readerId: string, t0: number, nowMs: number = Date.now()): RankedPool | undefined {
    const key = `${readerId}\n${t0}`;
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key);
    if (e.expiresAt <= nowMs) {
      this.total -= e.bytes;
      return undefined;
    }
    this.map.set(key, e); // most recently used last
    return e.pool;
  }

  /**
   * Keeps the ranked `pool` of session (reader, `t0`) (set it again after changing it: its size is
   * re-estimated); evicts the least recently used.
   */
  set(readerId: string, t0: number, pool: RankedPool, nowMs: number = Date.now()): void {
    const key = `${readerId}\n${t0}`;
    this.delete(readerId, t0);
    const bytes = sizeOf(pool);
    if (bytes > this.limits.bytes || this.limits.entries <= 0) return;
    this.map.set(key, { pool, bytes, expiresAt: nowMs + this.limits.ttlMs });
    this.total += bytes;
    while (this.map.size > this.limits.entries || this.total > this.limits.bytes) {
      const [oldest, e] = this.map.entries().next().value!;
      this.map.delete(oldest);
      this.total -= e.bytes;
    }
  }

  /** Drops the session's pool (its phase 2 is over). */
  delete(readerId: string, t0: number): void {
    const key = `${readerId}\n${t0}`;
    const e = this.map.get(key);
    if (!e) return;
    this.map.delete(key);
    this.total -= e.bytes;
  }

  /** Sessions and estimated bytes held. */
  stats(): { entries: number; bytes: number } {
    return { entries: this.map.size, bytes: this.total };
  }
}
