/**
 * Health: which stores answer (`/readyz`) and five key metrics from `/metrics`, sampled every 5 s
 * while the page is open: request latency (p50/p95 and the mean per interval), recall size, seen-filter
 * drops, fan-out lag and impression write failures. Totals are since the process started; the
 * sparklines show what changed between samples (the last 60), over a zero baseline from the first sample.
 */
import type { Page } from '../context.js';
import { FreshetClientError } from '../../../../client/index.js';
import { bars, sparkline } from '../chart.js';
import { h, replace, statusLine } from '../dom.js';
import { describe } from '../extras.js';
import { parseProm, quantile, type Histo, type Scrape } from '../prom.js';

const SAMPLE_MS = 5_000;
const KEEP = 60;

const ms = (s: number) => (s < 1 ? `${+(s * 1000).toPrecision(2)}ms` : `${+s.toPrecision(2)}s`);
const n = (x: number) => String(+x.toPrecision(3));

/** One metric card: what it is, the figures and its charts. */
function card(title: string, what: string, figures: string, ...charts: (SVGSVGElement | null)[]): HTMLElement {
  return h(
    'section',
    { class: 'metric' },
    h('h3', {}, title),
    h('p', { class: 'meta' }, what),
    h('p', { class: 'figure' }, figures),
    ...charts.filter((c) => c !== null),
  );
}

/**
 * The samples the page holds, oldest first; `first` is true while the oldest is the page's first sample
 * (none dropped yet), whose increase is drawn as 0 — so every chart has a zero baseline from the first
 * sample on, and the charts of one page share their x axis.
 */
interface History {
  scrapes: Scrape[];
  first: boolean;
}

/** The per-interval increase of a counter, from consecutive scrapes (0 for the page's first sample). */
function deltas(history: History, f: (s: Scrape) => number): number[] {
  const { scrapes } = history;
  const out: number[] = history.first ? [0] : [];
  for (let i = 1; i < scrapes.length; i++) out.push(Math.max(0, f(scrapes[i]!) - f(scrapes[i - 1]!)));
  return out;
}

/** The per-interval mean of a histogram (0 for an interval with no observation, and for the first sample). */
function meanSeries(history: History, name: string): number[] {
  const { scrapes } = history;
  const out: number[] = history.first ? [0] : [];
  for (let i = 1; i < scrapes.length; i++) {
    const a = scrapes[i - 1]!.histograms.get(name);
    const b = scrapes[i]!.histograms.get(name);
    const dc = (b?.count ?? 0) - (a?.count ?? 0);
    out.push(dc > 0 ? ((b?.sum ?? 0) - (a?.sum ?? 0)) / dc : 0);
  }
  return out;
}

function histoCard(
  history: History,
  name: string,
  title: string,
  what: string,
  unit: (x: number) => string,
): HTMLElement {
  const hist: Histo | undefined = history.scrapes.at(-1)!.histograms.get(name);
  if (!hist) return card(title, what, 'Not reported by this server.');
  const p50 = quantile(hist, 0.5);
  const p95 = quantile(hist, 0.95);
  const figures = hist.count
    ? `${hist.count} observed · mean ${unit(hist.sum / hist.count)} · p50 ≈ ${unit(p50 ?? 0)} · p95 ≈ ${unit(p95 ?? 0)}`
    : 'Nothing observed yet.';
  return card(
    title,
    what,
    figures,
    bars(hist, `${title}: distribution`, unit),
    sparkline(meanSeries(history, name), `${title}: mean per ${SAMPLE_MS / 1000} s`),
  );
}

/** A counter's total and its increase per interval; a counter with no series yet (nothing counted) is 0. */
function counterCard(history: History, name: string, title: string, what: string): HTMLElement {
  const total = history.scrapes.at(-1)!.values.get(name);
  const figure = total === undefined ? '0 since start (no series yet)' : `${n(total)} since start`;
  return card(
    title,
    what,
    figure,
    sparkline(
      deltas(history, (s) => s.values.get(name) ?? 0),
      `${title} per ${SAMPLE_MS / 1000} s`,
    ),
  );
}

export const healthPage: Page = (root, ctx) => {
  const status = statusLine();
  const ready = h('div', { class: 'ready' });
  const grid = h('div', { class: 'metrics' });
  const history: History = { scrapes: [], first: true };
  const sample = async () => {
    try {
      const r = await ctx.client.ready();
      replace(ready, h('p', { class: 'ok' }, 'Ready: every store answers.'), storeList(r.stores));
    } catch (err) {
      const stores =
        err instanceof FreshetClientError
          ? ((err.data as { stores?: Record<string, boolean> } | null)?.stores ?? null)
          : null;
      replace(ready, h('p', { class: 'bad' }, `Not ready: ${describe(err)}`), stores ? storeList(stores) : null);
    }
    try {
      history.scrapes.push(parseProm(await ctx.client.metrics()));
      if (history.scrapes.length > KEEP) {
        history.scrapes.shift();
        history.first = false;
      }
      replace(
        grid,
        histoCard(
          history,
          'freshet_http_request_duration_seconds',
          'Request latency',
          'Every HTTP request, all routes.',
          ms,
        ),
        histoCard(
          history,
          'freshet_recall_candidates',
          'Recall size',
          'Candidates one recall returned (for-you and discover).',
          n,
        ),
        counterCard(
          history,
          'freshet_seen_filter_dropped_total',
          'Seen-filter drops',
          'Candidates removed because the reader had already been served them.',
        ),
        histoCard(
          history,
          'freshet_fanout_lag_seconds',
          'Fan-out lag',
          "From publish to delivery into the followers' inboxes.",
          ms,
        ),
        counterCard(
          history,
          'freshet_impression_write_failures_total',
          'Impression write failures',
          'Seen-filter writes that failed (the page was served anyway).',
        ),
      );
      status.textContent = '';
    } catch (err) {
      status.textContent = `Could not read /metrics: ${describe(err)}`;
    }
  };
  replace(
    root,
    h('h2', {}, 'Health'),
    status,
    h('h3', {}, 'Stores'),
    ready,
    h(
      'div',
      { class: 'toolbar' },
      h('h3', {}, 'Metrics'),
      h('span', { class: 'meta' }, `sampled every ${SAMPLE_MS / 1000} s while this page is open`),
    ),
    grid,
  );
  void sample();
  const timer = setInterval(() => void sample(), SAMPLE_MS);
  return () => clearInterval(timer);
};

function storeList(stores: Record<string, boolean>): HTMLElement {
  return h(
    'ul',
    { class: 'chips' },
    Object.entries(stores).map(([name, up]) => h('li', { class: up ? 'ok' : 'bad' }, `${name}: ${up ? 'up' : 'down'}`)),
  );
}
