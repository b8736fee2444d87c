/** The following timeline's pure rules: tids exact below 2^53, cursor parsing, the merge of sources. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_TIME_MS } from '../../src/kernel/time-range.js';
import {
  MAX_TID,
  MAX_TID_MS,
  TID_HEADROOM,
  TID_PER_MS,
  mergeSlices,
  msOfTid,
  nextMaxId,
  nextTids,
  parseTid,
  tidOfMs,
  type SourceSlice,
} from '../../src/following/domain.js';

describe('tids', () => {
  it('encode ms in the upper 42 bits and stay exact doubles', () => {
    const ms = Date.UTC(2026, 2, 6);
    expect(tidOfMs(ms)).toBe(ms * 2048);
    expect(msOfTid(tidOfMs(ms) + 2047)).toBe(ms);
    expect(tidOfMs(MAX_TID_MS) + TID_PER_MS - 1).toBe(MAX_TID);
    expect(() => tidOfMs(MAX_TID_MS + 1)).toThrow(RangeError);
  });

  it('nextTids never goes back and never collides', () => {
    expect(nextTids(0, 1000, 3)).toBe(1000 * 2048);
    expect(nextTids(1000 * 2048 + 5, 1000, 1)).toBe(1000 * 2048 + 6); // clock behind the counter
    expect(() => nextTids(MAX_TID - 1, 0, 2)).toThrow(RangeError);
  });

  it('cannot be exhausted within the accepted time range: a publish at 2100-01-01 leaves ~6 × 10^14 tids', () => {
    expect(TID_HEADROOM).toBe(MAX_TID - MAX_TIME_MS * TID_PER_MS);
    expect(TID_HEADROOM).toBeGreaterThan(6e14); // 19 years at a million publishes a second
    // a million publishes of 1,000 items each at the upper bound, then one more: still room
    const last = nextTids(0, MAX_TIME_MS, 1) + 1e9;
    expect(nextTids(last, MAX_TIME_MS, 1000)).toBe(last + 1);
    // a time past the range (a caller that skipped the edge) is clamped to it, never thrown on or run off the end
    expect(nextTids(0, MAX_TID_MS, 1)).toBe(MAX_TIME_MS * TID_PER_MS);
    expect(nextTids(0, 1e15, 1)).toBe(MAX_TIME_MS * TID_PER_MS);
    expect(nextTids(0, -5, 1)).toBe(1);
    expect(() => nextTids(0, Number.NaN, 1)).toThrow(RangeError);
  });

  it('parses cursors strictly', () => {
    expect(parseTid('9007199254740991')).toBe(MAX_TID);
    for (const bad of ['9007199254740992', '-1', '1e5', '', ' 1', '12345678901234567', 12])
      expect(parseTid(bad)).toBeNull();
  });

  it('nextMaxId is the last tid of a full page only', () => {
    expect(nextMaxId([9, 8], 2)).toBe(8);
    expect(nextMaxId([9], 2)).toBeNull();
    expect(nextMaxId([], 2)).toBeNull();
  });
});

describe('mergeSlices', () => {
  it('cuts at the horizon of a full source and drops what is at or below the highest floor', () => {
    const a: SourceSlice = { tids: [100, 90, 80], asked: 3, floor: 0 };
    const b: SourceSlice = { tids: [95, 70], asked: 3, floor: 60 };
    expect(mergeSlices([a, b], 0)).toEqual({ tids: [100, 95, 90, 80], floor: 60, exhausted: false });
    expect(mergeSlices([{ ...a, asked: 4 }, b], 75)).toEqual({ tids: [100, 95, 90, 80], floor: 60, exhausted: true });
    expect(mergeSlices([{ tids: [50, 40], asked: 2, floor: 45 }], 0)).toEqual({
      tids: [50],
      floor: 45,
      exhausted: true,
    });
  });

  it('rounds of merges reproduce the exact union, newest first, without repeats (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(fc.integer({ min: 1, max: 500 }), { maxLength: 40 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 7 }),
        (sources, count) => {
          const sorted = sources.map((s) => [...s].sort((x, y) => y - x));
          const expected = [...new Set(sorted.flat())].sort((x, y) => y - x);
          const got: number[] = [];
          let hi = Infinity;
          for (let guard = 0; guard < 1000; guard++) {
            const slices = sorted.map((s) => ({
              tids: s.filter((t) => t < hi).slice(0, count),
              asked: count,
              floor: 0,
            }));
            const round = mergeSlices(slices, 0);
            got.push(...round.tids);
            if (round.exhausted) break;
            hi = round.tids[round.tids.length - 1]!;
          }
          expect(got).toEqual(expected);
        },
      ),
    );
  });
});
