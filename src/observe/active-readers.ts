/**
 * Readers active in the last hour and the last day, estimated with HyperLogLog sketches (the
 * explorer's Overview, `freshet_readers_active{window}`): a reader is active when it reads a feed or
 * records a view (src/server/app.ts, src/use-cases/verbs.ts).
 *
 * - Buckets: 5-minute buckets for the hour (the last {@link HOUR_BUCKETS}, the current one included:
 *   readers of the last 55–60 min) and 1-hour buckets for the day (the last {@link DAY_BUCKETS}: the
 *   last 23–24 h), named by the clock's time (virtual time works).
 * - Redis: one HLL string per bucket (`Keys.activeReaders`, all under the hash tag `{active}` so one
 *   `PFCOUNT` unions a window, Cluster-safe), with a time to live just past its window; at most 14 + 25
 *   keys of ≤ 12 KiB each whatever the number of readers: no per-reader key. In process: the same
 *   sketches (src/hot/hll.ts, bit-compatible with Redis), dropped once out of the window.
 * - Cost: each process writes a reader at most once per 5-minute bucket (a set of the readers it has
 *   written in the current bucket, at most {@link DEDUPE_MAX} ids, then cleared), so the writes grow
 *   with distinct readers, not with requests; the marks of one turn of the event loop (a batch of
 *   views by many visitors, concurrent requests) are one pipeline of `PFADD` + `PEXPIRE` × 2 sent on the
 *   next turn, not awaited by any request. A count is one `PFCOUNT` per window (Redis unions ≤ 24 sketches).
 * - Error: 1.04/√16384 = 0.81 % standard error (Flajolet et al. 2007); counts under ~100 are exact-ish
 *   (linear counting range).
 */
import type { RedisClient } from '../kernel/redis/client.js';
import type { Keys } from '../kernel/redis/keys.js';
import { HyperLogLog } from '../hot/hll.js';

/** Width of an hour-window bucket: 5 min (ms). */
export const FINE_BUCKET_MS = 5 * 60_000;
/** Width of a day-window bucket: 1 h (ms). */
export const COARSE_BUCKET_MS = 3_600_000;
/** Fine buckets in the hour window (12 × 5 min). */
export const HOUR_BUCKETS = 12;
/** Coarse buckets in the day window (24 × 1 h). */
export const DAY_BUCKETS = 24;
/** Most reader ids a process remembers as written in the current fine bucket before it forgets them all. */
export const DEDUPE_MAX = 50_000;
/** Redis time to live of a fine bucket: its hour window plus 5 min of slack (ms). */
const FINE_TTL_MS = (HOUR_BUCKETS + 1) * FINE_BUCKET_MS;
/** Redis time to live of a coarse bucket: its day window plus 1 h of slack (ms). */
const COARSE_TTL_MS = (DAY_BUCKETS + 1) * COARSE_BUCKET_MS;

/** Distinct active readers, estimated. */
export interface ActiveCounts {
  /** In the last hour (5-minute resolution). */
  hour: number;
  /** In the last day (1-hour resolution). */
  day: number;
}

/** Where the sketches live (see the module doc). */
export interface ActiveReaders {
  /** Records that `readerId` was active at `nowMs` (epoch ms); never throws, never waits on a store. */
  mark(readerId: string, nowMs: number): void;
  /** The estimates of the windows ending at `nowMs`. @throws a store error (Redis). */
  count(nowMs: number): Promise<ActiveCounts>;
}

/** The name of the bucket holding `nowMs`: `f<n>` (5 min) or `c<n>` (1 h). */
function bucketName(kind: 'f' | 'c', nowMs: number): string {
  return `${kind}${Math.floor(nowMs / (kind === 'f' ? FINE_BUCKET_MS : COARSE_BUCKET_MS))}`;
}

/** The bucket names of a window ending at `nowMs`, newest first: `f<n>` (5 min) or `c<n>` (1 h). */
function bucketNames(kind: 'f' | 'c', nowMs: number): string[] {
  const [width, n] = kind === 'f' ? [FINE_BUCKET_MS, HOUR_BUCKETS] : [COARSE_BUCKET_MS, DAY_BUCKETS];
  const last = Math.floor(nowMs / width);
  return Array.from({ length: n }, (_, i) => `${kind}${last - i}`);
}

/** Remembers which readers this process wrote in the current fine bucket (the write-cost bound). */
class Dedupe {
  private bucket = '';
  private readonly written = new Set<string>();
  /** True the first time `readerId` is met in the fine bucket of `nowMs`. */
  first(readerId: string, nowMs: number): boolean {
    const bucket = bucketName('f', nowMs);
    if (bucket !== this.bucket || this.written.size >= DEDUPE_MAX) {
      this.bucket = bucket;
      this.written.clear();
    }
    if (this.written.has(readerId)) return false;
    this.written.add(readerId);
    return true;
  }
}

/** {@link ActiveReaders} in process (the embedded default). */
export class MemoryActiveReaders implements ActiveReaders {
  private readonly sketches = new Map<string, HyperLogLog>();
  private readonly dedupe = new Dedupe();

  mark(readerId: string, nowMs: number): void {
    if (!this.dedupe.first(readerId, nowMs)) return;
    for (const name of [bucketName('f', nowMs), bucketName('c', nowMs)]) {
      let s = this.sketches.get(name);
      if (!s) {
        // a new bucket: the ones out of the windows go (they go at a count too)
        this.evict(nowMs);
        this.sketches.set(name, (s = new HyperLogLog()));
      }
      s.add(readerId);
    }
  }

  async count(nowMs: number): Promise<ActiveCounts> {
    this.evict(nowMs);
    return { hour: this.union(bucketNames('f', nowMs)), day: this.union(bucketNames('c', nowMs)) };
  }

  private union(names: readonly string[]): number {
    const all = new HyperLogLog();
    for (const n of names) {
      const s = this.sketches.get(n);
      if (s) all.merge(s);
    }
    return all.count();
  }

  /** Drops the sketches out of both windows ending at `nowMs` (and any from a clock set back). */
  private evict(nowMs: number): void {
    const live = new Set([...bucketNames('f', nowMs), ...bucketNames('c', nowMs)]);
    for (const name of this.sketches.keys()) if (!live.has(name)) this.sketches.delete(name);
  }
}

/** {@link ActiveReaders} on Redis (see the module doc). */
export class RedisActiveReaders implements ActiveReaders {
  private readonly dedupe = new Dedupe();
  /** Readers marked since the last write, by their fine bucket's key (with its coarse bucket's key). */
  private pending = new Map<string, { coarse: string; readers: string[] }>();

  /** @param onError told of a failed write (log it; the estimate then misses those readers for this bucket). */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /**
   * Queues the reader; the marks of one turn of the event loop (a batch of views, concurrent requests) go
   * out together on the next: one pipeline of `PFADD` (every reader at once) and `PEXPIRE` per bucket.
   */
  mark(readerId: string, nowMs: number): void {
    if (!this.dedupe.first(readerId, nowMs)) return;
    if (this.pending.size === 0) setImmediate(() => this.flush()).unref();
    const fine = this.keys.activeReaders(bucketName('f', nowMs));
    const batch = this.pending.get(fine);
    if (batch) batch.readers.push(readerId);
    else this.pending.set(fine, { coarse: this.keys.activeReaders(bucketName('c', nowMs)), readers: [readerId] });
  }

  private flush(): void {
    const pipeline = this.redis.pipeline();
    for (const [fine, { coarse, readers }] of this.pending) {
      pipeline
        .pfadd(fine, ...readers)
        .pexpire(fine, FINE_TTL_MS)
        .pfadd(coarse, ...readers)
        .pexpire(coarse, COARSE_TTL_MS);
    }
    this.pending = new Map();
    pipeline.exec().then((replies) => {
      const failed = replies?.find(([err]) => err)?.[0];
      if (failed) this.onError(failed);
    }, this.onError);
  }

  async count(nowMs: number): Promise<ActiveCounts> {
    const k = (kind: 'f' | 'c') => bucketNames(kind, nowMs).map((b) => this.keys.activeReaders(b));
    const [hour, day] = await Promise.all([this.redis.pfcount(k('f')), this.redis.pfcount(k('c'))]);
    return { hour, day };
  }
}
