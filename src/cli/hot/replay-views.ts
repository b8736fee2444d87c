/**
 * `freshet replay views`: streams a view log (default: the MIND long impressions) as views on virtual
 * time through the hot ranking's service API (HotRanking, not HTTP), then reports what happened and
 * cross-checks the HyperLogLog UV of every item against the exact count of distinct visitors.
 *
 * Steps: (1) a first pass over the log finds each log item's first view and the time span; (2) the
 * log items are mapped onto Freshet items (item-mapping.ts) and those are checked to exist and
 * registered; (3) a second pass sends every row as a view at its shifted time, `concurrency` in
 * flight in log order (one connection executes them in that order), with a rescoring pass every
 * `rescoreEveryMs` of virtual time (as the worker would) and a top-`top` snapshot every
 * `reportEveryMs`; (4) a final rescoring, snapshot and checkpoint; (5) the UV cross-check: for each
 * item with counted views, |UV − exact| / exact where exact = distinct visitors among the views that
 * counted (the log's rows for that item minus the isolated ones).
 */
import { Progress } from '../progress.js';
import { HOUR_MS } from '../../kernel/clock.js';
import { MAX_RANGE_MS, type ViewVerdict } from '../../hot/domain.js';
import type { ContentStore } from '../../kernel/items/content-store.js';
import type { HotCounters, ViewInput, ViewResult } from '../../hot/hot-counters.js';
import type { HotMaintenance } from '../../hot/maintenance.js';
import type { HotRanking } from '../../hot/service.js';
import { parseHn } from '../import-hn.js';
import { readViewLog, type LogView, type ViewLogOptions, type ViewLogStats } from './view-log.js';
import { ImportReadError, stoppedMessage } from '../input-file.js';
import { mapDirect, mapOntoCandidates, shiftFor, type Candidate } from './item-mapping.js';
import { formatReplayReport, uvCrossCheck, type ReplayReport, type TopSnapshot } from './replay-report.js';

export type { ReplayReport } from './replay-report.js';

/** What the replay drives. */
export interface ReplayDeps {
  /** Where views are written: the `recordViews` use case (src/use-cases/verbs.ts), as `POST /v1/views` does. */
  recordViews(views: readonly ViewInput[]): Promise<ViewResult[]>;
  hot: HotRanking;
  maintenance: HotMaintenance;
  counters: HotCounters;
  content: ContentStore;
}

/** Options of {@link replayViews}. */
export interface ReplayOptions extends Omit<ViewLogOptions, 'progress'> {
  logPath: string;
  /** `hn`: onto imported HN posts (needs `hnPath`); `direct`: keys are item ids. */
  mapping: 'hn' | 'direct';
  /** The HN posts file the items were imported from (the `hn` mapping's candidates). */
  hnPath?: string;
  /** ISO 8601 virtual day the first view's UTC day is moved to (`hn` default 2016-09-20T00:00:00Z). */
  start?: string;
  /** Virtual ms between rescoring passes (default 10 min). */
  rescoreEveryMs?: number;
  /** Virtual ms between top snapshots in the report (default 24 h). */
  reportEveryMs?: number;
  /** Items per snapshot (default 10). */
  top?: number;
  /** Views in flight (default 64). */
  concurrency?: number;
  /** Draw progress bars (default: when stderr is a TTY; otherwise a progress line every 5 s). */
  progress?: boolean;
  out?: (text: string) => void;
}

/** Default virtual start of the `hn` mapping (the last week of the HN sample, as `freshet simulate`). */
export const REPLAY_START = '2016-09-20T00:00:00Z';

/**
 * Runs the replay and prints its report.
 * @throws Error when the log or the HN file cannot be read, or mapped items are missing from the store.
 */
export async function replayViews(deps: ReplayDeps, opts: ReplayOptions): Promise<ReplayReport> {
  const started = performance.now();
  const out = opts.out ?? ((text: string) => process.stdout.write(`${text}\n`));
  const logOpts: ViewLogOptions = { columns: opts.columns, filter: opts.filter, maxRows: opts.maxRows };
  const { scan, shift, map, itemIds } = await prepareReplay(deps, opts, logOpts, out);

  const report = newReport(scan, shift, itemIds.length, scan.firstSeen.size);
  const exact = new Map<string, Set<string>>();
  const rescoreEvery = opts.rescoreEveryMs ?? 10 * 60_000;
  const reportEvery = opts.reportEveryMs ?? 24 * HOUR_MS;
  const top = opts.top ?? 10;
  let nextRescore = scan.firstMs + shift + rescoreEvery;
  let nextReport = Math.floor((scan.firstMs + shift) / reportEvery) * reportEvery + reportEvery;
  const inflight: Promise<void>[] = [];
  const drain = async () => void (await Promise.all(inflight.splice(0)));
  const bar = new Progress({ label: 'replay views', total: scan.rows, counts: true, tty: opts.progress });
  try {
    for await (const row of readViewLog(opts.logPath, logOpts)) {
      const itemId = map.get(row.itemKey);
      if (itemId === undefined) {
        report.unmappedRows++;
        continue;
      }
      const nowMs = row.timeMs + shift;
      for (; nowMs >= nextRescore; nextRescore += rescoreEvery) {
        await drain();
        await deps.maintenance.rescore(nextRescore);
      }
      for (; nowMs >= nextReport; nextReport += reportEvery) {
        await drain();
        report.snapshots.push(await snapshot(deps, nextReport, top));
      }
      inflight.push(send(deps, row, itemId, nowMs, report.views, exact).then(() => bar.increment()));
      if (inflight.length >= (opts.concurrency ?? 64)) await inflight.shift();
    }
    await drain();
  } finally {
    bar.stop();
  }
  const endMs = scan.lastMs + shift;
  await deps.maintenance.rescore(endMs);
  report.snapshots.push(await snapshot(deps, endMs, top));
  await deps.maintenance.checkpoint(endMs);
  report.uv = await uvCrossCheck(deps.counters, exact);
  report.wallMs = performance.now() - started;
  out(formatReplayReport(report));
  return report;
}

/**
 * Before the replay: the log's first pass, the time shift onto the virtual start, each log item mapped
 * to an item of the store (checked to exist, its hot state resolved at the start), and a note when
 * some already have views.
 */
async function prepareReplay(
  deps: ReplayDeps,
  opts: ReplayOptions,
  logOpts: ViewLogOptions,
  out: (text: string) => void,
) {
  const scan = await scanLog(opts.logPath, logOpts, opts.progress);
  if (scan.rows === 0) throw new Error(`${opts.logPath}: no usable rows`);
  const start = opts.start ?? (opts.mapping === 'hn' ? REPLAY_START : undefined);
  const shift = start === undefined ? 0 : shiftFor(scan.firstMs, parseStart(start));
  const firstSeen = new Map([...scan.firstSeen].map(([k, t]) => [k, t + shift]));
  const { map } =
    opts.mapping === 'hn' ? mapOntoCandidates(firstSeen, await hnCandidates(opts.hnPath)) : mapDirect(firstSeen.keys());
  const itemIds = [...new Set(map.values())];
  await checkItems(deps.content, itemIds);
  await deps.hot.resolve(itemIds, scan.firstMs + shift);
  const already = (await deps.counters.counters(itemIds)).filter((c) => c.pv > 0).length;
  if (already > 0)
    out(
      `note: ${already} of the ${itemIds.length} items already have views (an earlier replay?); this replay adds to them\n`,
    );
  return { scan, shift, map, itemIds };
}

/** First pass: rows, time span, each log item's first view (logged time). */
async function scanLog(path: string, opts: ViewLogOptions, tty: boolean | undefined) {
  const stats: ViewLogStats = { rows: 0, skipped: 0, skippedExamples: [] };
  const firstSeen = new Map<string, number>();
  let firstMs = Infinity;
  let lastMs = -Infinity;
  const bar = new Progress({ label: 'replay views (reading the log)', total: 0, tty });
  const withProgress: ViewLogOptions = {
    ...opts,
    progress: (read, total) => (bar.setTotal(total), bar.update(read, `${stats.rows} rows`)),
  };
  try {
    for await (const v of readViewLog(path, withProgress, stats)) {
      const seen = firstSeen.get(v.itemKey);
      if (seen === undefined || v.timeMs < seen) firstSeen.set(v.itemKey, v.timeMs);
      if (v.timeMs < firstMs) firstMs = v.timeMs;
      if (v.timeMs > lastMs) lastMs = v.timeMs;
    }
  } catch (err) {
    if (!(err instanceof ImportReadError)) throw err;
    const resume = 'The log is read whole before the first view is sent: fix the file and run the same command again';
    throw new Error(stoppedMessage('replay views', err, { file: path, committedLine: 1, committed: null, resume }), {
      cause: err,
    });
  } finally {
    bar.stop();
  }
  return { ...stats, firstSeen, firstMs, lastMs };
}

function parseStart(start: string): number {
  const ms = Date.parse(start);
  if (!Number.isFinite(ms)) throw new Error(`start ${JSON.stringify(start)} is not an ISO 8601 date`);
  return ms;
}

async function hnCandidates(hnPath: string | undefined): Promise<Candidate[]> {
  if (!hnPath) throw new Error('the hn mapping needs the HN posts file (--hn)');
  const out: Candidate[] = [];
  for await (const batch of parseHn(hnPath, { batchSize: 2000 }))
    for (const it of batch.items) out.push({ id: it.id, publishedAt: it.publishedAt });
  return out;
}

/** @throws Error when some mapped items are not live in the content store. */
async function checkItems(content: ContentStore, ids: readonly string[]): Promise<void> {
  let missing = 0;
  let example = '';
  for (let i = 0; i < ids.length; i += 1000) {
    const chunk = ids.slice(i, i + 1000);
    const found = new Set((await content.getItems(chunk)).map((it) => it.id));
    for (const id of chunk) if (!found.has(id)) missing++, (example ||= id);
  }
  if (missing > 0)
    throw new Error(`${missing} mapped items are not in the store (e.g. ${example}): run \`freshet import hn\` first`);
}

async function send(
  deps: ReplayDeps,
  row: LogView,
  itemId: string,
  nowMs: number,
  views: Record<ViewVerdict, number>,
  exact: Map<string, Set<string>>,
): Promise<void> {
  const [r] = await deps.recordViews([{ itemId, visitorId: row.visitorId, nowMs }]);
  views[r!.verdict]++;
  if (r!.verdict !== 'counted') return;
  let set = exact.get(itemId);
  if (!set) exact.set(itemId, (set = new Set()));
  set.add(row.visitorId);
}

async function snapshot(deps: ReplayDeps, atMs: number, top: number): Promise<TopSnapshot> {
  const snap = await deps.hot.refresh(atMs);
  const entries = snap.entries
    .filter((e) => e.item.publishedAt >= atMs - MAX_RANGE_MS)
    .slice(0, top)
    .map((e) => ({
      id: e.item.id,
      title: e.item.title,
      ageHours: (atMs - e.item.publishedAt) / HOUR_MS,
      pv: e.pv,
      uv: e.uv,
      score: e.score,
    }));
  return { atMs, entries };
}

function newReport(
  scan: { rows: number; skipped: number; skippedExamples: string[]; firstMs: number; lastMs: number },
  shift: number,
  items: number,
  logItems: number,
): ReplayReport {
  return {
    rows: scan.rows,
    skipped: scan.skipped,
    skippedExamples: scan.skippedExamples,
    unmappedRows: 0,
    logItems,
    items,
    views: { counted: 0, repeat: 0, budget: 0, flagged: 0, expired: 0, unknown: 0 },
    virtualFromMs: scan.firstMs + shift,
    virtualToMs: scan.lastMs + shift,
    shiftMs: shift,
    wallMs: 0,
    snapshots: [],
    uv: {
      items: 0,
      meanRelErr: 0,
      maxRelErr: 0,
      maxItem: '',
      maxItemExact: 0,
      maxItemUv: 0,
      large: { minExact: 100, items: 0, meanRelErr: 0, maxRelErr: 0 },
    },
  };
}
