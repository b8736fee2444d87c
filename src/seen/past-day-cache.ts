/**
 * The in-process copies of past days' seen bitmaps that the Redis seen filter (redis-seen-filter.ts,
 * the for-you design) tests instead of asking Redis for their bits.
 *
 * Why: in steady state only today's bitmap is written, so the D − 1 past days of a window do not
 * change; reading their bits in Lua costs ~3 ms a check (500 candidates × 6 days of BITFIELD_RO
 * rounds), testing a local copy ~15 µs a day. So each instance keeps a copy of the past days' bitmaps
 * it has checked (`Map<day key, {version, bytes}>`), and a check is:
 * - today (the day of `nowMs`): tested in Lua;
 * - each past day: Lua compares the day's version with the copy's; current → the copy is tested in
 *   the engine (`hasAllBits`, while the script runs); changed or no copy → the reply carries the whole
 *   bitmap and its version (one GET: m/8 bytes, 106 KB a shard at the defaults), which replaces the
 *   copy ({@link PastDayCache.receive}); key gone (expired) → the copy is dropped.
 * Still ONE round trip per shard and layout of the window (one in steady state). A check never trusts a copy Redis did not confirm in that same script run, so
 * answers equal those of the uncached check (and of the memory adapter) bit for bit. Measured (500 × 7
 * days of 200k members, loopback, shared 2-core VM): p50 0.9 ms, p99 1.6 ms warm, against 3.6 / 6.5 ms
 * with every day in Lua; a check that fetches one day ~5 ms.
 *
 * Memory: (D − 1) past days × ⌈m/8⌉ bytes per shard whose readers this process checks; each of the N
 * shards of a day is sized for capacity/N (src/seen/layout.ts), so all of them together take
 * 6 × 1.7 MB = 10 MB per 1,000,000 impressions a day, whatever N (a copy of one shard-day is at most
 * 1 MiB). Bounded twice: copies of days that left
 * the window of the latest `nowMs` are dropped ({@link PastDayCache.evict}), and past `cacheBytes` (default 256 MiB) no
 * new copy is made — such a day is then tested in Lua, as today is. One fetch per day key at a time
 * ({@link PastDayCache.claim}): while one check waits for a bitmap, concurrent checks of that day have
 * it tested in Lua (no burst of replies at midnight).
 */
import { DAY_MS } from '../kernel/clock.js';

/** Default cache size (`RedisSeenFilterOptions.cacheBytes`, `FRESHET_SEEN_CACHE_MB`): 256 MiB. */
export const DEFAULT_SEEN_CACHE_BYTES = 256 * 2 ** 20;

/** What the past-day cache holds and has done (for tests and metrics). */
export interface SeenCacheStats {
  /** Day bitmaps held. */
  days: number;
  /** Their bytes. */
  bytes: number;
  /** Past days a check tested from a copy Redis confirmed current. */
  hits: number;
  /** Bitmaps received (no copy, or a stale one). */
  fetches: number;
  /** Their bytes. */
  fetchedBytes: number;
  /** Past days tested in Lua (cache full, or a fetch of the day already in flight). */
  testedInLua: number;
}

/** A copy of one past day's bitmap at one version. */
export interface DayCopy {
  version: string;
  /** ⌈m/8⌉ bytes (a shorter Redis string is zero-padded). */
  bits: Uint8Array;
  /** Start (epoch ms) of its UTC day. */
  dayMs: number;
}

/** One day of a check, as the cache is asked about it. */
export interface DayAsk {
  /** The day's key. */
  key: string;
  /** ⌈m/8⌉ of its layout: the bytes a copy takes. */
  bytes: number;
  /** Today's (of the check's `nowMs`): written all the time, so tested in Lua and never copied. */
  today: boolean;
}

/** What one check asks of the cache: per day, the copy it tests and what the script does. */
export interface Claim {
  /** Per day (the order asked): the copy held when the check started (undefined: none, or today). */
  held: (DayCopy | undefined)[];
  /**
   * Per day, the script's ask: 'T' (today: test in Lua), 'S' + the copy's version (send the bitmap
   * unless current) or 'L' + it (test in Lua unless current).
   */
  asks: string[];
  /** Day keys this check fetches (no concurrent check does); hand them back with {@link PastDayCache.release}. */
  claimed: string[];
}

/** The copies of one filter instance (see the module doc). */
export class PastDayCache {
  private readonly copies = new Map<string, DayCopy>();
  private readonly fetching = new Set<string>();
  private cachedBytes = 0;
  /** Start of the latest day of `nowMs` seen: copies before its window are dropped. */
  private latestDayMs = -Infinity;
  private readonly counts = { hits: 0, fetches: 0, fetchedBytes: 0, testedInLua: 0 };

  /**
   * @param days D, the days of the window (today and D − 1 past days).
   * @param cacheBytes the most bytes of copies held (0: none).
   */
  constructor(
    private readonly days: number,
    private readonly cacheBytes: number,
  ) {}

  /**
   * Per day asked: the copy held (captured now: a concurrent check may replace it meanwhile) and
   * whether this check fetches the bitmap when the copy is missing or stale ('S') or not ('L') — only
   * while there is room and no other check fetches that day. Today is always 'T'.
   */
  claim(days: readonly DayAsk[]): Claim {
    const held: (DayCopy | undefined)[] = new Array<DayCopy | undefined>(days.length);
    const asks: string[] = [];
    const claimed: string[] = [];
    let room = this.cacheBytes - this.cachedBytes;
    for (let d = 0; d < days.length; d++) {
      const { key, bytes, today } = days[d]!;
      if (today) {
        asks.push('T');
        continue;
      }
      const copy = this.copies.get(key);
      held[d] = copy;
      const need = copy ? 0 : bytes; // a stale copy is replaced in place
      let mode = 'L';
      if (need <= room && !this.fetching.has(key)) {
        mode = 'S';
        room -= need;
        this.fetching.add(key);
        claimed.push(key);
      }
      asks.push(mode + (copy ? copy.version : ''));
    }
    return { held, asks, claimed };
  }

  /** Hands back the day keys a check claimed (its script run is over, answered or not). */
  release(claimed: readonly string[]): void {
    for (const key of claimed) this.fetching.delete(key);
  }

  /** Counts a past day tested from a copy Redis confirmed current. */
  hit(): void {
    this.counts.hits++;
  }

  /** Counts a past day tested in Lua. */
  testedInLua(): void {
    this.counts.testedInLua++;
  }

  /**
   * A bitmap Redis sent at `version`: copied (zero-padded to `bytes` = ⌈m/8⌉ of its layout) and kept
   * when its day is inside the window of the latest day and there is room (else a stale copy of it is
   * dropped).
   * @returns the copy, to test this check's members against.
   * @throws Error when Redis sent more bytes than the layout's bitmap (a key written by something else).
   */
  receive(key: string, version: string, sent: Buffer, dayMs: number, bytes: number): Uint8Array {
    if (sent.length > bytes) {
      throw new Error(`${key} holds ${sent.length} bytes, more than the ${bytes} of its layout`);
    }
    // a copy in any case: the reply parser reuses its buffers
    const bits = new Uint8Array(bytes);
    bits.set(sent);
    this.counts.fetches++;
    this.counts.fetchedBytes += sent.length;
    const old = this.copies.get(key);
    const freed = old ? old.bits.byteLength : 0;
    if (
      dayMs >= this.latestDayMs - (this.days - 1) * DAY_MS &&
      this.cachedBytes - freed + bits.byteLength <= this.cacheBytes
    ) {
      this.copies.set(key, { version, bits, dayMs });
      this.cachedBytes += bits.byteLength - freed;
    } else if (old) {
      this.drop(key);
    }
    return bits;
  }

  /** Drops the copy of a day key (gone from Redis). */
  drop(key: string): void {
    const old = this.copies.get(key);
    if (!old) return;
    this.copies.delete(key);
    this.cachedBytes -= old.bits.byteLength;
  }

  /** On a new latest day (`todayMs`, the start of the day of a check's `nowMs`), drops the copies of days before its window. */
  evict(todayMs: number): void {
    if (todayMs <= this.latestDayMs) return;
    this.latestDayMs = todayMs;
    const oldest = todayMs - (this.days - 1) * DAY_MS;
    for (const [key, copy] of this.copies) if (copy.dayMs < oldest) this.drop(key);
  }

  /** What it holds and has done so far. */
  stats(): SeenCacheStats {
    return { days: this.copies.size, bytes: this.cachedBytes, ...this.counts };
  }

  /** Drops every copy (the counters stay). */
  clear(): void {
    this.copies.clear();
    this.cachedBytes = 0;
  }
}
