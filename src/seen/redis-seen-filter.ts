/**
 * The seen filter of note 1 on stock Redis: rolling daily Bloom filters as plain bitmaps.
 *
 * Layout: one bitmap per UTC day and seen-filter shard (`keys.seenDay`, e.g.
 * `fs:bf:{global-121}:20260306` with one shard, see `shardTag`) and beside it its version (`keys.seenDayVersion`, `…:20260306:v`); a
 * member is `{reader}:{item}` (note 1). A reader's `days` day keys and their versions share one hash
 * tag, so both scripts touch a single Cluster slot. Each bitmap is sized by the injected
 * {@link BloomGeometry} (m bits, k hashes), positions by Kirsch–Mitzenmacher double hashing of a
 * MurmurHash3 pair computed here, in the engine (src/seen/bloom.ts); the Lua side only walks the
 * positions, so it sets and tests exactly the bits of the memory adapter.
 *
 * Past days are cached in process (past-day-cache.ts): in steady state only today's bitmap is written,
 * so a check tests today in Lua and each past day against a local copy that the same script run
 * confirms current by its version (or replaces, sending the bitmap) — still ONE round trip, and no
 * answer ever comes from a copy Redis did not confirm, so answers equal those of the uncached check
 * (and of the memory adapter) bit for bit.
 *
 * Versions: `markSeen` bumps the day's version in the script that sets the bits, whenever a bit
 * changed — so a LATE write to a past day (a `nowMs` on an earlier day: a virtual-time replay, a
 * process whose clock lags) makes every other instance's next check fetch the day again, and no
 * duplicate slips through. A key's first version is a random integer (the engine draws it), so a day
 * that expired and was recreated never matches a copy of its former self; a bitmap written without
 * the adapter (no version key) reads as version '0' and is cached like any other.
 *
 * Round trips: `seen` is ONE `EVALSHA` (lua/seenCheck-1+2D.lua) for any batch, `markSeen` ONE `EVALSHA`
 * (lua/seenMark-4.lua) on the day's key and version; empty batches cost none.
 *
 * Checkpoints (with {@link RedisSeenFilterOptions.checkpoints}; seen-checkpointer.ts): the mark script
 * also appends the members that set a new bit to the day's journal, which a checkpoint writes to
 * PostgreSQL. The check script first reads the shard's epoch: missing (Redis lost the shard) → it
 * answers nothing, the shard's window is restored from PostgreSQL, and the check runs again; a day
 * key missing that this process knows to be checkpointed is restored the same way. A restored day
 * gets a fresh random version, so no cached copy of it matches. Time comes from the caller's
 * `nowMs` (virtual time works): the day keys are chosen from it and the marked key gets a RELATIVE
 * time to live ending at {@link seenDayEnd} of its day as computed from `nowMs` — no `EXPIREAT`, no
 * Redis `TIME`.
 */
import { randomInt } from 'node:crypto';
import { assertId } from '../kernel/ids.js';
import { dayStamp, startOfDay } from '../kernel/clock.js';
import { hasAllBits, hashPairs, packPairs, seenDayEnd, seenWindow, type BloomGeometry } from './bloom.js';
import type { SeenFilter } from '../kernel/seen-filter.js';
import type { Keys } from '../kernel/redis/keys.js';
import type { RedisClient } from '../kernel/redis/client.js';
import { LuaScriptError, LuaScripts } from '../kernel/redis/lua.js';
import { fail } from '../kernel/errors.js';
import type { RollingRestorer } from './seen-checkpointer.js';
import { DEFAULT_SEEN_CACHE_BYTES, PastDayCache, type SeenCacheStats } from './past-day-cache.js';

export { DEFAULT_SEEN_CACHE_BYTES, type SeenCacheStats } from './past-day-cache.js';

/** The scripts (./lua/): the check and the mark. */
export const SEEN_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), ['seenCheck-1+2D', 'seenMark-4']);

/** Restores a check may run before it answers (a shard lost again at once is a store in trouble). */
export const MAX_RESTORES = 3;

/** Options of {@link RedisSeenFilter}. */
export interface RedisSeenFilterOptions {
  /** Days in the window (D ≥ 1): today and the D − 1 days before; must equal `geometry.days`. */
  days: number;
  /**
   * Most bytes of past-day bitmaps this instance keeps (default 256 MiB; 0 = no cache: every day
   * is tested in Lua). A window needs (D − 1) × ⌈m/8⌉ per shard checked.
   */
  cacheBytes?: number;
  /**
   * The PostgreSQL checkpoints (seen-checkpointer.ts). With them, marks journal their new members and
   * checks answer only from a shard Redis has not lost; without them (tests, tools) a lost filter
   * is simply empty.
   */
  checkpoints?: RollingRestorer;
}

/** The hashes of one check's members (computed once, reused by a check run again after a restore). */
interface Probe {
  pairs: Uint32Array;
  /** g_0 = h1 mod m per member. */
  firsts: number[];
  /** The same, as the script's one argument. */
  firstList: string;
  packed: Buffer;
  n: number;
}

/** What one check run found. */
type CheckOutcome =
  | { kind: 'answers'; seen: Uint8Array }
  /** The shard's epoch is missing: Redis lost it. */
  | { kind: 'lost' }
  /** Day keys missing that this process knows to be checkpointed. */
  | { kind: 'missing'; days: string[] };

/**
 * {@link SeenFilter} over Redis bitmaps. Does not own the client: `close()` leaves it open for the
 * container that created it.
 */
export class RedisSeenFilter implements SeenFilter {
  private readonly days: number;
  /** Copies of past days' bitmaps (past-day-cache.ts). */
  private readonly cache: PastDayCache;
  private readonly lua;
  private readonly checkpoints: RollingRestorer | undefined;

  /**
   * @throws RangeError when `opts.days` is not an integer ≥ 1 or differs from `geometry.days` (the
   *   geometry's rate promise is for exactly that many filters), or `opts.cacheBytes` is negative.
   */
  constructor(
    redis: RedisClient,
    private readonly keys: Keys,
    private readonly geometry: BloomGeometry,
    opts: RedisSeenFilterOptions,
  ) {
    if (!Number.isInteger(opts.days) || opts.days < 1) throw new RangeError('days must be an integer >= 1');
    if (opts.days !== geometry.days) {
      throw new RangeError(`days (${opts.days}) differs from the geometry's days (${geometry.days})`);
    }
    const cacheBytes = opts.cacheBytes ?? DEFAULT_SEEN_CACHE_BYTES;
    if (!(cacheBytes >= 0)) throw new RangeError('cacheBytes must be >= 0');
    this.days = opts.days;
    this.cache = new PastDayCache(opts.days, Math.ceil(geometry.bits / 8), cacheBytes);
    this.lua = SEEN_SCRIPTS.on(redis);
    this.checkpoints = opts.checkpoints;
  }

  /**
   * One round trip whatever the batch size; duplicates in `itemIds` are checked once. With
   * checkpoints, a shard Redis lost (or a checkpointed day key found missing) is restored from
   * PostgreSQL first and checked again: no answer ever comes from a filter Redis lost.
   * @throws FreshetError `INVALID_ID` for a bad reader id; Redis errors propagate; with checkpoints,
   *   PostgreSQL errors of a restore propagate, and `STORE_UNAVAILABLE` when the shard is lost again
   *   on every one of {@link MAX_RESTORES} restores.
   */
  async seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]> {
    assertId(readerId, 'readerId');
    if (itemIds.length === 0) return [];
    this.cache.evict(startOfDay(nowMs));
    const { unique, slotOf } = dedupe(itemIds);
    const probe = this.probe(readerId, unique);
    for (let restores = 0; ; restores++) {
      const r = await this.checkOnce(readerId, nowMs, probe);
      if (r.kind === 'answers') {
        const out = new Array<boolean>(itemIds.length);
        for (let i = 0; i < itemIds.length; i++) out[i] = r.seen[slotOf[i]!] === 1;
        return out;
      }
      if (restores === MAX_RESTORES) {
        throw fail('STORE_UNAVAILABLE', 'Redis unavailable: the seen filters were lost again during their restore', {
          store: 'redis',
        });
      }
      const shard = this.keys.seenShard(readerId);
      if (r.kind === 'lost') await this.checkpoints!.restoreShard(shard, nowMs);
      else await this.checkpoints!.restoreDays(shard, r.days, nowMs);
    }
  }

  /** The members' hashes as the check sends and tests them. */
  private probe(readerId: string, unique: readonly string[]): Probe {
    const m = this.geometry.bits;
    const pairs = hashPairs(readerId, unique);
    const n = unique.length;
    const firsts = new Array<number>(n);
    let firstList = ''; // g_0 of every member, space-terminated: one argument (see lua/seenCheck-1+2D.lua)
    for (let j = 0; j < n; j++) {
      const g0 = pairs[2 * j]! % m;
      firsts[j] = g0;
      firstList += `${g0} `;
    }
    return { pairs, firsts, firstList, packed: packPairs(pairs), n };
  }

  /** One check script run: the answers, or what must be restored before answering. */
  private async checkOnce(readerId: string, nowMs: number, p: Probe): Promise<CheckOutcome> {
    const { bits: m, hashes: k } = this.geometry;
    const D = this.days;
    const window = seenWindow(nowMs, D);
    const stamps = window.map((ms) => dayStamp(ms));
    const dayKeys = stamps.map((day) => this.keys.seenDay(readerId, day));
    const versionKeys = stamps.map((day) => this.keys.seenDayVersion(readerId, day));
    const shard = this.keys.seenShard(readerId);
    const { held, asks, claimed } = this.cache.claim(dayKeys);

    let reply: unknown;
    // inCopy[d][j] = 1: member j is in the copy held of day d (counts only if Redis confirms the copy)
    const inCopy: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(D);
    try {
      const pending = this.lua.seenCheck.buffer(
        [this.keys.seenEpoch(shard), ...dayKeys, ...versionKeys],
        [m, k, p.packed, ...asks, p.firstList, this.checkpoints ? '1' : '0'],
      );
      // the request is on the wire: while Redis runs the script, test every member against the
      // copies held, one day at a time (one bitmap hot in the CPU cache)
      for (let d = 1; d < D; d++) {
        const copy = held[d];
        if (!copy) continue;
        const hits = new Uint8Array(p.n);
        for (let j = 0; j < p.n; j++)
          if (hasAllBits(copy.bits, m, k, p.firsts[j]!, p.pairs[2 * j + 1]! % m)) hits[j] = 1;
        inCopy[d] = hits;
      }
      reply = await pending;
    } finally {
      this.cache.release(claimed);
    }
    if (
      Array.isArray(reply) &&
      reply.length === 1 &&
      Buffer.isBuffer(reply[0]) &&
      reply[0].toString() === '?' &&
      this.checkpoints
    ) {
      return { kind: 'lost' };
    }
    if (!Array.isArray(reply) || reply.length !== 2 * D || !Buffer.isBuffer(reply[0]) || reply[0].length !== p.n) {
      throw SEEN_SCRIPTS.unexpected('seenCheck', reply);
    }

    // per past day: a copy Redis confirmed, a bitmap it just sent, tested in Lua, or gone
    const confirmed: Uint8Array[] = [];
    const sent: Uint8Array[] = [];
    const missing: string[] = [];
    if ((reply[2 * D - 1] as Buffer).toString() === '0') missing.push(stamps[0]!);
    for (let d = 1; d < D; d++) {
      const key = dayKeys[d]!;
      const status = (reply[2 * d - 1] as Buffer).toString('latin1');
      if (status === '=') {
        if (!held[d])
          throw new LuaScriptError(SEEN_SCRIPTS.script('seenCheck').id, `confirmed a copy of ${key} that was not sent`);
        confirmed.push(inCopy[d]!);
        this.cache.hit();
      } else if (status === '') {
        this.cache.drop(key);
        missing.push(stamps[d]!);
      } else if (status === '!') {
        this.cache.testedInLua();
      } else {
        sent.push(this.cache.receive(key, status, reply[2 * d] as Buffer, startOfDay(window[d]!)));
      }
    }
    const lostDays = this.checkpoints ? missing.filter((day) => this.checkpoints!.hasCheckpoint(shard, day)) : [];
    if (lostDays.length > 0) return { kind: 'missing', days: lostDays };
    return { kind: 'answers', seen: this.combine(reply[0] as Buffer, confirmed, sent, p) };
  }

  /** Each member's answer: today's and Lua-tested days' ('1'), confirmed copies, bitmaps just sent. */
  private combine(
    answers: Buffer,
    confirmed: readonly Uint8Array[],
    sent: readonly Uint8Array[],
    p: Probe,
  ): Uint8Array {
    const { bits: m, hashes: k } = this.geometry;
    const seen = new Uint8Array(p.n);
    let open: number[] = [];
    for (let j = 0; j < p.n; j++) {
      let hit = answers[j] === 49; // '1'
      for (let c = 0; !hit && c < confirmed.length; c++) hit = confirmed[c]![j] === 1;
      if (hit) seen[j] = 1;
      else open.push(j);
    }
    // bitmaps just received, day by day; a member seen on one day leaves
    for (const bitmap of sent) {
      if (open.length === 0) break;
      const still: number[] = [];
      for (const j of open) {
        if (hasAllBits(bitmap, m, k, p.firsts[j]!, p.pairs[2 * j + 1]! % m)) seen[j] = 1;
        else still.push(j);
      }
      open = still;
    }
    return seen;
  }

  /**
   * Adds the members to the bitmap of the day of `nowMs` (bumping its version when a bit changed)
   * and sets the time to live of both keys to seenDayEnd(now) − now ms, in one round trip.
   * @throws FreshetError `INVALID_ID` for a bad reader id; Redis errors propagate.
   */
  async markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    if (itemIds.length === 0) return;
    const { unique } = dedupe(itemIds);
    const day = dayStamp(nowMs);
    const shard = this.keys.seenShard(readerId);
    const packed = packPairs(hashPairs(readerId, unique));
    const keys = [
      this.keys.seenDay(readerId, day),
      this.keys.seenDayVersion(readerId, day),
      this.keys.seenDayJournal(shard, day),
      this.keys.seenJournalDays(shard),
    ];
    await this.lua.seenMark(keys, [
      this.geometry.bits,
      this.geometry.hashes,
      this.ttlMs(nowMs),
      packed,
      randomInt(1, 2 ** 48),
      this.checkpoints ? day : '',
    ]);
  }

  /** Relative time to live (ms) that `markSeen` gives the day's keys: seenDayEnd(now, days) − now (> 0). */
  ttlMs(nowMs: number): number {
    return seenDayEnd(nowMs, this.days) - nowMs;
  }

  /** What the past-day cache holds and has done so far. */
  cacheStats(): SeenCacheStats {
    return this.cache.stats();
  }

  /** Drops the cached bitmaps (the owner may call it; `close` does). */
  clearCache(): void {
    this.cache.clear();
  }

  /** Drops the cache; the client belongs to whoever created it. */
  async close(): Promise<void> {
    this.clearCache();
  }
}

/** Distinct ids in first-seen order, and for each input position the index of its id in `unique`. */
function dedupe(itemIds: readonly string[]): { unique: string[]; slotOf: number[] } {
  const index = new Map<string, number>();
  const unique: string[] = [];
  const slotOf = new Array<number>(itemIds.length);
  for (let i = 0; i < itemIds.length; i++) {
    const id = itemIds[i]!;
    let j = index.get(id);
    if (j === undefined) {
      j = unique.length;
      index.set(id, j);
      unique.push(id);
    }
    slotOf[i] = j;
  }
  return { unique, slotOf };
}
