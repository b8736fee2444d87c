/**
 * The rolling seen filter (docs/for-you.md) on stock Redis: rolling daily Bloom filters as plain bitmaps.
 *
 * Layout: each UTC day is split into the shards its layout names (layout.ts; the layout is the day's
 * for good, day-layouts.ts): one bitmap per day and shard, `fs:bf:{<tag>}:20260306`
 * (`Keys.seenDays(shards, shard).day`), and beside it its version (`…:20260306:v`); a member is
 * `{reader}:{item}` (docs/for-you.md), a reader's shard is MurmurHash3(reader) mod the layout's shards. A
 * reader's day keys of one layout share one hash tag, so each script touches a single Cluster slot.
 * Each bitmap is sized by its layout's {@link BloomGeometry} (m bits, k hashes), positions by
 * Kirsch–Mitzenmacher double hashing of a MurmurHash3 pair computed here, in the engine
 * (src/seen/bloom.ts); the Lua side only walks the positions, so it sets and tests exactly the bits
 * of the memory adapter.
 *
 * A check reads, for each day of the window, the reader's shard of the day's layout, grouped by shard:
 * ONE script per group, all sent at once. In steady state every day of the window has one layout: one
 * script, one round trip; after a layout change, one more for 7 days.
 *
 * Past days are cached in process (past-day-cache.ts): in steady state only today's bitmap is written,
 * so a check tests today in Lua and each past day against a local copy that the same script run
 * confirms current by its version (or replaces, sending the bitmap) — no answer ever comes from a copy
 * Redis did not confirm, so answers equal those of the uncached check (and of the memory adapter) bit
 * for bit.
 *
 * Versions: `markSeen` bumps the day's version in the script that sets the bits, whenever a bit
 * changed — so a LATE write to a past day (a `nowMs` on an earlier day: a virtual-time replay, a
 * process whose clock lags) makes every other instance's next check fetch the day again, and no
 * duplicate slips through. A key's first version is a random integer (the engine draws it), so a day
 * that expired and was recreated never matches a copy of its former self; a bitmap written without
 * the adapter (no version key) reads as version '0' and is cached like any other.
 *
 * Round trips: `seen` is ONE `EVALSHA` (lua/seenCheck-1+2D.lua) per group, `markSeen` ONE `EVALSHA`
 * (lua/seenMark-4.lua) on the day's key and version (it creates a missing bitmap with SETRANGE, at
 * most 1 MiB: no stall); empty batches cost none; a day this process meets for the first time costs
 * one more (its layout, day-layouts.ts), once.
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
import {
  dayStartMs,
  fillRate,
  hasAllBits,
  hashPairs,
  isoDay,
  packPairs,
  seenDayEnd,
  seenWindow,
  unionRate,
  type BloomGeometry,
} from './bloom.js';
import type { SeenFilter, SeenProbe } from '../kernel/seen-filter.js';
import { shardOf, type Keys, type SeenShardKeys } from '../kernel/redis/keys.js';
import type { RedisClient } from '../kernel/redis/client.js';
import { LuaScriptError, LuaScripts } from '../kernel/redis/lua.js';
import { fail } from '../kernel/errors.js';
import type { RollingRestorer } from './seen-checkpointer.js';
import { DEFAULT_SEEN_CACHE_BYTES, PastDayCache, type SeenCacheStats } from './past-day-cache.js';
import { DayLayouts, type DayReads } from './day-layouts.js';
import { dayFill, type DayFill } from './day-fill.js';
import { daySubject, shardKeys, type SeenLayout } from './layout.js';

export { DEFAULT_SEEN_CACHE_BYTES, type SeenCacheStats } from './past-day-cache.js';

/** The scripts (./lua/): the check and the mark. */
export const SEEN_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), [
  'seenCheck-1+2D',
  'seenMark-4',
  'seenProbe-D',
]);

/** Restores a check may run before it answers (a shard lost again at once is a store in trouble). */
export const MAX_RESTORES = 3;

/** Options of {@link RedisSeenFilter}. */
export interface RedisSeenFilterOptions {
  /** Days in the window (D ≥ 1): today and the D − 1 days before; must equal the layout's `geometry.days`. */
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
  /** The days' layouts, shared with the checkpoints (default: the checkpoints', else this filter's own, from `layout`). */
  dayLayouts?: DayLayouts;
}

/** The shard of the rolling filters whose keys a check or a restore touches. */
export interface ShardRef {
  /** The layout (its shard count names the keys' hash tag). */
  layout: SeenLayout;
  shard: number;
}

/** The days of a window one script reads: one shard of one layout. */
interface Group extends ShardRef {
  keys: SeenShardKeys;
  /** Indices into the window (0 = today). */
  days: number[];
}

/** The hashes of one check's members (computed once, reused by every group and by a check run again after a restore). */
interface Probe {
  pairs: Uint32Array;
  packed: Buffer;
  n: number;
  /** Per bitmap size m: g_0 = h1 mod m per member, and the same as the script's one argument. */
  firsts: Map<number, { firsts: number[]; list: string }>;
}

/** What one group's script run found. */
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
  /** Which layout each day is read and written under. */
  readonly dayLayouts: DayLayouts;

  /**
   * @param layout the layout of days no process has touched yet (this process's settings).
   * @throws RangeError when `opts.days` is not an integer ≥ 1 or differs from the layout's days (the
   *   geometry's rate promise is for exactly that many filters), or `opts.cacheBytes` is negative.
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    layout: SeenLayout,
    opts: RedisSeenFilterOptions,
  ) {
    if (!Number.isInteger(opts.days) || opts.days < 1) throw new RangeError('days must be an integer >= 1');
    if (opts.days !== layout.geometry.days) {
      throw new RangeError(`days (${opts.days}) differs from the geometry's days (${layout.geometry.days})`);
    }
    const cacheBytes = opts.cacheBytes ?? DEFAULT_SEEN_CACHE_BYTES;
    if (!(cacheBytes >= 0)) throw new RangeError('cacheBytes must be >= 0');
    this.days = opts.days;
    this.cache = new PastDayCache(opts.days, cacheBytes);
    this.lua = SEEN_SCRIPTS.on(redis);
    this.checkpoints = opts.checkpoints;
    this.dayLayouts = opts.dayLayouts ?? opts.checkpoints?.dayLayouts ?? new DayLayouts(redis, keys, layout, opts.days);
    if (this.dayLayouts.configured.id !== layout.id) {
      throw new RangeError(`the day layouts give new days ${this.dayLayouts.configured.id}, not ${layout.id}`);
    }
  }

  /**
   * One round trip per shard and layout of the window (one in steady state), whatever the batch
   * size; duplicates in `itemIds` are checked once. With checkpoints, a shard Redis lost (or a
   * checkpointed day key found missing) is restored from PostgreSQL first and checked again: no
   * answer ever comes from a filter Redis lost.
   * @throws FreshetError `INVALID_ID` for a bad reader id; Redis errors propagate; with checkpoints,
   *   PostgreSQL errors of a restore propagate, and `STORE_UNAVAILABLE` when the shard is lost again
   *   on every one of {@link MAX_RESTORES} restores.
   */
  async seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]> {
    assertId(readerId, 'readerId');
    if (itemIds.length === 0) return [];
    this.cache.evict(startOfDay(nowMs));
    const { unique, slotOf } = dedupe(itemIds);
    const pairs = hashPairs(readerId, unique);
    const probe: Probe = { pairs, packed: packPairs(pairs), n: unique.length, firsts: new Map() };
    const stamps = seenWindow(nowMs, this.days).map(dayStamp);
    for (let restores = 0; ; restores++) {
      const groups = this.groups(readerId, await this.dayLayouts.forDays(stamps, nowMs));
      const outcomes = await Promise.all(groups.map((g) => this.checkGroup(g, stamps, probe)));
      if (outcomes.every((o) => o.kind === 'answers')) {
        const seen = new Uint8Array(probe.n);
        for (const o of outcomes) for (let j = 0; j < probe.n; j++) seen[j]! |= o.seen[j]!;
        const out = new Array<boolean>(itemIds.length);
        for (let i = 0; i < itemIds.length; i++) out[i] = seen[slotOf[i]!] === 1;
        return out;
      }
      if (restores === MAX_RESTORES) {
        throw fail('STORE_UNAVAILABLE', 'Redis unavailable: the seen filters were lost again during their restore', {
          store: 'redis',
        });
      }
      for (let i = 0; i < groups.length; i++) {
        const o = outcomes[i]!;
        if (o.kind === 'lost') await this.checkpoints!.restoreShard(groups[i]!, nowMs);
        else if (o.kind === 'missing') await this.checkpoints!.restoreDays(groups[i]!, o.days, nowMs);
      }
    }
  }

  /**
   * Read-only ({@link SeenFilter.probe}): one `seenProbe-D` per shard and layout of the window (one in
   * steady state) — which days hold each member, and each day's `BITCOUNT`. No copy of the past-day
   * cache is used or filled, and no restore is run (a shard Redis lost reads as empty).
   * @throws FreshetError `INVALID_ID` for a bad reader id; Redis errors propagate.
   */
  async probe(readerId: string, itemIds: readonly string[], nowMs: number): Promise<SeenProbe[]> {
    assertId(readerId, 'readerId');
    if (itemIds.length === 0) return [];
    const packed = packPairs(hashPairs(readerId, itemIds));
    const stamps = seenWindow(nowMs, this.days).map(dayStamp);
    const groups = this.groups(readerId, await this.dayLayouts.forDays(stamps, nowMs));
    // each existing day bitmap of the window (d: 0 = today): its rate, and which members it holds
    const found: { d: number; rate: number; held: string }[] = [];
    await Promise.all(
      groups.map(async (group) => {
        const { bits: m, hashes: k } = group.layout.geometry;
        const reply = await this.lua.seenProbe(
          group.days.map((d) => group.keys.day(stamps[d]!)),
          [m, k, packed],
        );
        if (!Array.isArray(reply) || reply.length !== 2 * group.days.length)
          throw SEEN_SCRIPTS.unexpected('seenProbe', reply);
        group.days.forEach((d, i) => {
          const count = Number(reply[2 * i]);
          if (count >= 0) found.push({ d, rate: fillRate(count, m, k), held: String(reply[2 * i + 1]) });
        });
      }),
    );
    found.sort((a, b) => a.d - b.d);
    const window = unionRate(found.map((f) => f.rate));
    return itemIds.map((_, j) => {
      const hit = found.find((f) => f.held[j] === '1');
      return hit
        ? { seen: true, day: isoDay(stamps[hit.d]!), subFilter: null, fpr: hit.rate }
        : { seen: false, day: null, subFilter: null, fpr: window };
    });
  }

  /** The reader's groups: per day, the reader's shard of the day's layout. */
  private groups(readerId: string, reads: readonly DayReads[]): Group[] {
    const byShard = new Map<string, Group>();
    const add = (layout: SeenLayout, d: number) => {
      const shard = shardOf(readerId, layout.shards);
      const id = `${layout.id}/${shard}`;
      let g = byShard.get(id);
      if (!g) byShard.set(id, (g = { layout, shard, keys: shardKeys(this.keys, layout, shard), days: [] }));
      g.days.push(d);
    };
    reads.forEach((r, d) => {
      if (r.write) add(r.write, d);
    });
    return [...byShard.values()];
  }

  /** g_0 of every member for a bitmap of m bits (once per m and check). */
  private firstsFor(p: Probe, m: number): { firsts: number[]; list: string } {
    let f = p.firsts.get(m);
    if (!f) {
      const firsts = new Array<number>(p.n);
      let list = ''; // g_0 of every member, space-terminated: one argument (see lua/seenCheck-1+2D.lua)
      for (let j = 0; j < p.n; j++) {
        const g0 = p.pairs[2 * j]! % m;
        firsts[j] = g0;
        list += `${g0} `;
      }
      p.firsts.set(m, (f = { firsts, list }));
    }
    return f;
  }

  /** One group's script run: the answers, or what must be restored before answering. */
  private async checkGroup(group: Group, stamps: readonly string[], p: Probe): Promise<CheckOutcome> {
    const { bits: m, hashes: k } = group.layout.geometry;
    const { firsts, list } = this.firstsFor(p, m);
    const days = group.days.map((d) => stamps[d]!);
    const dayKeys = days.map((day) => group.keys.day(day));
    const bytes = Math.ceil(m / 8);
    const { held, asks, claimed } = this.cache.claim(
      group.days.map((d, i) => ({ key: dayKeys[i]!, bytes, today: d === 0 })),
    );
    let reply: unknown;
    // inCopy[i][j] = 1: member j is in the copy held of day i (counts only if Redis confirms the copy)
    const inCopy: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(days.length);
    try {
      const pending = this.lua.seenCheck.buffer(
        [group.keys.epoch(), ...dayKeys, ...days.map((day) => group.keys.version(day))],
        [m, k, p.packed, ...asks, list, this.checkpoints ? '1' : '0'],
      );
      // the request is on the wire: while Redis runs the script, test every member against the
      // copies held, one day at a time (one bitmap hot in the CPU cache)
      for (let i = 0; i < days.length; i++) {
        const copy = held[i];
        if (!copy) continue;
        const hits = new Uint8Array(p.n);
        for (let j = 0; j < p.n; j++) if (hasAllBits(copy.bits, m, k, firsts[j]!, p.pairs[2 * j + 1]! % m)) hits[j] = 1;
        inCopy[i] = hits;
      }
      reply = await pending;
    } finally {
      this.cache.release(claimed);
    }
    if (isLost(reply) && this.checkpoints) return { kind: 'lost' };
    if (
      !Array.isArray(reply) ||
      reply.length !== 1 + 2 * days.length ||
      !Buffer.isBuffer(reply[0]) ||
      reply[0].length !== p.n
    ) {
      throw SEEN_SCRIPTS.unexpected('seenCheck', reply);
    }
    return this.outcome(group, days, dayKeys, reply as Buffer[], held, inCopy, p);
  }

  /** A group's reply read day by day: copies confirmed, bitmaps received, days missing. */
  private outcome(
    group: Group,
    days: readonly string[],
    dayKeys: readonly string[],
    reply: Buffer[],
    held: readonly ({ bits: Uint8Array } | undefined)[],
    inCopy: readonly (Uint8Array | undefined)[],
    p: Probe,
  ): CheckOutcome {
    const g = group.layout.geometry;
    const confirmed: Uint8Array[] = [];
    const sent: Uint8Array[] = [];
    const missing: string[] = [];
    for (let i = 0; i < days.length; i++) {
      const key = dayKeys[i]!;
      const status = reply[1 + 2 * i]!.toString('latin1');
      if (status === '=') {
        if (!held[i])
          throw new LuaScriptError(SEEN_SCRIPTS.script('seenCheck').id, `confirmed a copy of ${key} that was not sent`);
        confirmed.push(inCopy[i]!);
        this.cache.hit();
      } else if (status === '') {
        this.cache.drop(key);
        missing.push(days[i]!);
      } else if (status === '!') {
        if (group.days[i] !== 0) this.cache.testedInLua(); // a past day: no room, or fetched by another check
      } else {
        const bits = this.cache.receive(key, status, reply[2 + 2 * i]!, dayStartMs(days[i]!), Math.ceil(g.bits / 8));
        sent.push(bits);
      }
    }
    const lost = this.checkpoints
      ? missing.filter((day) => this.checkpoints!.hasCheckpoint(daySubject(group.layout, group.shard, day)))
      : [];
    if (lost.length > 0) return { kind: 'missing', days: lost };
    return { kind: 'answers', seen: this.combine(g, reply[0]!, confirmed, sent, p) };
  }

  /** Each member's answer: days tested in Lua ('1'), confirmed copies, bitmaps just sent. */
  private combine(
    g: BloomGeometry,
    answers: Buffer,
    confirmed: readonly Uint8Array[],
    sent: readonly Uint8Array[],
    p: Probe,
  ): Uint8Array {
    const { bits: m, hashes: k } = g;
    const { firsts } = this.firstsFor(p, m);
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
        if (hasAllBits(bitmap, m, k, firsts[j]!, p.pairs[2 * j + 1]! % m)) seen[j] = 1;
        else still.push(j);
      }
      open = still;
    }
    return seen;
  }

  /**
   * Adds the members to the reader's shard bitmap of the day of `nowMs`, under the day's layout
   * (bumping its version when a bit changed), and sets the time to live of both keys to
   * seenDayEnd(now) − now ms, in one round trip.
   * @throws FreshetError `INVALID_ID` for a bad reader id; Redis errors propagate.
   */
  async markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    if (itemIds.length === 0) return;
    const { unique } = dedupe(itemIds);
    const day = dayStamp(nowMs);
    const layout = await this.dayLayouts.layoutOf(day, nowMs);
    const sk = shardKeys(this.keys, layout, shardOf(readerId, layout.shards));
    const packed = packPairs(hashPairs(readerId, unique));
    await this.lua.seenMark(
      [sk.day(day), sk.version(day), sk.journal(day), sk.journalDays()],
      [
        layout.geometry.bits,
        layout.geometry.hashes,
        this.ttlMs(nowMs),
        packed,
        randomInt(1, 2 ** 48),
        this.checkpoints ? day : '',
      ],
    );
  }

  /**
   * The key of the bitmap a mark of `readerId` at `nowMs` writes (for tests and tools; records the
   * day's layout when no process did).
   */
  async dayKey(readerId: string, nowMs: number): Promise<string> {
    const day = dayStamp(nowMs);
    const layout = await this.dayLayouts.layoutOf(day, nowMs);
    return shardKeys(this.keys, layout, shardOf(readerId, layout.shards)).day(day);
  }

  /**
   * How full the shard bitmaps of the day of `nowMs` are (src/seen/day-fill.ts): one `BITCOUNT` per
   * shard (≤ 1 MiB each, a few µs of Redis time), at once; a shard not created yet counts as empty.
   * Records the day's layout when no process did (as the day's first mark would).
   * @throws FreshetError `STORE_UNAVAILABLE` when the layout cannot be read; Redis errors propagate.
   */
  async dayFill(nowMs: number): Promise<DayFill> {
    const day = dayStamp(nowMs);
    const layout = this.dayLayouts.knownLayout(day) ?? (await this.dayLayouts.layoutOf(day, nowMs));
    const set = await Promise.all(
      Array.from({ length: layout.shards }, (_, shard) =>
        this.redis.bitcount(shardKeys(this.keys, layout, shard).day(day)),
      ),
    );
    return dayFill(set, layout.geometry.bits, layout.geometry.hashes);
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

/** The reply of a guarded check whose shard Redis lost: `['?']`. */
function isLost(reply: unknown): boolean {
  return Array.isArray(reply) && reply.length === 1 && Buffer.isBuffer(reply[0]) && reply[0].toString() === '?';
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
