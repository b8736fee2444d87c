/**
 * The seen filter of note 1 on stock Redis: rolling daily Bloom filters as plain bitmaps.
 *
 * Layout: one bitmap per UTC day and seen-filter shard (`keys.seenDay`, e.g.
 * `fs:bf:{global}:20260306`); a member is `{reader}:{item}` (note 1). A reader's `days` day keys
 * share one hash tag, so both scripts touch a single Cluster slot. Each bitmap is sized by the
 * injected {@link BloomGeometry} (m bits, k hashes), positions by Kirsch–Mitzenmacher double hashing
 * of a MurmurHash3 pair computed here, in the engine (src/domain/bloom.ts); the Lua side only walks
 * the positions, so it sets and tests exactly the bits of the memory adapter.
 *
 * Round trips: `seen` is ONE `EVALSHA` (seenCheck-D) for any batch, `markSeen` ONE `EVALSHA`
 * (seenMark-1) on today's key; empty batches cost none. Time comes from the caller's `nowMs`
 * (virtual time works): the day keys are chosen from it and today's key gets a RELATIVE time to live
 * ending at {@link seenDayEnd} of today as computed from `nowMs` — no `EXPIREAT`, no Redis `TIME`.
 */
import { assertId } from '../../domain/ids.js';
import { dayStamp } from '../../domain/clock.js';
import { hashPairs, seenDayEnd, seenWindow, type BloomGeometry } from '../../domain/bloom.js';
import type { SeenFilter } from '../../ports/seen-filter.js';
import type { Keys } from './keys.js';
import { runScript, type RedisClient } from './client.js';
import { seenCheck, seenMark } from './scripts/seen.js';

/** Options of {@link RedisSeenFilter}. */
export interface RedisSeenFilterOptions {
  /** Days in the window (D ≥ 1): today and the D − 1 days before; must equal `geometry.days`. */
  days: number;
}

/**
 * {@link SeenFilter} over Redis bitmaps. Does not own the client: `close()` leaves it open for the
 * container that created it.
 */
export class RedisSeenFilter implements SeenFilter {
  private readonly days: number;

  /**
   * @throws RangeError when `opts.days` is not an integer ≥ 1 or differs from `geometry.days` (the
   *   geometry's rate promise is for exactly that many filters).
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly geometry: BloomGeometry,
    opts: RedisSeenFilterOptions,
  ) {
    if (!Number.isInteger(opts.days) || opts.days < 1) throw new RangeError('days must be an integer >= 1');
    if (opts.days !== geometry.days) {
      throw new RangeError(`days (${opts.days}) differs from the geometry's days (${geometry.days})`);
    }
    this.days = opts.days;
  }

  /**
   * One round trip whatever the batch size; duplicates in `itemIds` are checked once.
   * @throws FreshetError `INVALID_ID` for a bad reader id; Redis errors propagate.
   */
  async seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]> {
    assertId(readerId, 'readerId');
    if (itemIds.length === 0) return [];
    const { unique, slotOf } = dedupe(itemIds);
    const keys = seenWindow(nowMs, this.days).map((ms) => this.keys.seenDay(readerId, dayStamp(ms)));
    const firsts: number[] = [];
    const packed = packPairs(readerId, unique, this.geometry.bits, firsts);
    const reply = (await runScript(this.redis, seenCheck, keys, [
      this.geometry.bits,
      this.geometry.hashes,
      packed,
      ...firsts,
    ])) as string;
    if (typeof reply !== 'string' || reply.length !== unique.length) {
      throw new Error(`seenCheck returned ${typeof reply} of length ${String((reply as { length?: number }).length)}`);
    }
    const out = new Array<boolean>(itemIds.length);
    for (let i = 0; i < itemIds.length; i++) out[i] = reply.charCodeAt(slotOf[i]!) === 49; // '1'
    return out;
  }

  /**
   * Adds the members to today's bitmap (the day of `nowMs`) and sets its time to live to
   * seenDayEnd(now) − now ms, in one round trip.
   * @throws FreshetError `INVALID_ID` for a bad reader id; Redis errors propagate.
   */
  async markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    if (itemIds.length === 0) return;
    const { unique } = dedupe(itemIds);
    const key = this.keys.seenDay(readerId, dayStamp(nowMs));
    await runScript(this.redis, seenMark, [key], [
      this.geometry.bits,
      this.geometry.hashes,
      this.ttlMs(nowMs),
      packPairs(readerId, unique),
    ]);
  }

  /** Relative time to live (ms) that `markSeen` gives today's key: seenDayEnd(now, days) − now (> 0). */
  ttlMs(nowMs: number): number {
    return seenDayEnd(nowMs, this.days) - nowMs;
  }

  /** Nothing to release: the client belongs to whoever created it. */
  async close(): Promise<void> {}
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

/**
 * The members' MurmurHash3 pairs as 8 bytes each: h1, h2 little-endian uint32 (what the scripts
 * unpack). With `bits` and `firsts`, also appends each member's first position h1 mod m to `firsts`.
 */
function packPairs(readerId: string, itemIds: readonly string[], bits?: number, firsts?: number[]): Buffer {
  const pairs = hashPairs(readerId, itemIds);
  const buf = Buffer.allocUnsafe(4 * pairs.length);
  for (let i = 0; i < pairs.length; i += 2) {
    buf.writeUInt32LE(pairs[i]!, 4 * i);
    buf.writeUInt32LE(pairs[i + 1]!, 4 * i + 4);
    if (firsts) firsts.push(pairs[i]! % bits!);
  }
  return buf;
}
