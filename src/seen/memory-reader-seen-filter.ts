/**
 * The per-reader scalable seen filter of the discover design in process (the embedded default, and the executable
 * spec the Redis adapter is tested against).
 *
 * Same bits as Redis: one bitmap per reader holding every open sub-filter at its offset
 * (src/seen/scalable-bloom.ts; Redis holds each sub-filter in a string of its own, with the same
 * bytes), Redis's bit order (bit 0 = most significant bit of byte 0), each sub-filter's bytes
 * allocated whole when it opens. Each filter keeps the geometry (signature) it was started with: a
 * filter restored from a snapshot or a checkpoint of another geometry (written under other settings)
 * is read and marked under its own until it is gone; new filters take the settings'. Time is the caller's `nowMs`: a filter whose last activity is `ttlMs` or more in the
 * past is gone (dropped at the next touch, or by a sweep every {@link SWEEP_EVERY} marks).
 * {@link MemoryReaderSeenFilter.snapshot} / {@link MemoryReaderSeenFilter.restore} keep the filters
 * across restarts (reader-seen-snapshot.ts).
 */
import { assertId } from '../kernel/ids.js';
import { hasAllBits, hashPairs } from './bloom.js';
import {
  bitmapBytes,
  compoundRate,
  parseSignature,
  probeOf,
  scalableGeometry,
  type ScalableGeometry,
} from './scalable-bloom.js';
import { readReaderSeenSnapshot, writeReaderSeenSnapshot } from './reader-seen-snapshot.js';
import type { ReaderFilterState, ReaderSeenFilter, ReaderSeenSettings } from '../kernel/reader-seen-filter.js';
import type { SeenProbe } from '../kernel/seen-filter.js';

/** Marks between two sweeps of expired readers. */
export const SWEEP_EVERY = 1024;

/** A reader's filter as a snapshot or a checkpoint keeps it. */
export interface SavedReaderFilter {
  /** Every open sub-filter, concatenated at their offsets (zero-filled to the end of the newest). */
  bitmap: Uint8Array;
  /** Members per open sub-filter (≥ 1 entry). */
  counts: number[];
  /** Virtual ms of the last activity. */
  lastActive: number;
  /** The geometry it was written with (`geometrySignature`). */
  signature: string;
}

/** One reader's filter. */
interface Filter {
  /** Its geometry. */
  g: ScalableGeometry;
  /** The bitmap; bytes at and past `length` are zero. */
  buf: Uint8Array;
  /** Logical length in bytes. */
  length: number;
  /** Members per open sub-filter (length = sub-filters open, ≥ 1). */
  counts: number[];
  /** Virtual ms of the last activity. */
  lastActive: number;
}

/** {@link ReaderSeenFilter} over in-process bitmaps. */
export class MemoryReaderSeenFilter implements ReaderSeenFilter {
  /** The geometry of filters started here. */
  private readonly g: ScalableGeometry;
  private readonly filters = new Map<string, Filter>();
  private marks = 0;

  /**
   * @param signature the geometry of filters started here (default: the settings'); a fold of a
   *   checkpoint written under another one passes it (seen-fold.ts).
   * @throws RangeError for an invalid capacity, rate, TTL or signature.
   */
  constructor(
    private readonly settings: ReaderSeenSettings,
    signature?: string,
  ) {
    if (!(settings.ttlMs > 0)) throw new RangeError('ttlMs must be > 0');
    const g = signature ? parseSignature(signature) : scalableGeometry(settings.initialCapacity, settings.errorRate);
    if (!g) throw new RangeError(`not a reader seen-filter signature: ${signature}`);
    this.g = g;
  }

  async seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]> {
    assertId(readerId, 'reader id');
    if (itemIds.length === 0) return [];
    const f = this.live(readerId, nowMs);
    if (!f) return itemIds.map(() => false);
    f.lastActive = Math.max(f.lastActive, nowMs);
    const pairs = hashPairs(readerId, itemIds);
    return itemIds.map((_, i) => has(f, pairs[2 * i]!, pairs[2 * i + 1]!));
  }

  async markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void> {
    assertId(readerId, 'reader id');
    if (itemIds.length === 0) return;
    this.markPairs(readerId, hashPairs(readerId, itemIds), nowMs);
  }

  /**
   * {@link markSeen} of members given by their hash pairs ([h1, h2, …], {@link hashPairs}): how a
   * checkpointed journal is replayed (src/seen/seen-fold.ts). A filter idle for the TTL at
   * `nowMs` starts again empty (under this instance's geometry), exactly as a mark at that time would.
   */
  markPairs(readerId: string, pairs: Uint32Array, nowMs: number): void {
    if (++this.marks % SWEEP_EVERY === 0) this.sweep(nowMs);
    let f = this.live(readerId, nowMs);
    if (!f) {
      const bytes = bitmapBytes(this.g.levels, 1);
      f = { g: this.g, buf: new Uint8Array(bytes), length: bytes, counts: [0], lastActive: nowMs };
      this.filters.set(readerId, f);
    }
    f.lastActive = Math.max(f.lastActive, nowMs);
    for (let i = 0; i < pairs.length; i += 2) {
      const h1 = pairs[i]!;
      const h2 = pairs[i + 1]!;
      if (has(f, h1, h2)) continue;
      add(f, h1, h2);
    }
  }

  /**
   * Puts a reader's saved filter (a snapshot entry or a checkpoint base), under its own geometry.
   * @returns false (nothing put) when its signature is not one this version reads, or its bitmap
   *   does not fit its counts under that geometry.
   */
  load(readerId: string, saved: SavedReaderFilter): boolean {
    const g = parseSignature(saved.signature);
    if (!g) return false;
    if (saved.counts.length < 1 || saved.counts.length > g.levels.length) return false;
    if (saved.bitmap.length !== bitmapBytes(g.levels, saved.counts.length)) return false;
    this.filters.set(readerId, {
      g,
      buf: saved.bitmap,
      length: saved.bitmap.length,
      counts: [...saved.counts],
      lastActive: saved.lastActive,
    });
    return true;
  }

  /** The reader's filter as saved (not a copy of the bitmap), or undefined when it has none. */
  saved(readerId: string): SavedReaderFilter | undefined {
    const f = this.filters.get(readerId);
    return f && { bitmap: f.buf, counts: [...f.counts], lastActive: f.lastActive, signature: f.g.signature };
  }

  /**
   * Read-only (`SeenFilter.probe`): per member, the newest sub-filter holding it and its rate from its
   * member count; the TTL is not refreshed and an expired filter is left for the next touch.
   */
  async probe(readerId: string, itemIds: readonly string[], nowMs: number): Promise<SeenProbe[]> {
    assertId(readerId, 'reader id');
    const f = this.filters.get(readerId);
    if (!f || nowMs - f.lastActive >= this.settings.ttlMs)
      return itemIds.map(() => ({ seen: false, day: null, subFilter: null, fpr: 0 }));
    const pairs = hashPairs(readerId, itemIds);
    return itemIds.map((_, n) => probeOf(f.g, f.counts, holder(f, pairs[2 * n]!, pairs[2 * n + 1]!)));
  }

  async describe(readerId: string, nowMs: number): Promise<ReaderFilterState> {
    assertId(readerId, 'reader id');
    const f = this.live(readerId, nowMs);
    if (!f) return { filters: [], members: 0, bytes: 0, lastActiveMs: null, expectedRate: 0, signature: null };
    return {
      filters: f.counts.map((members, i) => {
        const g = f.g.levels[i]!;
        return { bits: g.bits, hashes: g.hashes, capacity: g.capacity, rate: g.rate, members };
      }),
      members: f.counts.reduce((a, b) => a + b, 0),
      bytes: f.length,
      lastActiveMs: f.lastActive,
      expectedRate: compoundRate(f.g.levels, f.counts),
      signature: f.g.signature,
    };
  }

  async forget(readerId: string): Promise<void> {
    this.filters.delete(assertId(readerId, 'reader id'));
  }

  /** The reader's bitmap, its sub-filters concatenated (for tests and tools; not a copy). */
  bitmapOf(readerId: string): Uint8Array | undefined {
    return this.filters.get(readerId)?.buf;
  }

  /** Readers with a filter in memory (live or not yet swept). */
  get size(): number {
    return this.filters.size;
  }

  /** Nothing to release (the owner calls {@link snapshot} first when it wants the bits kept). */
  async close(): Promise<void> {}

  /** Writes every filter to `path` (see reader-seen-snapshot.ts for the format). */
  snapshot(path: string): Promise<void> {
    const all = [...this.filters].map(([readerId, f]) => ({
      readerId,
      lastActive: f.lastActive,
      counts: f.counts,
      bitmap: f.buf,
      signature: f.g.signature,
    }));
    return writeReaderSeenSnapshot(path, all);
  }

  /**
   * A filter holding the readers of a {@link snapshot} file, each under the geometry it was saved with;
   * a missing file gives an empty filter, a corrupt one is skipped (empty filter, `onSkip` told why).
   */
  static async restore(
    path: string,
    settings: ReaderSeenSettings,
    onSkip?: (reason: string) => void,
  ): Promise<MemoryReaderSeenFilter> {
    const filter = new MemoryReaderSeenFilter(settings);
    const saved = await readReaderSeenSnapshot(path, onSkip);
    for (const s of saved ?? []) {
      if (!filter.load(s.readerId, s)) onSkip?.(`${path}: reader ${s.readerId} does not fit its geometry`);
    }
    return filter;
  }

  /** The reader's filter if it is live at `nowMs`; an expired one is dropped. */
  private live(readerId: string, nowMs: number): Filter | undefined {
    const f = this.filters.get(readerId);
    if (f && nowMs - f.lastActive >= this.settings.ttlMs) {
      this.filters.delete(readerId);
      return undefined;
    }
    return f;
  }

  private sweep(nowMs: number): void {
    for (const [reader, f] of this.filters) {
      if (nowMs - f.lastActive >= this.settings.ttlMs) this.filters.delete(reader);
    }
  }
}

/** Whether any open sub-filter has all the member's bits (the newest first, as the Redis script tests them). */
function has(f: Filter, h1: number, h2: number): boolean {
  return holder(f, h1, h2) !== null;
}

/** The newest open sub-filter holding all the member's bits, or null. */
function holder(f: Filter, h1: number, h2: number): number | null {
  for (let i = f.counts.length - 1; i >= 0; i--) {
    const g = f.g.levels[i]!;
    const at = g.offset >>> 3;
    if (at >= f.length) continue; // holds no bit yet
    if (hasAllBits(f.buf.subarray(at, f.length), g.bits, g.hashes, h1 % g.bits, h2 % g.bits)) return i;
  }
  return null;
}

/** Adds the member to the newest sub-filter; opens the next one when it is full. */
function add(f: Filter, h1: number, h2: number): void {
  const top = f.counts.length - 1;
  const g = f.g.levels[top]!;
  const step = h2 % g.bits;
  let p = h1 % g.bits;
  for (let j = 0; j < g.hashes; j++) {
    const bit = g.offset + p;
    f.buf[bit >>> 3]! |= 0x80 >>> (bit & 7);
    p += step;
    if (p >= g.bits) p -= g.bits;
  }
  f.counts[top]! += 1;
  // past the last level that fits, the last one keeps filling (see the port)
  if (f.counts[top]! >= g.capacity && top + 1 < f.g.levels.length) {
    f.counts.push(0);
    const next = new Uint8Array(bitmapBytes(f.g.levels, f.counts.length));
    next.set(f.buf);
    f.buf = next;
    f.length = next.length;
  }
}
