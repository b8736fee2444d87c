/**
 * The rolling seen filter (docs/for-you.md) in process (the embedded default, and the executable spec the Redis
 * adapter is property-tested against).
 *
 * Same layout as Redis, bit for bit: each day has a layout (layout.ts: N shard bitmaps of one
 * geometry), given by the first mark of the day and kept, one bitmap per day and shard named by the
 * same keys (`Keys.seenDays(…).day` with an empty prefix), same MurmurHash3 pair and
 * Kirsch–Mitzenmacher positions (src/seen/bloom.ts), and Redis's bit order (bit 0 = most significant
 * bit of byte 0), so a bitmap here equals the Redis string of the same day and shard. Bitmaps are
 * allocated on the first mark of their shard.
 *
 * Time is the caller's `nowMs` (virtual time works): a day's bitmap dies once
 * now ≥ {@link seenDayEnd} (start of its day + days · 24 h) and is dropped at the next call.
 * {@link MemorySeenFilter.snapshot} / {@link MemorySeenFilter.restore} keep the bitmaps across restarts.
 */
import { open, readFile, rename } from 'node:fs/promises';
import { assertId } from '../kernel/ids.js';
import { dayStamp } from '../kernel/clock.js';
import {
  dayStartMs,
  fillRate,
  hasAllBits,
  hashPairs,
  isoDay,
  popCount,
  seenDayEnd,
  seenWindow,
  setAllBits,
  unionRate,
  type BloomGeometry,
} from './bloom.js';
import type { SeenFilter, SeenProbe } from '../kernel/seen-filter.js';
import { Keys, shardOf } from '../kernel/redis/keys.js';
import { fixedLayout, parseLayout, shardKeys, type SeenLayout } from './layout.js';
import { dayFill, popcount, type DayFill } from './day-fill.js';

/** Options of {@link MemorySeenFilter}. */
export interface MemorySeenFilterOptions {
  /** Days in the window (D ≥ 1); must equal the layout's `geometry.days`. */
  days: number;
}

/** One day's bitmap of one shard, its layout, and when it dies (epoch ms). */
interface Day {
  bitmap: Uint8Array;
  expiresAt: number;
  layout: SeenLayout;
}

const MAGIC = 0x46535346; // "FSSF"
/** The snapshot's format: a layout per entry (format 1, one geometry for the file, was never released). */
const VERSION = 2;

/** {@link SeenFilter} over in-process bitmaps (`Uint8Array`, ⌈m/8⌉ bytes per live day and shard). */
export class MemorySeenFilter implements SeenFilter {
  private readonly days: number;
  private readonly keys = new Keys('');
  private readonly filters = new Map<string, Day>();
  /** The layout of each day marked (`YYYYMMDD` → layout). */
  private readonly dayLayouts = new Map<string, SeenLayout>();
  private nextExpiry = Infinity;

  /**
   * @param layout the layout of days not marked yet.
   * @throws RangeError when `days` is not an integer ≥ 1 or differs from the layout's days.
   */
  constructor(
    private readonly layout: SeenLayout,
    opts: MemorySeenFilterOptions,
  ) {
    if (!Number.isInteger(opts.days) || opts.days < 1) throw new RangeError('days must be an integer >= 1');
    if (opts.days !== layout.geometry.days) {
      throw new RangeError(`days (${opts.days}) differs from the geometry's days (${layout.geometry.days})`);
    }
    this.days = opts.days;
  }

  /** @throws FreshetError `INVALID_ID` for a bad reader id. */
  async seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]> {
    assertId(readerId, 'readerId');
    this.expire(nowMs);
    const live: { bitmap: Uint8Array; g: BloomGeometry }[] = [];
    for (const ms of seenWindow(nowMs, this.days)) {
      const day = dayStamp(ms);
      const layout = this.dayLayouts.get(day);
      if (!layout) continue;
      const d = this.filters.get(this.keyOf(layout, readerId, day));
      if (d) live.push({ bitmap: d.bitmap, g: d.layout.geometry });
    }
    const out = new Array<boolean>(itemIds.length).fill(false);
    if (live.length === 0) return out;
    const pairs = hashPairs(readerId, itemIds);
    for (let n = 0; n < itemIds.length; n++) {
      for (const { bitmap, g } of live) {
        const m = g.bits;
        if (hasAllBits(bitmap, m, g.hashes, pairs[2 * n]! % m, pairs[2 * n + 1]! % m)) {
          out[n] = true;
          break;
        }
      }
    }
    return out;
  }

  /**
   * Read-only ({@link SeenFilter.probe}): per member, the newest day whose bitmap holds it, and that
   * bitmap's rate from its fill; expired days are not dropped here.
   * @throws FreshetError `INVALID_ID` for a bad reader id.
   */
  async probe(readerId: string, itemIds: readonly string[], nowMs: number): Promise<SeenProbe[]> {
    assertId(readerId, 'readerId');
    const days: { day: string; bitmap: Uint8Array; g: BloomGeometry; fpr: number }[] = [];
    for (const ms of seenWindow(nowMs, this.days)) {
      const day = dayStamp(ms);
      const layout = this.dayLayouts.get(day);
      if (!layout) continue;
      const d = this.filters.get(this.keyOf(layout, readerId, day));
      if (!d || nowMs >= d.expiresAt) continue;
      const g = layout.geometry;
      days.push({ day: isoDay(day), bitmap: d.bitmap, g, fpr: fillRate(popCount(d.bitmap), g.bits, g.hashes) });
    }
    const window = unionRate(days.map((d) => d.fpr));
    const pairs = hashPairs(readerId, itemIds);
    return itemIds.map((_, n) => {
      const hit = days.find(({ bitmap, g }) =>
        hasAllBits(bitmap, g.bits, g.hashes, pairs[2 * n]! % g.bits, pairs[2 * n + 1]! % g.bits),
      );
      return hit
        ? { seen: true, day: hit.day, subFilter: null, fpr: hit.fpr }
        : { seen: false, day: null, subFilter: null, fpr: window };
    });
  }

  /** @throws FreshetError `INVALID_ID` for a bad reader id. */
  async markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    this.expire(nowMs);
    if (itemIds.length === 0) return;
    const stamp = dayStamp(nowMs);
    let layout = this.dayLayouts.get(stamp);
    if (!layout) this.dayLayouts.set(stamp, (layout = this.layout));
    const key = this.keyOf(layout, readerId, stamp);
    let day = this.filters.get(key);
    if (!day) {
      const bitmap = new Uint8Array(Math.ceil(layout.geometry.bits / 8));
      day = { bitmap, expiresAt: seenDayEnd(nowMs, this.days), layout };
      this.filters.set(key, day);
      this.nextExpiry = Math.min(this.nextExpiry, day.expiresAt);
    }
    const { bits: m, hashes: k } = layout.geometry;
    const pairs = hashPairs(readerId, itemIds);
    for (let n = 0; n < itemIds.length; n++) setAllBits(day.bitmap, m, k, pairs[2 * n]! % m, pairs[2 * n + 1]! % m);
  }

  /** The key of the bitmap a mark of `readerId` at `nowMs` writes (Redis's name without prefix; tests and tools). */
  dayKey(readerId: string, nowMs: number): string {
    const stamp = dayStamp(nowMs);
    return this.keyOf(this.dayLayouts.get(stamp) ?? this.layout, readerId, stamp);
  }

  /** Live day bitmaps (key as Redis would name it without prefix → bitmap, expiry): for tests and tools. */
  dayFilters(): ReadonlyMap<string, { readonly bitmap: Uint8Array; readonly expiresAt: number }> {
    return this.filters;
  }

  /** How full the bitmaps of the day of `nowMs` are (src/seen/day-fill.ts); a day not marked yet is empty. */
  async dayFill(nowMs: number): Promise<DayFill> {
    this.expire(nowMs);
    const stamp = dayStamp(nowMs);
    const layout = this.dayLayouts.get(stamp) ?? this.layout;
    const set: number[] = [];
    for (let shard = 0; shard < layout.shards; shard++) {
      const day = this.filters.get(shardKeys(this.keys, layout, shard).day(stamp));
      set.push(day ? popcount(day.bitmap) : 0);
    }
    return dayFill(set, layout.geometry.bits, layout.geometry.hashes);
  }

  /**
   * Writes every bitmap to `path` (via `path.tmp` and a rename, so a crash leaves the old file).
   * Format 2 (little-endian): "FSSF" magic u32, version u32 = 2, days u32, count u32; then per day and
   * shard: layout id length u16 + UTF-8, shards u32, bits
   * f64, hashes u32, key length u16 + UTF-8, expiresAt f64 (epoch ms), byte length u32, bitmap.
   */
  async snapshot(path: string): Promise<void> {
    const tmp = `${path}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      const head = Buffer.alloc(16);
      head.writeUInt32LE(MAGIC, 0);
      head.writeUInt32LE(VERSION, 4);
      head.writeUInt32LE(this.days, 8);
      head.writeUInt32LE(this.filters.size, 12);
      await fh.write(head);
      for (const [key, day] of this.filters) {
        const id = Buffer.from(day.layout.id, 'utf8');
        const name = Buffer.from(key, 'utf8');
        const entry = Buffer.alloc(2 + id.length + 4 + 8 + 4 + 2 + name.length + 8 + 4);
        let at = entry.writeUInt16LE(id.length, 0);
        at += id.copy(entry, at);
        at = entry.writeUInt32LE(day.layout.shards, at);
        at = entry.writeDoubleLE(day.layout.geometry.bits, at);
        at = entry.writeUInt32LE(day.layout.geometry.hashes, at);
        at = entry.writeUInt16LE(name.length, at);
        at += name.copy(entry, at);
        at = entry.writeDoubleLE(day.expiresAt, at);
        entry.writeUInt32LE(day.bitmap.byteLength, at);
        await fh.write(entry);
        await fh.write(day.bitmap);
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  }

  /**
   * A filter holding the bitmaps of a {@link snapshot} file, each day under its own layout; a missing
   * file gives an empty filter, an unreadable or corrupt one is skipped (empty filter, `onSkip` told why).
   */
  static async restore(
    path: string,
    layout: SeenLayout,
    opts: MemorySeenFilterOptions,
    onSkip?: (reason: string) => void,
  ): Promise<MemorySeenFilter> {
    let buf: Buffer;
    try {
      buf = await readFile(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onSkip?.(`unreadable: ${(err as Error).message}`);
      return new MemorySeenFilter(layout, opts);
    }
    try {
      const filter = new MemorySeenFilter(layout, opts);
      if (buf.length < 16 || buf.readUInt32LE(0) !== MAGIC) throw new Error('not a seen-filter snapshot');
      const version = buf.readUInt32LE(4);
      if (version === VERSION) filter.loadV2(buf);
      else throw new Error(`snapshot format ${version} is not one this version reads`);
      return filter;
    } catch (err) {
      onSkip?.(`${path}: ${(err as Error).message}`);
      return new MemorySeenFilter(layout, opts);
    }
  }

  /** Nothing to release (the owner calls {@link snapshot} first when it wants the bits kept). */
  async close(): Promise<void> {}

  /** The key of the reader's shard of a day under a layout (Redis's name, no prefix). */
  private keyOf(layout: SeenLayout, readerId: string, day: string): string {
    return shardKeys(this.keys, layout, shardOf(readerId, layout.shards)).day(day);
  }

  private put(key: string, day: Day): void {
    this.filters.set(key, day);
    this.nextExpiry = Math.min(this.nextExpiry, day.expiresAt);
  }

  /** Format 2: a layout per entry. */
  private loadV2(buf: Buffer): void {
    const g = this.layout.geometry;
    let at = 16;
    for (let n = buf.readUInt32LE(12); n > 0; n--) {
      const idLen = buf.readUInt16LE(at);
      const id = buf.toString('utf8', at + 2, at + 2 + idLen);
      at += 2 + idLen;
      const [shards, bits, hashes] = [buf.readUInt32LE(at), buf.readDoubleLE(at + 4), buf.readUInt32LE(at + 12)];
      const nameLen = buf.readUInt16LE(at + 16);
      const key = buf.toString('utf8', at + 18, at + 18 + nameLen);
      at += 18 + nameLen;
      const expiresAt = buf.readDoubleLE(at);
      const len = buf.readUInt32LE(at + 8);
      at += 12;
      if (len !== Math.ceil(bits / 8) || at + len > buf.length) throw new Error('truncated or corrupt');
      const layout = parseLayout(id, g.windowRate, g.days) ?? fixedLayout({ ...g, bits, hashes }, shards);
      this.dayLayouts.set(key.slice(-8), layout);
      this.put(key, { bitmap: new Uint8Array(buf.subarray(at, at + len)), expiresAt, layout });
      at += len;
    }
  }

  /** Drops every day whose window has passed at `nowMs`. */
  private expire(nowMs: number): void {
    if (nowMs < this.nextExpiry) return;
    this.nextExpiry = Infinity;
    for (const [key, day] of this.filters) {
      if (nowMs >= day.expiresAt) this.filters.delete(key);
      else this.nextExpiry = Math.min(this.nextExpiry, day.expiresAt);
    }
    for (const stamp of this.dayLayouts.keys()) {
      if (nowMs >= seenDayEnd(dayStartMs(stamp), this.days)) this.dayLayouts.delete(stamp);
    }
  }
}
