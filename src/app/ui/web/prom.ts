/**
 * Reads the Prometheus text format of `/metrics` (version 0.0.4) into totals per metric name, summed
 * over labels: counters and gauges as one number, histograms as cumulative buckets (`le` → count) with
 * their sum and count. Enough for the health page's charts; not a general parser (no exemplars).
 */

/** A histogram summed over its labels. */
export interface Histo {
  /** Upper bounds in ascending order, with the cumulative count at each (`+Inf` last). */
  buckets: { le: number; count: number }[];
  sum: number;
  count: number;
}

/** Totals of one scrape. */
export interface Scrape {
  /** Counter/gauge name → value summed over its label sets. */
  values: Map<string, number>;
  histograms: Map<string, Histo>;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;

/** Parses a scrape. */
export function parseProm(text: string): Scrape {
  const values = new Map<string, number>();
  const buckets = new Map<string, Map<number, number>>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const [, name, labels = '', raw] = m;
    const v = Number(raw);
    if (!Number.isFinite(v) && raw !== '+Inf') continue;
    if (name!.endsWith('_bucket')) {
      const le = /le="([^"]+)"/.exec(labels)?.[1];
      if (le === undefined) continue;
      const base = name!.slice(0, -'_bucket'.length);
      const b = buckets.get(base) ?? new Map<number, number>();
      const bound = le === '+Inf' ? Infinity : Number(le);
      b.set(bound, (b.get(bound) ?? 0) + v);
      buckets.set(base, b);
    } else {
      values.set(name!, (values.get(name!) ?? 0) + v);
    }
  }
  const histograms = new Map<string, Histo>();
  for (const [base, b] of buckets) {
    histograms.set(base, {
      buckets: [...b].sort((x, y) => x[0] - y[0]).map(([le, count]) => ({ le, count })),
      sum: values.get(`${base}_sum`) ?? 0,
      count: values.get(`${base}_count`) ?? 0,
    });
  }
  return { values, histograms };
}

/** The q-quantile (0..1) of a cumulative histogram by linear interpolation inside its bucket; null when empty. */
export function quantile(h: Histo, q: number): number | null {
  const total = h.buckets.at(-1)?.count ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const { le, count } of h.buckets) {
    if (count >= rank) {
      if (!Number.isFinite(le)) return prevLe;
      const inBucket = count - prevCount;
      return inBucket === 0 ? le : prevLe + ((le - prevLe) * (rank - prevCount)) / inBucket;
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}
