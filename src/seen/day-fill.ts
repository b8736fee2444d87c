/**
 * How full today's filter of the for-you design's rolling window is, for `freshet_seen_filter_fill_ratio` and
 * `freshet_seen_filter_false_positive_rate` (src/observe/overview-metrics.ts): the bits set over the bits of
 * every shard bitmap of the day, and the false-positive rate a check against that day now has.
 *
 * Rate: a check of one reader reads one shard of the day, and answers "seen" for an item never shown
 * when all k of its bits are set: probability fill_s^k for a shard whose fraction of set bits is fill_s
 * (Broder & Mitzenmacher 2004, the fill-ratio form of (1 − e^(−kn/m))^k). The day's rate is the mean of
 * fill_s^k over its shards (readers are hashed evenly to shards). It is one day's rate; the window's
 * check (all D days) is 1 − Π(1 − rate_d), bounded by `FRESHET_SEEN_WINDOW_RATE` while each day holds at
 * most its capacity.
 */

/** Fill of one day's shard bitmaps. */
export interface DayFill {
  /** Bits set, all shards. */
  bitsSet: number;
  /** Bits of every shard bitmap of the day (shards × m; a shard not created yet counts as all zero). */
  bits: number;
  /** Estimated false-positive rate of a check against this day: the mean over shards of fill_s^k. */
  falsePositiveRate: number;
}

/** Bits set in each byte value (a popcount table). */
const POP = Uint8Array.from({ length: 256 }, (_, b) => {
  let n = 0;
  for (let x = b; x; x >>= 1) n += x & 1;
  return n;
});

/** Bits set in `bitmap`. */
export function popcount(bitmap: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < bitmap.length; i++) n += POP[bitmap[i]!]!;
  return n;
}

/**
 * The fill of a day from the bits set in each of its `shards.length` shards of `bitsPerShard` bits and
 * `hashes` (k) positions per member.
 */
export function dayFill(setPerShard: readonly number[], bitsPerShard: number, hashes: number): DayFill {
  const bitsSet = setPerShard.reduce((a, b) => a + b, 0);
  const rate =
    setPerShard.length === 0
      ? 0
      : setPerShard.reduce((a, s) => a + (s / bitsPerShard) ** hashes, 0) / setPerShard.length;
  return { bitsSet, bits: bitsPerShard * setPerShard.length, falsePositiveRate: rate };
}
