/**
 * Which seen-filter checkpoint subjects a checkpoint folds into their base now, and the folding
 * (seen-checkpointer.ts runs it after each append): past days with rows (once each, normally at the
 * first checkpoint after midnight), and every subject whose rows now outgrow its bitmap and
 * {@link MIN_COMPACT_BYTES} — so a compaction rewrites a base at most once per base's worth of journal,
 * the writes stay ≤ 2× the journal bytes, and a restore reads at most ~2 bitmaps a subject. Each subject
 * is folded under the geometry its name carries (a day's layout, a reader's signature: seen-fold.ts).
 */
import { dayStamp } from '../kernel/clock.js';
import type { ReaderSeenSettings } from '../kernel/reader-seen-filter.js';
import type { PostgresSeenCheckpoints, SubjectBytes } from './postgres-seen-checkpoints.js';
import { parseSignature } from './scalable-bloom.js';
import { daySubjectGeometry, foldDayBase, foldReaderBase, parseReaderSubject } from './seen-fold.js';

/**
 * Fewest bytes of rows a subject gathers before a compaction folds them into its base (besides a
 * past day's once): keeps light readers (a first sub-filter of 149 bytes) from a compaction at every
 * checkpoint, while a restore still reads at most this much beyond a base.
 */
export const MIN_COMPACT_BYTES = 4096;

/** What one checkpoint knows when it compacts. */
export interface CompactionInput {
  /** Bytes of rows and base of every subject the checkpoint appended to. */
  logBytes: Map<string, SubjectBytes>;
  /** Reader subjects the checkpoint took (only those are compacted: their reader is active). */
  readerOf: Map<string, string>;
  /** Subjects of the window's past days (every shard of their layouts). */
  past: readonly string[];
  /** Epoch ms of the checkpoint. */
  now: number;
}

/**
 * Compacts what is due. @returns how many subjects were folded.
 * @throws FreshetError `STORE_UNAVAILABLE` when PostgreSQL fails.
 */
export async function compactDue(
  store: PostgresSeenCheckpoints,
  reader: ReaderSeenSettings,
  input: CompactionInput,
): Promise<number> {
  const today = dayStamp(input.now);
  const due = new Set<string>(await store.withLog(input.past));
  for (const [subject, bytes] of input.logBytes) {
    const day = daySubjectGeometry(subject);
    if (day && subject.slice(-8) < today) due.add(subject);
    else if (bytes.log >= Math.max(bytes.base, MIN_COMPACT_BYTES, day ? Math.ceil(day.bits / 8) : 0)) due.add(subject);
  }
  let compacted = 0;
  for (const subject of due) {
    const day = daySubjectGeometry(subject);
    const r = parseReaderSubject(subject);
    if (!day && !(r && input.readerOf.has(subject) && parseSignature(r.signature))) continue;
    const folded = await store.compact(subject, (c) =>
      day ? foldDayBase(day, c) : foldReaderBase(reader, r!.signature, r!.readerId, c),
    );
    if (folded > 0) compacted++;
  }
  return compacted;
}
