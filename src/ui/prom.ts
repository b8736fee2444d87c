/**
 * Reads the Prometheus text format of `/metrics` (version 0.0.4) into totals per metric name, summed
 * over labels: counters and gauges as one number, histograms as cumulative buckets (`le` → count) with
 * their sum and count, and each counter/gauge sample with its labels. Enough for the Health and
 * Overview pages' charts; not a general parser (no exemplars, no escaped quotes in label values).
 */

/** A histogram summed over its labels. */
export interface Histo {
  /** Upper bounds in ascending order, with the cumulative count at each (`+Inf` last). */
  buckets: { le: number; count: number }[];
  sum: number;
  count: number;
}

/** One counter/gauge sample. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** Totals of one scrape. */
export interface Scrape {
  /** Counter/gauge name → value summed over its label sets. */
  values: Map<string, number>;
  histograms: Map<string, Histo>;
  /** Counter/gauge name → its samples, each with its labels. */
  samples: Map<string, Sample[]>;
}

/** The labels of a sample's `{…}` part. */
function labelsOf(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of raw.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) out[m[1]!] = m[2]!;
  return out;
}

/**
 * The sum of `name`'s samples whose labels include every pair of `where`; undefined when the scrape
 * has no such sample.
 */
export function valueWhere(s: Scrape, name: string, where: Record<string, string>): number | undefined {
  let sum: number | undefined;
  for (const x of s.samples.get(name) ?? []) {
    if (Object.entries(where).every(([k, v]) => x.labels[k] === v)) sum = (sum ?? 0) + x.value;
  }
  return sum;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;

/**
 * Parses a scrape; `keep` (given a sample's raw label text) leaves samples out, e.g. The histogram
 * series of some routes.
 */
export function parseProm(text: string, keep: (labels: string) => boolean = () => true): Scrape {
  const values = new Map<string, number>();
  const samples = new Map<string, Sample[]>();
  const buckets = new Map<string, Map<number, number>>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const [, name, labels = '', raw] = m;
    const v = Number(raw);
    if ((!Number.isFinite(v) && raw !== '+Inf') || !keep(labels)) continue;
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
      const list = samples.get(name!) ?? [];
      list.push({ labels: labelsOf(labels), value: v });
      samples.set(name!, list);
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
  return { values, histograms, samples };
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
