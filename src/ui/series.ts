/**
 * The samples the Health and Overview pages take of `/metrics` while open, and the series their charts
 * draw from them: a gauge's value, a counter's increase per minute, a histogram's mean per interval
 * (Δsum / Δcount of the observations between two samples), a ratio of two counters' increases; and the
 * figures of the last minutes: a counter's increase and a histogram's observations over a window.
 * The interval is 5 s; a page (or a test) may set another on the document: `<html data-sample-ms="500">`
 * (at least 200 ms).
 */
import { addHisto, type Histo, type Scrape } from './prom.js';

/** The default time between two samples (ms). */
export const SAMPLE_MS = 5_000;
/** Samples kept and charted (60 × 5 s = the last 5 minutes). */
export const KEEP = 60;
/**
 * The window of the pages' figures: the last 5 minutes (what {@link KEEP} samples at 5 s hold), or what the
 * page has sampled since it opened when that is less — never since the server started, where a past import
 * or replay outweighs what happens now.
 */
export const WINDOW_MS = 5 * 60_000;

/** The sampling interval: `data-sample-ms` of the document element when set (≥ 200 ms), else {@link SAMPLE_MS}. */
export function sampleMs(): number {
  const set = Number(document.documentElement.dataset.sampleMs);
  return Number.isFinite(set) && set >= 200 ? set : SAMPLE_MS;
}

/**
 * Runs `take` now and then every `intervalMs` until the returned stop is called; a tick while the previous
 * sample is still being taken is skipped (a slow server is sampled once it answers, never twice at once).
 */
export function sampleEvery(intervalMs: number, take: () => Promise<void>): () => void {
  let busy = false;
  const sample = async () => {
    if (busy) return;
    busy = true;
    try {
      await take();
    } finally {
      busy = false;
    }
  };
  void sample();
  const timer = setInterval(() => void sample(), intervalMs);
  return () => clearInterval(timer);
}

/** One sample: when it was taken (epoch ms, the browser's clock) and what `/metrics` said. */
export interface Scraped {
  atMs: number;
  scrape: Scrape;
}

/**
 * The samples a page holds, oldest first; `first` is true while the oldest is the page's first sample
 * (none dropped yet), whose interval series start at 0 — so every chart draws from the first sample on.
 */
export class History {
  readonly samples: Scraped[] = [];
  first = true;

  /** Adds a sample, dropping the oldest beyond {@link KEEP}. */
  push(s: Scraped): void {
    this.samples.push(s);
    if (this.samples.length > KEEP) {
      this.samples.shift();
      this.first = false;
    }
  }

  /** The newest scrape. */
  get last(): Scrape | undefined {
    return this.samples.at(-1)?.scrape;
  }

  /** A gauge's value at each sample (null where the scrape has none). */
  gauge(f: (s: Scrape) => number | undefined): (number | null)[] {
    return this.samples.map((x) => f(x.scrape) ?? null);
  }

  /**
   * `f` of each interval between consecutive samples (`a` the earlier scrape, `minutes` its length);
   * 0 for the page's first sample.
   */
  perInterval(f: (a: Scrape, b: Scrape, minutes: number) => number | null): (number | null)[] {
    const out: (number | null)[] = this.first && this.samples.length > 0 ? [0] : [];
    for (let i = 1; i < this.samples.length; i++) {
      const a = this.samples[i - 1]!;
      const b = this.samples[i]!;
      out.push(f(a.scrape, b.scrape, Math.max(b.atMs - a.atMs, 1) / 60_000));
    }
    return out;
  }

  /** A counter's increase per minute over each interval (a counter that restarted counts from 0). */
  ratePerMinute(f: (s: Scrape) => number | undefined): (number | null)[] {
    return this.perInterval((a, b, minutes) => increase(f(a), f(b)) / minutes);
  }

  /**
   * A counter's increase over the samples of the last `windowMs` (the newest against the oldest within
   * it; all samples when they span less) and the time those samples span (ms); null with fewer than two.
   */
  increaseOver(f: (s: Scrape) => number | undefined, windowMs: number): { n: number; spanMs: number } | null {
    const ends = this.window(windowMs);
    if (!ends) return null;
    return { n: increase(f(ends.oldest.scrape), f(ends.newest.scrape)), spanMs: ends.newest.atMs - ends.oldest.atMs };
  }

  /**
   * The observations of a histogram (`pick` of each scrape) over the samples of the last `windowMs`: the
   * newest against the oldest within it (all samples when they span less), bucket by bucket, and the time
   * they span (ms); null with fewer than two samples. A histogram that restarted counts from 0.
   */
  histogramOver(pick: (s: Scrape) => Histo | undefined, windowMs: number): { histo: Histo; spanMs: number } | null {
    const ends = this.window(windowMs);
    if (!ends) return null;
    const b = pick(ends.newest.scrape);
    if (!b) return null;
    const a = pick(ends.oldest.scrape);
    const restarted = !a || b.count < a.count;
    return { histo: restarted ? b : addHisto(b, a, -1), spanMs: ends.newest.atMs - ends.oldest.atMs };
  }

  /** The newest sample and the oldest within `windowMs` of it; null with fewer than two. */
  private window(windowMs: number): { oldest: Scraped; newest: Scraped } | null {
    const newest = this.samples.at(-1);
    const oldest = this.samples.find((x) => newest && x.atMs >= newest.atMs - windowMs);
    return newest && oldest && oldest !== newest ? { oldest, newest } : null;
  }

  /**
   * The mean of a histogram's observations IN each interval (Δsum / Δcount), times `scale`; 0 for an
   * interval with no observation.
   */
  meanPerInterval(name: string, scale = 1): (number | null)[] {
    return this.perInterval((a, b) => {
      const ha = a.histograms.get(name);
      const hb = b.histograms.get(name);
      const dc = increase(ha?.count, hb?.count);
      return dc > 0 ? (increase(ha?.sum, hb?.sum) / dc) * scale : 0;
    });
  }

  /** `part`'s increase over `whole`'s in each interval, in % (null for an interval where `whole` did not move). */
  ratio(part: (s: Scrape) => number | undefined, whole: (s: Scrape) => number | undefined): (number | null)[] {
    return this.perInterval((a, b) => {
      const w = increase(whole(a), whole(b));
      return w > 0 ? (100 * increase(part(a), part(b))) / w : null;
    });
  }
}

/** A counter's increase from `a` to `b` (absent = 0; a counter that went down restarted: `b`). */
export function increase(a: number | undefined, b: number | undefined): number {
  const d = (b ?? 0) - (a ?? 0);
  return d >= 0 ? d : (b ?? 0);
}
