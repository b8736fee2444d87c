/**
 * Folding checkpoints (postgres-seen-checkpoints.ts) back into filters, bit for bit as Redis held them:
 * - a rolling day: the base bitmap OR the k bits of every journalled member (order is irrelevant; a
 *   journal holds exactly the members that set a new bit, so the result is the day's bitmap as of the
 *   checkpoint — seenMark-4.lua);
 * - a reader's scalable filter: the base, then every journalled member replayed IN ORDER through the
 *   in-process adapter (memory-reader-seen-filter.ts: a member present is skipped, a full sub-filter
 *   opens the next), at the activity time of its row — so a gap of the TTL between two rows starts
 *   the filter again, exactly as Redis forgot it (a dead filter's rows are never resurrected).
 * Subject names live here too: the geometry is part of each, so nothing checkpointed under another
 * configuration is ever folded into this one.
 */
import { setAllBits, unpackPairs, type BloomGeometry } from './bloom.js';
import { MemoryReaderSeenFilter, type SavedReaderFilter } from './memory-reader-seen-filter.js';
import type { ReaderSeenSettings } from '../kernel/reader-seen-filter.js';
import { geometrySignature } from './scalable-bloom.js';
import type { FoldedBase, SubjectCheckpoint } from './postgres-seen-checkpoints.js';

/** Subject of one rolling day filter of one shard: `d:m<bits>k<hashes>s<shards>:<shard>:<YYYYMMDD>`. */
export function daySubject(g: BloomGeometry, shards: number, shard: number, day: string): string {
  return `d:m${g.bits}k${g.hashes}s${shards}:${shard}:${day}`;
}

/** Subject of a reader's scalable filter: `r:<geometry signature>:<reader>`. */
export function readerSubject(s: ReaderSeenSettings, readerId: string): string {
  return `r:${geometrySignature(s.initialCapacity, s.errorRate)}:${readerId}`;
}

/** The day's bitmap (⌈m/8⌉ bytes) from its base and journalled members. */
export function foldDay(g: BloomGeometry, c: SubjectCheckpoint): Uint8Array {
  const { bits: m, hashes: k } = g;
  const bitmap = new Uint8Array(Math.ceil(m / 8));
  if (c.base) bitmap.set(c.base.bitmap.subarray(0, bitmap.length));
  for (const row of c.log) {
    const pairs = unpackPairs(row.pairs);
    for (let i = 0; i < pairs.length; i += 2) setAllBits(bitmap, m, k, pairs[i]! % m, pairs[i + 1]! % m);
  }
  return bitmap;
}

/** A day's fold as a compaction stores it. */
export function foldDayBase(g: BloomGeometry, c: SubjectCheckpoint): FoldedBase {
  return { bitmap: foldDay(g, c), state: '' };
}

/**
 * The reader's filter from its base and journalled members, or undefined when nothing usable is
 * checkpointed (a base of another shape is skipped, as a snapshot's would be).
 * `lastActive` is the latest activity folded; the caller decides whether it is still live.
 */
export function foldReader(
  s: ReaderSeenSettings,
  readerId: string,
  c: SubjectCheckpoint,
): SavedReaderFilter | undefined {
  const f = new MemoryReaderSeenFilter(s);
  const base = c.base && parseReaderState(c.base.state);
  if (c.base && base)
    f.load(readerId, { bitmap: new Uint8Array(c.base.bitmap), counts: base.counts, lastActive: base.lastActive });
  for (const row of c.log) f.markPairs(readerId, unpackPairs(row.pairs), row.atMs);
  return f.saved(readerId);
}

/** A reader's fold as a compaction stores it (state `t|counts`). */
export function foldReaderBase(s: ReaderSeenSettings, readerId: string, c: SubjectCheckpoint): FoldedBase {
  const saved = foldReader(s, readerId, c);
  if (!saved) return { bitmap: new Uint8Array(0), state: '' };
  return { bitmap: saved.bitmap, state: `${saved.lastActive}|${saved.counts.join(',')}` };
}

/** `t|c0,c1,…` → its parts, or null when malformed. */
function parseReaderState(state: string): { lastActive: number; counts: number[] } | null {
  const m = /^(\d+)\|(\d+(?:,\d+)*)$/.exec(state);
  if (!m) return null;
  return { lastActive: Number(m[1]), counts: m[2]!.split(',').map(Number) };
}
