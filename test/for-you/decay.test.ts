/**
 * The for-you recall's Gaussian time decay is one formula written twice — `gaussDecay` in TypeScript
 * and `gaussDecaySql`, the expression the recall runs — so the two must give the same factor for
 * every age and setting: checked here on a grid, the SQL run through PGlite.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/kernel/clock.js';
import {
  GAUSS_MAX_EXPONENT,
  gaussDecay,
  gaussDecaySql,
  gaussExponentFactor,
  gaussHorizonMs,
  type GaussDecay,
} from '../../src/for-you/decay.js';
import { pglite } from '../support/contract.js';

const engine = pglite();
const NOW = Date.UTC(2016, 0, 15, 12);

const SETTINGS: GaussDecay[] = [
  { scaleMs: 48 * HOUR_MS, offsetMs: 6 * HOUR_MS, decay: 0.5 }, // the configuration's defaults
  { scaleMs: 10 * HOUR_MS, offsetMs: 0, decay: 0.5 },
  { scaleMs: HOUR_MS, offsetMs: 0, decay: 0.01 },
  { scaleMs: 7 * DAY_MS, offsetMs: DAY_MS, decay: 0.9 },
  { scaleMs: 30 * MINUTE_MS, offsetMs: 2 * HOUR_MS, decay: 0.001 },
];

/** Ages (ms; negative = published after now) around every edge of one setting. */
function ages(p: GaussDecay): number[] {
  const { offsetMs: o, scaleMs: s } = p;
  const edges = [
    0,
    1,
    o - 1,
    o,
    o + 1,
    o + s / 2,
    o + s,
    o + 2 * s,
    gaussHorizonMs(p, 0.01),
    o + 10 * s,
    o + 1_000 * s,
    400 * DAY_MS,
  ];
  return [...edges, ...edges.map((a) => -a)].map(Math.round).filter((a) => Math.abs(a) <= NOW);
}

/** The SQL expression's factors for publication times `published` (epoch ms), in order. */
async function sqlDecay(p: GaussDecay, published: number[]): Promise<number[]> {
  const { sql } = await engine.place();
  const rows = await sql.query<{ g: number | string }>(
    `SELECT ${gaussDecaySql('$1::bigint', 'a.published', '$2::float8', '$3::float8')} AS g
     FROM unnest($4::bigint[]) WITH ORDINALITY AS a (published, k) ORDER BY a.k`,
    [NOW, p.offsetMs, gaussExponentFactor(p), published],
  );
  return rows.map((r) => Number(r.g));
}

describe('Gaussian decay: TypeScript and SQL', () => {
  it('agree on every age of a grid around offset, scale and the horizon, for several settings', async () => {
    for (const p of SETTINGS) {
      const published = ages(p).map((a) => NOW - a);
      const inSql = await sqlDecay(p, published);
      published.forEach((t, i) => {
        const ts = gaussDecay(p, NOW, t);
        expect(
          Math.abs(inSql[i]! - ts),
          `${JSON.stringify(p)} at age ${NOW - t} ms: SQL ${inSql[i]} vs TS ${ts}`,
        ).toBeLessThanOrEqual(ts * 1e-12 + 1e-300);
      });
    }
  });

  it('is 1 within the offset, `decay` at offset + scale, and bottoms out at exp(−700) far away', () => {
    for (const p of SETTINGS) {
      expect(gaussDecay(p, NOW, NOW - p.offsetMs)).toBe(1);
      expect(gaussDecay(p, NOW, NOW + p.offsetMs)).toBe(1); // |now − published|: the future decays alike
      expect(gaussDecay(p, NOW, NOW - p.offsetMs - p.scaleMs)).toBeCloseTo(p.decay, 12);
      expect(gaussDecay(p, NOW, NOW - gaussHorizonMs(p, 0.01))).toBeCloseTo(0.01, 10); // NOW − horizon rounds to ~1e−4 ms
      expect(gaussDecay(p, NOW, NOW - 100_000 * p.scaleMs)).toBe(Math.exp(-GAUSS_MAX_EXPONENT));
    }
  });
});
