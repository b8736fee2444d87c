/**
 * Folding checkpoints (postgres-seen-checkpoints.ts) back into filters, bit for bit as Redis held them:
 * - a rolling day: the base bitmap OR the k bits of every journalled member (order is irrelevant; a
 *   journal holds exactly the members that set a new bit, so the result is the day's bitmap as of the
 *   checkpoint — lua/seenMark-4.lua);
 * - a reader's scalable filter: the base, then every journalled member replayed IN ORDER through the
 *   in-process adapter (memory-reader-seen-filter.ts: a member present is skipped, a full sub-filter
 *   opens the next), at the activity time of its row — so a gap of the TTL between two rows starts
 *   the filter again, exactly as Redis forgot it (a dead filter's rows are never resurrected).
 * Subject names live here and in layout.ts (days): the geometry is part of each, so a subject is
 * always folded under the geometry it was written with.
 */
import { setAllBits, unpackPairs, type BloomGeometry } from './bloom.js';
import { MemoryReaderSeenFilter, type SavedReaderFilter } from './memory-reader-seen-filter.js';
import type { ReaderSeenSettings } from '../kernel/reader-seen-filter.js';
import type { FoldedBase, SubjectCheckpoint } from './postgres-seen-checkpoints.js';

/** Subject of a reader's scalable filter of one geometry: `r:<geometry signature>:<reader>`. */
export function readerSubject(signature: string, readerId: string): string {
  return `r:${signature}:${readerId}`;
}

/** The signature and reader of a reader subject (ids hold no ':'), or null for another subject. */
export function parseReaderSubject(subject: string): { signature: string; readerId: string } | null {
  if (!subject.startsWith('r:')) return null;
  const at = subject.lastIndexOf(':');
  if (at <= 2) return null;
  return { signature: subject.slice(2, at), readerId: subject.slice(at + 1) };
}

/** m and k of a day subject (`d:n…c…m<m>k<k>:…`), or null. */
export function daySubjectGeometry(subject: string): { bits: number; hashes: number } | null {
  const m = /^d:n\d+c\d+m(\d+)k(\d+):\d+:\d{8}$/.exec(subject);
  return m ? { bits: Number(m[1]), hashes: Number(m[2]) } : null;
}

/** The day's bitmap (⌈m/8⌉ bytes) from its base and journalled members. */
export function foldDay(g: Pick<BloomGeometry, 'bits' | 'hashes'>, c: SubjectCheckpoint): Uint8Array {
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
export function foldDayBase(g: Pick<BloomGeometry, 'bits' | 'hashes'>, c: SubjectCheckpoint): FoldedBase {
  return { bitmap: foldDay(g, c), state: '' };
}

/**
 * The reader's filter of geometry `signature` from its base and journalled members, or undefined when
 * nothing usable is checkpointed (a base that does not fit the geometry is skipped, as a snapshot's
 * would be). `lastActive` is the latest activity folded; the caller decides whether it is still live.
 */
export function foldReader(
  s: ReaderSeenSettings,
  signature: string,
  readerId: string,
  c: SubjectCheckpoint,
): SavedReaderFilter | undefined {
  const f = new MemoryReaderSeenFilter(s, signature);
  const base = c.base && parseReaderState(c.base.state);
  if (c.base && base)
    f.load(readerId, {
      bitmap: new Uint8Array(c.base.bitmap),
      counts: base.counts,
      lastActive: base.lastActive,
      signature,
    });
  for (const row of c.log) f.markPairs(readerId, unpackPairs(row.pairs), row.atMs);
  return f.saved(readerId);
}

/** A reader's fold as a compaction stores it (state `t|counts`). */
export function foldReaderBase(
  s: ReaderSeenSettings,
  signature: string,
  readerId: string,
  c: SubjectCheckpoint,
): FoldedBase {
  const saved = foldReader(s, signature, readerId, c);
  if (!saved) return { bitmap: new Uint8Array(0), state: '' };
  return { bitmap: saved.bitmap, state: `${saved.lastActive}|${saved.counts.join(',')}` };
}

/** `t|c0,c1,…` → its parts, or null when malformed. */
function parseReaderState(state: string): { lastActive: number; counts: number[] } | null {
  const m = /^(\d+)\|(\d+(?:,\d+)*)$/.exec(state);
  if (!m) return null;
  return { lastActive: Number(m[1]), counts: m[2]!.split(',').map(Number) };
}
