/**
 * The seen filter of note 1 in process (the embedded default, and the executable spec the Redis
 * adapter is property-tested against).
 *
 * Same layout as Redis, bit for bit: one bitmap per UTC day and shard, named by the same
 * `Keys.seenDay` (with an empty prefix), same geometry, same MurmurHash3 pair and Kirsch–Mitzenmacher
 * positions (src/seen/bloom.ts), and Redis's bit order (bit 0 = most significant bit of byte 0),
 * so a bitmap here equals the Redis string of the same day. Bitmaps are allocated on the first mark.
 *
 * Time is the caller's `nowMs` (virtual time works): a day's bitmap dies once
 * now ≥ {@link seenDayEnd} (start of its day + days · 24 h) and is dropped at the next call.
 * {@link MemorySeenFilter.snapshot} / {@link MemorySeenFilter.restore} keep the bitmaps across restarts.
 */
import { open, readFile, rename } from 'node:fs/promises';
import { assertId } from '../kernel/ids.js';
import { dayStamp } from '../kernel/clock.js';
import { hasAllBits, hashPairs, seenDayEnd, seenWindow, setAllBits, type BloomGeometry } from './bloom.js';
import type { SeenFilter } from '../kernel/seen-filter.js';
import { Keys } from '../kernel/redis/keys.js';

/** Options of {@link MemorySeenFilter}. */
export interface MemorySeenFilterOptions {
  /** Days in the window (D ≥ 1); must equal `geometry.days`. */
  days: number;
  /** Seen-filter shards, as `FRESHET_SEEN_SHARDS` (default 1); only matters to mirror Redis exactly. */
  shards?: number;
}

/** One day's bitmap and when it dies (epoch ms). */
interface Day {
  bitmap: Uint8Array;
  expiresAt: number;
}

const MAGIC = 0x46535346; // "FSSF"
const VERSION = 1;
const HEADER_BYTES = 4 + 4 + 8 + 4 + 4 + 4 + 4;

/** {@link SeenFilter} over in-process bitmaps (`Uint8Array`, ⌈m/8⌉ bytes per live day and shard). */
export class MemorySeenFilter implements SeenFilter {
  private readonly days: number;
  private readonly keys: Keys;
  private readonly filters = new Map<string, Day>();
  private nextExpiry = Infinity;

  /** @throws RangeError when `days` is not an integer ≥ 1 or differs from `geometry.days`. */
  constructor(
    private readonly geometry: BloomGeometry,
    opts: MemorySeenFilterOptions,
  ) {
    if (!Number.isInteger(opts.days) || opts.days < 1) throw new RangeError('days must be an integer >= 1');
    if (opts.days !== geometry.days) {
      throw new RangeError(`days (${opts.days}) differs from the geometry's days (${geometry.days})`);
    }
    this.days = opts.days;
    this.keys = new Keys('', opts.shards ?? 1);
  }

  /** @throws FreshetError `INVALID_ID` for a bad reader id. */
  async seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]> {
    assertId(readerId, 'readerId');
    this.expire(nowMs);
    const live: Uint8Array[] = [];
    for (const ms of seenWindow(nowMs, this.days)) {
      const day = this.filters.get(this.keys.seenDay(readerId, dayStamp(ms)));
      if (day) live.push(day.bitmap);
    }
    const { bits: m, hashes: k } = this.geometry;
    const out = new Array<boolean>(itemIds.length).fill(false);
    if (live.length === 0) return out;
    const pairs = hashPairs(readerId, itemIds);
    for (let n = 0; n < itemIds.length; n++) {
      const first = pairs[2 * n]! % m;
      const step = pairs[2 * n + 1]! % m;
      for (const bitmap of live) {
        if (hasAllBits(bitmap, m, k, first, step)) {
          out[n] = true;
          break;
        }
      }
    }
    return out;
  }

  /** @throws FreshetError `INVALID_ID` for a bad reader id. */
  async markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    this.expire(nowMs);
    if (itemIds.length === 0) return;
    const key = this.keys.seenDay(readerId, dayStamp(nowMs));
    let day = this.filters.get(key);
    if (!day) {
      day = { bitmap: new Uint8Array(Math.ceil(this.geometry.bits / 8)), expiresAt: seenDayEnd(nowMs, this.days) };
      this.filters.set(key, day);
      this.nextExpiry = Math.min(this.nextExpiry, day.expiresAt);
    }
    const { bits: m, hashes: k } = this.geometry;
    const bitmap = day.bitmap;
    const pairs = hashPairs(readerId, itemIds);
    for (let n = 0; n < itemIds.length; n++) setAllBits(bitmap, m, k, pairs[2 * n]! % m, pairs[2 * n + 1]! % m);
  }

  /** Live day bitmaps (key as Redis would name it without prefix → bitmap, expiry): for tests and tools. */
  dayFilters(): ReadonlyMap<string, { readonly bitmap: Uint8Array; readonly expiresAt: number }> {
    return this.filters;
  }

  /**
   * Writes every bitmap to `path` (via `path.tmp` and a rename, so a crash leaves the old file).
   * Format (little-endian): "FSSF" magic u32, version u32, bits f64, hashes u32, days u32, shards u32,
   * count u32; then per day: key length u16, key UTF-8, expiresAt f64 (epoch ms), byte length u32, bitmap.
   */
  async snapshot(path: string): Promise<void> {
    const tmp = `${path}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      const head = Buffer.alloc(HEADER_BYTES);
      head.writeUInt32LE(MAGIC, 0);
      head.writeUInt32LE(VERSION, 4);
      head.writeDoubleLE(this.geometry.bits, 8);
      head.writeUInt32LE(this.geometry.hashes, 16);
      head.writeUInt32LE(this.days, 20);
      head.writeUInt32LE(this.keys.seenShards, 24);
      head.writeUInt32LE(this.filters.size, 28);
      await fh.write(head);
      for (const [key, day] of this.filters) {
        const name = Buffer.from(key, 'utf8');
        const entry = Buffer.alloc(2 + name.length + 8 + 4);
        entry.writeUInt16LE(name.length, 0);
        name.copy(entry, 2);
        entry.writeDoubleLE(day.expiresAt, 2 + name.length);
        entry.writeUInt32LE(day.bitmap.byteLength, 10 + name.length);
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
   * A filter holding the bitmaps of a {@link snapshot} file. A missing file gives an empty filter; a
   * file written with another geometry, window or shard count (or an unreadable one) is skipped
   * (empty filter, `onSkip` told why): its bits would answer for other positions.
   */
  static async restore(
    path: string,
    geometry: BloomGeometry,
    opts: MemorySeenFilterOptions & { onSkip?: (reason: string) => void },
  ): Promise<MemorySeenFilter> {
    const filter = new MemorySeenFilter(geometry, opts);
    let buf: Buffer;
    try {
      buf = await readFile(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') opts.onSkip?.(`unreadable: ${(err as Error).message}`);
      return filter;
    }
    const skip = (reason: string) => {
      opts.onSkip?.(`${path}: ${reason}`);
      return new MemorySeenFilter(geometry, opts);
    };
    if (buf.length < HEADER_BYTES || buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== VERSION) {
      return skip('not a seen-filter snapshot');
    }
    const [bits, hashes, days, shards] = [
      buf.readDoubleLE(8),
      buf.readUInt32LE(16),
      buf.readUInt32LE(20),
      buf.readUInt32LE(24),
    ];
    if (bits !== geometry.bits || hashes !== geometry.hashes || days !== opts.days || shards !== (opts.shards ?? 1)) {
      return skip(`geometry mismatch (file: ${bits} bits, ${hashes} hashes, ${days} days, ${shards} shards)`);
    }
    const bytes = Math.ceil(geometry.bits / 8);
    let at = HEADER_BYTES;
    try {
      for (let n = buf.readUInt32LE(28); n > 0; n--) {
        const nameLen = buf.readUInt16LE(at);
        const key = buf.toString('utf8', at + 2, at + 2 + nameLen);
        at += 2 + nameLen;
        const expiresAt = buf.readDoubleLE(at);
        const len = buf.readUInt32LE(at + 8);
        at += 12;
        if (len !== bytes || at + len > buf.length) return skip('truncated or corrupt');
        filter.filters.set(key, { bitmap: new Uint8Array(buf.subarray(at, at + len)), expiresAt });
        filter.nextExpiry = Math.min(filter.nextExpiry, expiresAt);
        at += len;
      }
    } catch {
      return skip('truncated or corrupt');
    }
    return filter;
  }

  /** Nothing to release (the owner calls {@link snapshot} first when it wants the bits kept). */
  async close(): Promise<void> {}

  /** Drops every day whose window has passed at `nowMs`. */
  private expire(nowMs: number): void {
    if (nowMs < this.nextExpiry) return;
    this.nextExpiry = Infinity;
    for (const [key, day] of this.filters) {
      if (nowMs >= day.expiresAt) this.filters.delete(key);
      else this.nextExpiry = Math.min(this.nextExpiry, day.expiresAt);
    }
  }
}
