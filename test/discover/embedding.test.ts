/**
 * The discover feed's pure embedding code (src/discover/embedding.ts): the built-in text embedder is
 * deterministic, L2-normalized, of the requested dimension, and puts texts sharing words closer than
 * unrelated ones; int8 codes keep cosine; the reader embedding's decayed mean.
 */
import { describe, expect, it } from 'vitest';
import { cosine, decayedMean, embedText, normalize, quantize, words } from '../../src/discover/embedding.js';

const norm = (v: ArrayLike<number>) => Math.sqrt(Array.from(v).reduce((s, x) => s + x * x, 0));

describe('embedText', () => {
  const rust = {
    title: 'Rust compiler speeds up incremental builds',
    tags: ['rust'],
    text: 'The Rust compiler team made incremental builds faster.',
  };

  it('is deterministic', () => {
    expect(Array.from(embedText(rust, 256))).toEqual(Array.from(embedText({ ...rust }, 256)));
  });

  it('respects the dimension and is L2-normalized', () => {
    for (const dim of [8, 64, 256, 384]) {
      const v = embedText(rust, dim);
      expect(v).toHaveLength(dim);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
  });

  it('puts texts that share words closer than unrelated ones', () => {
    const similar = embedText({ title: 'Incremental builds in the Rust compiler', text: 'rust compiler builds' }, 256);
    const unrelated = embedText({ title: 'Sourdough bread recipe with rye flour', text: 'bake the loaf slowly' }, 256);
    const v = embedText(rust, 256);
    expect(cosine(v, similar)).toBeGreaterThan(0.4);
    expect(cosine(v, similar)).toBeGreaterThan(cosine(v, unrelated) + 0.3);
  });

  it('gives all zeros when no word is left (stop words, punctuation)', () => {
    expect(Array.from(embedText({ title: 'the and of — !!' }, 16)).every((x) => x === 0)).toBe(true);
    expect(words('Ask HN: The café’s Ünïcode')).toEqual(['cafe', 'unicode']);
  });
});

describe('storage and similarity', () => {
  it('int8 codes keep the cosine within 1e-2 and normalize keeps direction', () => {
    const a = embedText({ title: 'PostgreSQL query planner statistics' }, 256);
    const b = embedText({ title: 'PostgreSQL planner and its statistics' }, 256);
    expect(Math.abs(cosine(quantize(a), quantize(b)) - cosine(a, b))).toBeLessThan(1e-2);
    expect(cosine(normalize([3, 4]), [0.6, 0.8])).toBeCloseTo(1, 6);
    expect(cosine([0, 0], [1, 0])).toBe(0);
  });
});

describe('decayedMean', () => {
  const HOUR = 3_600_000;
  it('weighs recent signals more (half-life), ignores future ones, null when empty', () => {
    const x = [1, 0, 0, 0];
    const y = [0, 1, 0, 0];
    const m = decayedMean(
      [
        { vector: x, atMs: 0, weight: 1 },
        { vector: y, atMs: 10 * HOUR, weight: 1 },
      ],
      10 * HOUR,
      10 * HOUR,
      4,
    )!;
    expect(m[1]! / m[0]!).toBeCloseTo(2, 5); // x is one half-life old
    expect(norm(m)).toBeCloseTo(1, 5);
    expect(decayedMean([{ vector: x, atMs: 11 * HOUR, weight: 1 }], 10 * HOUR, HOUR, 4)).toBeNull();
    expect(decayedMean([], 0, HOUR, 4)).toBeNull();
  });
});
