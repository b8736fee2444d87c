/**
 * Two tiny SVG charts (no library): a sparkline of a series and a bar chart of a histogram's buckets.
 * Each is an `<svg role="img">` with a text alternative saying what it shows.
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

function el(name: string, attrs: Record<string, string | number>): SVGElement {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/**
 * A line through `values` (oldest first) over a zero baseline, scaled to its own maximum; one value is
 * drawn as a level line across (so a chart shows from the first sample), none as the baseline alone.
 */
export function sparkline(values: readonly number[], label: string): SVGSVGElement {
  const W = 240;
  const H = 48;
  const s = svg(W, H, label);
  s.append(el('line', { x1: 0, y1: H - 1, x2: W, y2: H - 1, class: 'axis' }));
  if (values.length === 0) return s;
  const max = Math.max(...values, 1e-9);
  const y = (v: number) => (H - 2 - (v / max) * (H - 6)).toFixed(1);
  const pts =
    values.length === 1
      ? [`0,${y(values[0]!)}`, `${W},${y(values[0]!)}`]
      : values.map((v, i) => `${((i / (values.length - 1)) * W).toFixed(1)},${y(v)}`);
  s.append(el('polyline', { points: pts.join(' '), class: 'line' }));
  return s;
}

/** Bars of a histogram's per-bucket counts (from the cumulative ones), labelled with their bounds. */
export function bars(h: Histo, label: string, unit: (le: number) => string): SVGSVGElement {
  const W = 240;
  const H = 64;
  const per = h.buckets.map((b, i) => ({ le: b.le, n: b.count - (i > 0 ? h.buckets[i - 1]!.count : 0) }));
  const s = svg(W, H, label);
  const max = Math.max(...per.map((p) => p.n), 1);
  const bw = W / Math.max(per.length, 1);
  per.forEach((p, i) => {
    const bh = (p.n / max) * (H - 16);
    const r = el('rect', { x: i * bw + 1, y: H - 12 - bh, width: Math.max(bw - 2, 1), height: bh, class: 'bar' });
    const t = el('title', {});
    t.textContent = `≤ ${Number.isFinite(p.le) ? unit(p.le) : '∞'}: ${p.n}`;
    r.append(t);
    s.append(r);
    if (i % 2 === 0) {
      const tx = el('text', {
        x: i === 0 ? 0 : i * bw + bw / 2,
        y: H - 2,
        'text-anchor': i === 0 ? 'start' : 'middle',
        class: 'tick',
      });
      tx.textContent = Number.isFinite(p.le) ? unit(p.le) : '∞';
      s.append(tx);
    }
  });
  return s;
}
