/**
 * Health: which stores answer (`/readyz`) and five key metrics from `/metrics`, sampled every 5 s
 * while the page is open (series.ts): API request latency (p50/p95 overall and per route, and the mean
 * of the requests IN each interval, in ms), recall size, seen-filter drops, fan-out lag and impression
 * write failures. The figures are over the last 5 minutes — or what the page has sampled since it opened,
 * when less (series.ts `WINDOW_MS`): a total since the server started is dominated by whatever ran then
 * (an import, a replay), so it is shown only beside them. The time charts (chart.ts, with axes and units)
 * show each interval of the last 60 samples, from the first sample on. Latency counts `/v1` requests only:
 * the page's own polling of `/metrics` and `/readyz` would otherwise make an idle server look busy.
 */
import type { Page } from '../context.js';
import { FreshetClientError } from '../../client/index.js';
import { bars, span, timeChart, type Unit } from '../chart.js';
import { h, replace, statusLine } from '../dom.js';
import { describe } from '../extras.js';
import { histogramsBy, parseProm, quantile, type Histo } from '../prom.js';
import { History, KEEP, sampleMs, sampleEvery, WINDOW_MS } from '../series.js';

const ms = (s: number) => (s < 1 ? `${+(s * 1000).toPrecision(2)}ms` : `${+s.toPrecision(2)}s`);
const n = (x: number) => String(+x.toPrecision(3));

/** Keeps the samples of `/v1` routes and those without a route (leaves out the ops routes the page polls). */
export const apiRoutesOnly = (labels: string) => !labels.includes('route="') || labels.includes('route="/v1/');

/** One metric card: what it is, the figures and its charts. */
function card(title: string, what: string, figures: string, ...charts: (Element | null)[]): HTMLElement {
  return h(
    'section',
    { class: 'metric' },
    h('h3', {}, title),
    h('p', { class: 'meta' }, what),
    h('p', { class: 'figure' }, figures),
    ...charts.filter((c) => c !== null),
  );
}

/** What a histogram card shows: its name, title and text, the bar labels, and the chart's unit and scale. */
interface HistoSpec {
  name: string;
  title: string;
  what: string;
  label: (x: number) => string;
  unit: Unit;
  /** Observed value → the chart's unit (seconds → ms: 1000). */
  scale: number;
}

/** `n observed in the last 42 s · mean … · p50 ≈ … · p95 ≈ …` of a histogram's recent observations. */
function recentFigures(recent: { histo: Histo; spanMs: number } | null, u: (x: number) => string): string {
  if (!recent) return 'Waiting for a second sample.';
  const { histo, spanMs } = recent;
  if (!histo.count) return `Nothing observed in the last ${span(spanMs)}.`;
  const p50 = quantile(histo, 0.5) ?? 0;
  const p95 = quantile(histo, 0.95) ?? 0;
  return `${histo.count} in the last ${span(spanMs)} · mean ${u(histo.sum / histo.count)} · p50 ≈ ${u(p50)} · p95 ≈ ${u(p95)}`;
}

function histoCard(history: History, spec: HistoSpec, intervalMs: number, extra?: HTMLElement): HTMLElement {
  const hist: Histo | undefined = history.last!.histograms.get(spec.name);
  if (!hist) return card(spec.title, spec.what, 'Not reported by this server.');
  const u = spec.label;
  const recent = history.histogramOver((s) => s.histograms.get(spec.name), WINDOW_MS);
  const figures = `${recentFigures(recent, u)} · ${hist.count} since start`;
  return card(
    spec.title,
    spec.what,
    figures,
    extra ?? null,
    bars(recent?.histo ?? hist, `${spec.title}: distribution${recent ? ` of the last ${span(recent.spanMs)}` : ''}`, u),
    timeChart(history.meanPerInterval(spec.name, spec.scale), {
      label: `${spec.title}: mean of each interval`,
      unit: spec.unit,
      intervalMs,
      slots: KEEP,
    }),
  );
}

/** A counter's increase over the window, its total, and its increase per minute in each interval; no series yet is 0. */
function counterCard(history: History, name: string, title: string, what: string, intervalMs: number): HTMLElement {
  const total = history.last!.values.get(name);
  const recent = history.increaseOver((s) => s.values.get(name), WINDOW_MS);
  const since = total === undefined ? '0 since start (no series yet)' : `${n(total)} since start`;
  const figure = recent ? `${n(recent.n)} in the last ${span(recent.spanMs)} · ${since}` : since;
  return card(
    title,
    what,
    figure,
    timeChart(
      history.ratePerMinute((s) => s.values.get(name)),
      { label: `${title} per minute`, unit: '/min', intervalMs, slots: KEEP },
    ),
  );
}

/** Routes shown in the latency card's table (the busiest of the window). */
export const ROUTES_SHOWN = 8;

/** `POST /v1/views` of a request histogram's labels; null for a sample without a route. */
const routeOf = (l: Record<string, string>) => (l.route ? `${l.method ?? ''} ${l.route}`.trim() : null);

/** The latency card's table: the busiest routes of the window with their requests, p50 and p95. */
function routeTable(history: History): HTMLElement | null {
  const name = 'freshet_http_request_duration_seconds';
  const newest = histogramsBy(history.last!, name, routeOf);
  const rows: { route: string; histo: Histo }[] = [];
  let spanMs = 0;
  for (const route of newest.keys()) {
    const recent = history.histogramOver((s) => histogramsBy(s, name, routeOf).get(route), WINDOW_MS);
    if (!recent?.histo.count) continue;
    rows.push({ route, histo: recent.histo });
    spanMs = recent.spanMs;
  }
  if (rows.length === 0) return null;
  rows.sort((a, b) => b.histo.count - a.histo.count || (a.route < b.route ? -1 : 1));
  const cell = (x: number | null) => h('td', { class: 'num' }, ms(x ?? 0));
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'routes' },
      h('caption', {}, `By route, the last ${span(spanMs)}`),
      h('tr', {}, h('th', {}, 'route'), h('th', {}, 'requests'), h('th', {}, 'p50'), h('th', {}, 'p95')),
      rows
        .slice(0, ROUTES_SHOWN)
        .map((r) =>
          h(
            'tr',
            { 'data-route': r.route },
            h('td', {}, r.route),
            h('td', { class: 'num' }, String(r.histo.count)),
            cell(quantile(r.histo, 0.5)),
            cell(quantile(r.histo, 0.95)),
          ),
        ),
    ),
  );
}

/** The five cards of the newest sample. */
function cards(history: History, intervalMs: number): HTMLElement[] {
  return [
    histoCard(
      history,
      {
        name: 'freshet_http_request_duration_seconds',
        title: 'API request latency',
        what: "Every /v1 request, all routes (this page's own polling left out).",
        label: ms,
        unit: 'ms',
        scale: 1000,
      },
      intervalMs,
      routeTable(history) ?? undefined,
    ),
    histoCard(
      history,
      {
        name: 'freshet_recall_candidates',
        title: 'Recall size',
        what: 'Candidates one recall returned (for-you and discover).',
        label: n,
        unit: 'items',
        scale: 1,
      },
      intervalMs,
    ),
    counterCard(
      history,
      'freshet_seen_filter_dropped_total',
      'Seen-filter drops',
      'Candidates removed because the reader had already been served them.',
      intervalMs,
    ),
    histoCard(
      history,
      {
        name: 'freshet_fanout_lag_seconds',
        title: 'Fan-out lag',
        what: "From publish to delivery into the followers' inboxes.",
        label: ms,
        unit: 'ms',
        scale: 1000,
      },
      intervalMs,
    ),
    counterCard(
      history,
      'freshet_impression_write_failures_total',
      'Impression write failures',
      'Seen-filter writes that failed (the page was served anyway).',
      intervalMs,
    ),
  ];
}

/** The Health page (see the module doc): samples every {@link sampleMs} until the person leaves it. */
export const healthPage: Page = (root, ctx) => {
  const status = statusLine();
  const ready = h('div', { class: 'ready' });
  const grid = h('div', { class: 'metrics' });
  const history = new History();
  const intervalMs = sampleMs();
  const takeSample = async () => {
    try {
      const r = await ctx.client.ready();
      replace(ready, h('p', { class: 'ok' }, 'Ready: every store answers.'), storeList(r.stores));
    } catch (err) {
      const stores = notReadyStores(err);
      replace(ready, h('p', { class: 'bad' }, `Not ready: ${describe(err)}`), stores ? storeList(stores) : null);
    }
    try {
      history.push({ atMs: Date.now(), scrape: parseProm(await ctx.client.metrics(), apiRoutesOnly) });
      replace(grid, cards(history, intervalMs));
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
      h('span', { class: 'meta' }, `sampled every ${intervalMs / 1000} s while this page is open`),
    ),
    grid,
  );
  return sampleEvery(intervalMs, takeSample);
};

/** The stores a failed `/readyz` names (its 503 envelope's `data.stores`), or null when it named none. */
export function notReadyStores(err: unknown): Record<string, boolean> | null {
  return err instanceof FreshetClientError
    ? ((err.data as { stores?: Record<string, boolean> } | null)?.stores ?? null)
    : null;
}

/** The stores of a `/readyz` answer as up/down chips. */
export function storeList(stores: Record<string, boolean>): HTMLElement {
  return h(
    'ul',
    { class: 'chips' },
    Object.entries(stores).map(([name, up]) => h('li', { class: up ? 'ok' : 'bad' }, `${name}: ${up ? 'up' : 'down'}`)),
  );
}
