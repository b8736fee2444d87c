/**
 * Overview, the explorer's landing page: the engine at a glance, as tiles with a current figure and a
 * chart of the last 60 samples (series.ts; every 5 s while the page is open): catalog size, readers
 * active in the last hour and day, views and publishes per minute, fan-out lag, item-cache hit rate,
 * the seen filter's fill and estimated false-positive rate, memory of the hot state (Redis, or the
 * process on the embedded default) and database size, and each store up or down. Figures of counters and
 * histograms are over the last minutes the page has sampled (series.ts `WINDOW_MS`; rates over the last
 * minute), never since the server started alone, where a past import outweighs what happens now. It reads
 * only `/metrics` (docs/operations.md "Health, readiness and metrics") and `/readyz`.
 */
import type { Page } from '../context.js';
import { span, timeChart, withUnit, type Unit } from '../chart.js';
import { h, replace, statusLine } from '../dom.js';
import { describe } from '../extras.js';
import { parseProm, quantile, valueWhere, type Scrape } from '../prom.js';
import { History, KEEP, sampleEvery, sampleMs, WINDOW_MS } from '../series.js';
import { notReadyStores, storeList } from './health.js';

/** One tile: its figure and its series from the samples. */
interface Tile {
  id: string;
  title: string;
  what: string;
  unit: Unit;
  /** The least top of the chart's y axis (a value far below it draws flat at 0 instead of filling the chart). */
  floor?: number;
  /** The figure under the title (from the samples). */
  figure(history: History): string;
  series(history: History): (number | null)[];
}

const MB = 1e6;
const value = (name: string) => (s: Scrape) => s.values.get(name);
const lookups = (result?: string) => (s: Scrape) =>
  result
    ? valueWhere(s, 'freshet_item_cache_lookups_total', { result })
    : s.values.get('freshet_item_cache_lookups_total');
const active = (window: '1h' | '24h') => (s: Scrape) => valueWhere(s, 'freshet_readers_active', { window });
/** The database's size gauge and its engine label (`postgres` or `pglite`), if reported. */
function database(s: Scrape): { bytes: number; engine: string } | undefined {
  const x = s.samples.get('freshet_database_size_bytes')?.[0];
  return x ? { bytes: x.value, engine: x.labels.engine ?? 'postgres' } : undefined;
}
/** A gauge tile's figure: the newest value with its unit, or why there is none. */
const gaugeFigure =
  (f: (s: Scrape) => number | undefined, unit: Unit, scale = 1) =>
  (hi: History) => {
    const v = f(hi.last!);
    return v === undefined ? 'Not reported by this server.' : withUnit(v * scale, unit);
  };
const gaugeSeries =
  (f: (s: Scrape) => number | undefined, scale = 1) =>
  (hi: History) =>
    hi.gauge((s) => {
      const v = f(s);
      return v === undefined ? undefined : v * scale;
    });
/**
 * A counter tile's figure: its increase per minute over the last minute once the page has sampled a
 * minute, else the increase over what it has sampled ("3 in the last 18 s": a rate extrapolated from a
 * few seconds would overstate it), and its total since the server started.
 */
const rateFigure = (name: string) => (hi: History) => {
  const d = hi.increaseOver(value(name), 60_000); // a rate: the last minute, as the title says
  const total = hi.last!.values.get(name) ?? 0;
  if (!d) return `none yet · ${total} since start`;
  const recent =
    d.spanMs >= 59_000 ? withUnit((d.n * 60_000) / d.spanMs, '/min') : `${d.n} in the last ${span(d.spanMs)}`;
  return `${recent} · ${total} since start`;
};
/** Whether the server reports Redis (else the hot state lives in the process: the embedded default). */
const onRedis = (s: Scrape) => s.values.has('freshet_redis_used_memory_bytes');
const memory = (s: Scrape) =>
  onRedis(s) ? s.values.get('freshet_redis_used_memory_bytes') : s.values.get('freshet_process_resident_memory_bytes');

const TILES: Tile[] = [
  {
    id: 'catalog',
    title: 'Catalog',
    what: 'Live items (not deleted).',
    unit: 'items',
    figure: gaugeFigure(value('freshet_catalog_items'), 'items'),
    series: gaugeSeries(value('freshet_catalog_items')),
  },
  {
    id: 'readers-1h',
    title: 'Readers, last hour',
    what: 'Distinct readers who read a feed or recorded a view (estimate, ±1 %).',
    unit: 'readers',
    figure: gaugeFigure(active('1h'), 'readers'),
    series: gaugeSeries(active('1h')),
  },
  {
    id: 'readers-24h',
    title: 'Readers, last day',
    what: 'The same over the last 24 hours.',
    unit: 'readers',
    figure: gaugeFigure(active('24h'), 'readers'),
    series: gaugeSeries(active('24h')),
  },
  {
    id: 'views',
    title: 'Views',
    what: 'Views recorded per minute, over the last minute (every verdict: counted, repeats, flagged…).',
    unit: '/min',
    figure: rateFigure('freshet_hot_views_total'),
    series: (hi) => hi.ratePerMinute(value('freshet_hot_views_total')),
  },
  {
    id: 'publishes',
    title: 'Publishes',
    what: 'New items published per minute, over the last minute.',
    unit: '/min',
    figure: rateFigure('freshet_items_published_total'),
    series: (hi) => hi.ratePerMinute(value('freshet_items_published_total')),
  },
  {
    id: 'fanout-lag',
    title: 'Fan-out lag',
    what: "Publish → delivered into the followers' inboxes: the mean of each interval.",
    unit: 'ms',
    figure: (hi) => {
      const total = hi.last!.histograms.get('freshet_fanout_lag_seconds')?.count ?? 0;
      const recent = hi.histogramOver((s) => s.histograms.get('freshet_fanout_lag_seconds'), WINDOW_MS);
      if (!recent?.histo.count)
        return `none in the last ${recent ? span(recent.spanMs) : '0 s'} · ${total} since start`;
      const p95 = withUnit(1000 * (quantile(recent.histo, 0.95) ?? 0), 'ms');
      return `p95 ≈ ${p95} of ${recent.histo.count} in the last ${span(recent.spanMs)} · ${total} since start`;
    },
    series: (hi) => hi.meanPerInterval('freshet_fanout_lag_seconds', 1000),
  },
  {
    id: 'item-cache',
    title: 'Item-cache hit rate',
    what: 'Hydrated items served from memory, of all hydrated (per interval; gaps: none hydrated).',
    unit: '%',
    figure: (hi) => {
      const all = hi.increaseOver(lookups(), WINDOW_MS);
      const hits = hi.increaseOver(lookups('hit'), WINDOW_MS);
      if (!all?.n) return `No lookup in the last ${all ? span(all.spanMs) : '0 s'}.`;
      return `${withUnit((100 * (hits?.n ?? 0)) / all.n, '%')} of ${all.n} in the last ${span(all.spanMs)}`;
    },
    series: (hi) => hi.ratio(lookups('hit'), lookups()),
  },
  {
    id: 'seen-fill',
    title: 'Seen filter fill',
    what: "Bits set in today's rolling seen filter.",
    unit: '%',
    figure: gaugeFigure(value('freshet_seen_filter_fill_ratio'), '%', 100),
    series: gaugeSeries(value('freshet_seen_filter_fill_ratio'), 100),
  },
  {
    id: 'seen-fpr',
    title: 'Seen filter false positives',
    what: "Estimated rate at which today's filter calls an unseen item seen (fill^k).",
    unit: '%',
    floor: 0.01,
    figure: gaugeFigure(value('freshet_seen_filter_false_positive_rate'), '%', 100),
    series: gaugeSeries(value('freshet_seen_filter_false_positive_rate'), 100),
  },
  {
    id: 'memory',
    title: 'Hot-state memory',
    what: 'Redis used_memory; on the embedded default (no Redis) the process RSS, which holds it.',
    unit: 'MB',
    figure: (hi) => {
      const v = memory(hi.last!);
      if (v === undefined) return 'Embedded: in-process (the process RSS is not reported).';
      return `${onRedis(hi.last!) ? 'Redis' : 'Embedded: in-process RSS'} ${withUnit(v / MB, 'MB')}`;
    },
    series: gaugeSeries(memory, 1 / MB),
  },
  {
    id: 'database',
    title: 'Database size',
    what: 'pg_database_size of the database Freshet uses (all its schemas).',
    unit: 'MB',
    figure: (hi) => {
      const db = database(hi.last!);
      if (!db) return 'Not reported by this server.';
      const where = db.engine === 'pglite' ? 'Embedded: PGlite, in-process' : 'PostgreSQL';
      return `${where} ${withUnit(db.bytes / MB, 'MB')}`;
    },
    series: gaugeSeries((s) => database(s)?.bytes, 1 / MB),
  },
];

function tile(t: Tile, history: History, intervalMs: number): HTMLElement {
  return h(
    'section',
    { class: 'tile', 'data-tile': t.id },
    h('h3', {}, t.title),
    h('p', { class: 'figure' }, t.figure(history)),
    timeChart(t.series(history), { label: t.title, unit: t.unit, intervalMs, slots: KEEP, floor: t.floor }),
    h('p', { class: 'meta' }, t.what),
  );
}

/** The stores tile: each store up or down (from `/readyz`), and how many answered at each sample. */
function storesTile(stores: Record<string, boolean> | null, up: (number | null)[], intervalMs: number): HTMLElement {
  return h(
    'section',
    { class: 'tile', 'data-tile': 'stores' },
    h('h3', {}, 'Stores'),
    stores ? storeList(stores) : h('p', { class: 'figure bad' }, 'No answer from /readyz.'),
    timeChart(up, { label: 'Stores up', unit: 'stores', intervalMs, slots: KEEP }),
    h('p', { class: 'meta' }, 'Each store as /readyz finds it (PGlite answers as postgres on the embedded default).'),
  );
}

/** The stores of `/readyz`, whether it answered ready (200) or not (503 names them too); null: no answer. */
async function readStores(ctx: Parameters<Page>[1]): Promise<Record<string, boolean> | null> {
  try {
    return (await ctx.client.ready()).stores;
  } catch (err) {
    return notReadyStores(err);
  }
}

/** The Overview page (see the module doc): samples every {@link sampleMs} until the person leaves it. */
export const overviewPage: Page = (root, ctx) => {
  const status = statusLine();
  const grid = h('div', { class: 'tiles' });
  const history = new History();
  const up: (number | null)[] = [];
  const intervalMs = sampleMs();
  const takeSample = async () => {
    const stores = await readStores(ctx);
    up.push(stores ? Object.values(stores).filter(Boolean).length : null);
    if (up.length > KEEP) up.shift();
    try {
      history.push({ atMs: Date.now(), scrape: parseProm(await ctx.client.metrics()) });
      replace(
        grid,
        storesTile(stores, up, intervalMs),
        TILES.map((t) => tile(t, history, intervalMs)),
      );
      grid.dataset.samples = String(history.samples.length);
      status.textContent = '';
    } catch (err) {
      status.textContent = `Could not read /metrics: ${describe(err)}`;
      replace(grid, storesTile(stores, up, intervalMs)); // what /readyz said still shows
    }
  };
  replace(
    root,
    h(
      'div',
      { class: 'toolbar' },
      h('h2', {}, 'Overview'),
      h('span', { class: 'meta' }, `sampled every ${intervalMs / 1000} s while this page is open`),
    ),
    status,
    grid,
  );
  return sampleEvery(intervalMs, takeSample);
};
