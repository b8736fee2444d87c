/**
 * Reads the Prometheus text format of `/metrics` (version 0.0.4) into totals per metric name, summed
 * over labels: counters and gauges as one number, histograms as cumulative buckets (`le` → count) with
 * their sum and count, and each counter/gauge sample and each histogram's label set with its labels. Enough for the Health and
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
  /** Histogram name → one histogram per label set (`le` left out), each with its labels. */
  histogramSeries: Map<string, { labels: Record<string, string>; histo: Histo }[]>;
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
  /** `name` → label set without `le` → its buckets, sum and count. */
  const series = new Map<string, Map<string, { buckets: Map<number, number>; sum: number; count: number }>>();
  const seriesOf = (base: string, labels: string) => {
    const key = labels.replace(/,?le="[^"]*"/, '').replace(/^,/, '');
    const byKey = series.get(base) ?? new Map();
    series.set(base, byKey);
    const one = byKey.get(key) ?? { buckets: new Map<number, number>(), sum: 0, count: 0 };
    byKey.set(key, one);
    return one;
  };
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
      seriesOf(base, labels).buckets.set(bound, v);
    } else {
      if (name!.endsWith('_sum')) seriesOf(name!.slice(0, -'_sum'.length), labels).sum = v;
      if (name!.endsWith('_count')) seriesOf(name!.slice(0, -'_count'.length), labels).count = v;
      values.set(name!, (values.get(name!) ?? 0) + v);
      const list = samples.get(name!) ?? [];
      list.push({ labels: labelsOf(labels), value: v });
      samples.set(name!, list);
    }
  }
  const histograms = new Map<string, Histo>();
  for (const [base, b] of buckets) {
    histograms.set(base, {
      buckets: sortedBuckets(b),
      sum: values.get(`${base}_sum`) ?? 0,
      count: values.get(`${base}_count`) ?? 0,
    });
  }
  const histogramSeries = new Map<string, { labels: Record<string, string>; histo: Histo }[]>();
  for (const [base, byKey] of series) {
    if (!buckets.has(base)) continue; // a counter that ends in _sum or _count, not a histogram
    histogramSeries.set(
      base,
      [...byKey].map(([key, x]) => ({
        labels: labelsOf(key),
        histo: { buckets: sortedBuckets(x.buckets), sum: x.sum, count: x.count },
      })),
    );
  }
  return { values, histograms, samples, histogramSeries };
}

const sortedBuckets = (b: Map<number, number>) =>
  [...b].sort((x, y) => x[0] - y[0]).map(([le, count]) => ({ le, count }));

/**
 * `name`'s histograms summed per group: `group` names each label set's group (e.g. `POST /v1/views` from
 * `method` and `route`); label sets it maps to null are left out.
 */
export function histogramsBy(
  s: Scrape,
  name: string,
  group: (labels: Record<string, string>) => string | null,
): Map<string, Histo> {
  const out = new Map<string, Histo>();
  for (const { labels, histo } of s.histogramSeries.get(name) ?? []) {
    const key = group(labels);
    if (key === null) continue;
    const into = out.get(key);
    out.set(key, into ? addHisto(into, histo) : histo);
  }
  return out;
}

/** `a + b` bucket by bucket (`sign` −1: `a − b`; the histograms of one metric share their bounds). */
export function addHisto(a: Histo, b: Histo, sign: 1 | -1 = 1): Histo {
  const counts = new Map(a.buckets.map((x) => [x.le, x.count]));
  for (const x of b.buckets) counts.set(x.le, (counts.get(x.le) ?? 0) + sign * x.count);
  return { buckets: sortedBuckets(counts), sum: a.sum + sign * b.sum, count: a.count + sign * b.count };
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
