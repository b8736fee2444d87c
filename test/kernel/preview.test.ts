/**
 * The one safe preview of client values in messages (src/kernel/preview.ts, issue 21.1): it never
 * throws and never recurses without bound, whatever it is handed — because it runs while an error is
 * being answered, where a throw becomes a 500 outside the envelope.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { kindOf, preview } from '../../src/kernel/preview.js';

describe('preview: a client value in a message', () => {
  it('shows plain values as JSON, cut to the budget', () => {
    expect(preview('refresh')).toBe('"refresh"');
    expect(preview(20)).toBe('20');
    expect(preview(null)).toBe('null');
    expect(preview(undefined)).toBe('nothing');
    expect(preview({ a: [1, 'x'] })).toBe('{"a":[1,"x"]}');
    expect(preview(Number.NaN)).toBe('NaN');
    expect(preview(10n)).toBe('10n');
    expect(preview('x'.repeat(500))).toHaveLength(60);
    expect(preview('x'.repeat(500)).endsWith('…')).toBe(true);
  });

  it('survives what JSON.stringify and String() do not: deep nesting, no prototype, throwing methods, cycles, proxies', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(preview(deep)).toBe('[[[[…]]]]');
    const bare = Object.create(null) as Record<string, unknown>;
    bare.k = 1;
    expect(() => String(bare)).toThrow(TypeError);
    expect(preview(bare)).toBe('{"k":1}');
    const hostile = {
      toString() {
        throw new Error('no');
      },
      toJSON() {
        throw new Error('no');
      },
      get boom() {
        throw new Error('no');
      },
    };
    expect(preview(hostile)).toBe('an object');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(preview(cycle)).toBe('{"self":{"self":{"self":{…}}}}');
    const trap = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('trap');
        },
      },
    );
    expect(preview(trap)).toBe('an object');
    expect(kindOf(trap)).toBe('an object');
  });

  it('never throws and stays within its budget for any value (200 generated values)', () => {
    fc.assert(
      fc.property(
        fc.anything({ maxDepth: 6, withBigInt: true, withNullPrototype: true, withMap: true }),
        fc.integer({ min: 2, max: 120 }),
        (v, max) => {
          const s = preview(v, max);
          return typeof s === 'string' && s.length <= max;
        },
      ),
      { numRuns: 200, seed: 21 },
    );
  });
});
