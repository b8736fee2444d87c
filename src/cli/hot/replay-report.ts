/**
 * The report of `freshet replay views`: counts by verdict, the virtual span, throughput, the top
 * items at each report point, and the HyperLogLog-vs-exact UV cross-check (expected standard error
 * 1.04/√16384 = 0.81 % at large cardinalities, Flajolet et al. 2007; smaller counts are estimated
 * much more tightly, see the README).
 */
import { HLL_STANDARD_ERROR } from '../../hot/hll.js';
import type { ViewVerdict } from '../../hot/domain.js';
import type { HotCounters } from '../../hot/hot-counters.js';

/** One ranked item at a report point. */
export interface TopEntry {
  id: string;
  title: string;
  /** Hours since publication at the report point. */
  ageHours: number;
  pv: number;
  uv: number;
  score: number;
}

/** The top items at one virtual time. */
export interface TopSnapshot {
  atMs: number;
  entries: TopEntry[];
}

/** Relative UV errors over a set of items. */
export interface UvErrors {
  items: number;
  meanRelErr: number;
  maxRelErr: number;
}

/** What a replay did. */
export interface ReplayReport {
  /** Usable log rows replayed. */
  rows: number;
  /** Rows skipped as unusable, and why (first 5). */
  skipped: number;
  skippedExamples: string[];
  /** Rows whose log item had no Freshet item. */
  unmappedRows: number;
  /** Distinct items in the log, and the Freshet items they were mapped onto. */
  logItems: number;
  items: number;
  views: Record<ViewVerdict, number>;
  virtualFromMs: number;
  virtualToMs: number;
  /** Virtual − logged time, ms. */
  shiftMs: number;
  wallMs: number;
  snapshots: TopSnapshot[];
  /** HLL UV vs the exact distinct visitors of the counted views, per item with counted views. */
  uv: UvErrors & { maxItem: string; maxItemExact: number; maxItemUv: number; large: UvErrors & { minExact: number } };
}

/**
 * Compares each item's UV with the exact count of distinct visitors of its counted views.
 * `large` restricts to items with at least 100 exact visitors.
 */
export async function uvCrossCheck(
  counters: HotCounters,
  exact: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<ReplayReport['uv']> {
  const ids = [...exact.keys()];
  const all: number[] = [];
  const large: number[] = [];
  let maxItem = '';
  let maxItemExact = 0;
  let maxItemUv = 0;
  let maxErr = -1;
  for (let i = 0; i < ids.length; i += 500) {
    for (const c of await counters.counters(ids.slice(i, i + 500))) {
      const n = exact.get(c.itemId)!.size;
      const err = Math.abs(c.uv - n) / n;
      all.push(err);
      if (n >= 100) large.push(err);
      if (err > maxErr) {
        maxErr = err;
        maxItem = c.itemId;
        maxItemExact = n;
        maxItemUv = c.uv;
      }
    }
  }
  return { ...errors(all), maxItem, maxItemExact, maxItemUv, large: { minExact: 100, ...errors(large) } };
}

function errors(e: readonly number[]): UvErrors {
  return {
    items: e.length,
    meanRelErr: e.length ? e.reduce((a, b) => a + b, 0) / e.length : 0,
    maxRelErr: e.length ? Math.max(...e) : 0,
  };
}

const pct = (x: number) => `${(x * 100).toFixed(3)} %`;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** The report as text: a two-column summary, then one table per snapshot. */
export function formatReplayReport(r: ReplayReport): string {
  const v = r.views;
  const suspicious = v.repeat + v.budget + v.flagged;
  const rows: [string, string][] = [
    [
      'virtual time',
      `${iso(r.virtualFromMs)} → ${iso(r.virtualToMs)} (log shifted by ${(r.shiftMs / 86_400_000).toFixed(0)} days)`,
    ],
    ['wall time', `${(r.wallMs / 1000).toFixed(1)} s (${Math.round(r.rows / (r.wallMs / 1000))} views/s)`],
    ['log rows', `${r.rows} replayed, ${r.skipped} skipped, ${r.unmappedRows} unmapped`],
    ['items', `${r.logItems} log items onto ${r.items} items`],
    [
      'views',
      `${v.counted} counted, ${suspicious} suspicious (repeat ${v.repeat}, budget ${v.budget}, flagged ${v.flagged}), ${v.expired} expired`,
    ],
    [
      'UV: HLL vs exact',
      `${r.uv.items} items: mean ${pct(r.uv.meanRelErr)}, max ${pct(r.uv.maxRelErr)} (${r.uv.maxItem}: ${r.uv.maxItemUv} for ${r.uv.maxItemExact})`,
    ],
    [
      `  items with ≥ ${r.uv.large.minExact} visitors`,
      `${r.uv.large.items} items: mean ${pct(r.uv.large.meanRelErr)}, max ${pct(r.uv.large.maxRelErr)}`,
    ],
    ['  HLL standard error', `${pct(HLL_STANDARD_ERROR)} (1.04/√16384, asymptotic)`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, val]) => `${k.padEnd(width)}  ${val}`);
  for (const s of r.snapshots) {
    lines.push(
      '',
      `top ${s.entries.length} at ${iso(s.atMs)}`,
      '   #  item         age h      pv      uv      score  title',
    );
    s.entries.forEach((e, i) =>
      lines.push(
        `  ${String(i + 1).padStart(2)}  ${e.id.padEnd(11)} ${e.ageHours.toFixed(1).padStart(6)} ${String(e.pv).padStart(7)} ${String(e.uv).padStart(7)} ${e.score.toFixed(2).padStart(10)}  ${e.title.slice(0, 60)}`,
      ),
    );
  }
  return lines.join('\n');
}
