/**
 * Two small SVG charts (no library), each an `<svg role="img">` with a text alternative saying what it
 * shows: a time chart of sampled values with axes (y: 0 and two rounded ticks labelled with the unit;
 * x: the sampling window, "−5 min … now") for the Overview and Health pages, and a bar chart of a
 * histogram's buckets. A time chart carries its values in `data-values` (comma-separated, `-` for no
 * value) so a test reads what it draws.
 */
import type { Histo } from './prom.js';

const NS = 'http://www.w3.org/2000/svg';

function svg(w: number, hgt: number, label: string): SVGSVGElement {
  const s = document.createElementNS(NS, 'svg');
  s.setAttribute('viewBox', `0 0 ${w} ${hgt}`);
  s.setAttribute('role', 'img');
  s.setAttribute('aria-label', label);
  s.setAttribute('class', 'chart');
  return s;
}

function el(name: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The units a chart labels its y axis with (values are passed in that unit). */
export type Unit = 'ms' | 'items' | 'readers' | '/min' | '%' | 'MB' | 'stores';

/**
 * A number in at most 3 significant digits, with k/M for thousands and millions (`1.25k`, `0.012`), and
 * in exponent form below 0.001 (`4.7e-9`).
 */
export function compact(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e4) return `${+(v / 1e3).toPrecision(3)}k`;
  if (a === 0) return '0';
  if (a < 1e-3) return v.toExponential(1);
  return String(+v.toPrecision(3));
}

/** `v` with its unit: `12 ms`, `3.4k items`, `0.5 %`, `12 /min`. */
export function withUnit(v: number, unit: Unit): string {
  // a percentage under 0.001 (a Bloom filter's false-positive rate on a nearly empty day: fill^k) reads as a bound
  if (unit === '%' && v > 0 && v < 1e-3) return '< 0.001 %';
  return unit === '%' ? `${compact(v)} %` : `${compact(v)} ${unit}`;
}

/** The smallest 1, 2, 2.5 or 5 × 10^n at or above `v` (> 0): the top of a y axis. */
export function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v * (1 - 1e-9)) return m * p;
  return 10 * p;
}

/** A span of time for an axis label: `45 s`, `5 min`, `2.5 min`, `1 h`. */
export function span(ms: number): string {
  if (ms < 60_000) return `${+(ms / 1000).toPrecision(2)} s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toPrecision(2)} min`;
  return `${+(ms / 3_600_000).toPrecision(2)} h`;
}

/** What a time chart draws. */
export interface TimeChartOptions {
  /** The chart's text alternative (its latest value is appended). */
  label: string;
  unit: Unit;
  /** Time between two samples (ms): the x axis spans `slots × intervalMs` back from now. */
  intervalMs: number;
  /** Samples the x axis holds (the newest is at "now", on the right). */
  slots: number;
  /** The least top of the y axis (default: the largest value's, or 1 when all are 0). */
  floor?: number;
}

const W = 320;
const H = 120;
const LEFT = 60;
const RIGHT = 6;
const TOP = 8;
const BOTTOM = 18;

/**
 * A line through `values` (oldest first, the newest at "now"; null = no value in that interval, a gap
 * in the line) over y ticks at 0, half and the rounded top of the largest value, labelled with `unit`,
 * and x ticks at the start of the window, its middle and "now". One value is drawn as a dot and a short
 * level line; none as the axes alone.
 */
export function timeChart(values: readonly (number | null)[], o: TimeChartOptions): SVGSVGElement {
  const shown = values.slice(-o.slots);
  const last = [...shown].reverse().find((v) => v !== null);
  const s = svg(W, H, `${o.label}; latest ${last == null ? 'none' : withUnit(last, o.unit)}`);
  s.setAttribute('data-values', shown.map((v) => (v === null ? '-' : String(+v.toPrecision(6)))).join(','));
  s.setAttribute('data-unit', o.unit);
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const top = niceCeil(Math.max(...shown.map((v) => v ?? 0), o.floor ?? 0) || 1);
  const y = (v: number) => TOP + plotH - (v / top) * plotH;
  // the axis spans `slots` intervals back from now (5 min at 60 × 5 s); the oldest sample kept sits one interval in
  const x = (i: number) => LEFT + plotW - ((shown.length - 1 - i) / Math.max(o.slots, 1)) * plotW;
  for (const t of [0, top / 2, top]) {
    s.append(el('line', { x1: LEFT, y1: y(t), x2: W - RIGHT, y2: y(t), class: t === 0 ? 'axis' : 'grid' }));
    s.append(el('text', { x: LEFT - 4, y: y(t) + 3, 'text-anchor': 'end', class: 'tick' }, withUnit(t, o.unit)));
  }
  const windowMs = o.slots * o.intervalMs;
  const xTicks: [number, string, string][] = [
    [LEFT, `−${span(windowMs)}`, 'start'],
    [LEFT + plotW / 2, `−${span(windowMs / 2)}`, 'middle'],
    [W - RIGHT, 'now', 'end'],
  ];
  for (const [tx, text, anchor] of xTicks) {
    s.append(el('line', { x1: tx, y1: TOP + plotH, x2: tx, y2: TOP + plotH + 3, class: 'axis' }));
    s.append(el('text', { x: tx, y: H - 4, 'text-anchor': anchor, class: 'tick xtick' }, text));
  }
  // runs of consecutive values become one polyline each (a null breaks the line)
  let run: string[] = [];
  const flush = () => {
    if (run.length === 1) {
      const [px, py] = run[0]!.split(',').map(Number) as [number, number];
      run = [`${(px - 4).toFixed(1)},${py}`, run[0]!];
    }
    if (run.length > 0) s.append(el('polyline', { points: run.join(' '), class: 'line' }));
    run = [];
  };
  shown.forEach((v, i) => {
    if (v === null) flush();
    else run.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
  });
  flush();
  if (last != null) {
    const i = shown.lastIndexOf(last);
    s.append(el('circle', { cx: x(i).toFixed(1), cy: y(last).toFixed(1), r: 2.5, class: 'dot' }));
  }
  return s;
}

/** Bars of a histogram's per-bucket counts (from the cumulative ones), labelled with their bounds. */
export function bars(h: Histo, label: string, unit: (le: number) => string): SVGSVGElement {
  const BW = 240;
  const BH = 64;
  const per = h.buckets.map((b, i) => ({ le: b.le, n: b.count - (i > 0 ? h.buckets[i - 1]!.count : 0) }));
  const s = svg(BW, BH, label);
  const max = Math.max(...per.map((p) => p.n), 1);
  const bw = BW / Math.max(per.length, 1);
  per.forEach((p, i) => {
    const bh = (p.n / max) * (BH - 16);
    const r = el('rect', { x: i * bw + 1, y: BH - 12 - bh, width: Math.max(bw - 2, 1), height: bh, class: 'bar' });
    r.append(el('title', {}, `≤ ${Number.isFinite(p.le) ? unit(p.le) : '∞'}: ${p.n}`));
    s.append(r);
    if (i % 2 === 0) {
      const at = { x: i === 0 ? 0 : i * bw + bw / 2, y: BH - 2, 'text-anchor': i === 0 ? 'start' : 'middle' };
      s.append(el('text', { ...at, class: 'tick' }, Number.isFinite(p.le) ? unit(p.le) : '∞'));
    }
  });
  return s;
}
