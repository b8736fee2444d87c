/**
 * `freshet simulate discover`: replays reader sessions against the discover feed (docs/discover.md) in process,
 * on virtual time, over real data, and reports duplicates, phase mix, exclusions and latency.
 *
 * - Content: the HN posts (`hn_<id>`, text-embedded by the built-in embedder).
 * - Readers: MIND behaviors (reader, time; the click history and the clicked impressions) and
 *   MovieLens ratings as a second source of engagement history (reader `ml_<userId>`; rating ≥ 4 is an
 *   engagement, weight 3, else a view). MIND news ids and MovieLens movie ids do not exist in HN, so
 *   each is mapped onto an HN post by hash (history: any post; clicks: a post of the 72 h before the
 *   click, so the hot ranking — the trending slots — has fresh items).
 * - Follows: each reader follows 5 of the 200 most prolific HN authors, chosen by hash.
 * - Per session, in time order: the reader's history is written once (signals, views through the hot
 *   ranking, recent views through the exclusions), then `pages` pages of `limit` follow the cursor,
 *   then the session's clicks are recorded as views.
 * Runs on scratch stores (src/cli/scratch.ts: an in-memory PGlite or a schema of its own on the
 * configured PostgreSQL, a temporary data folder, a key prefix of its own on the configured Redis; all
 * removed after), printed before the report: the user's data is never touched, and readers never start
 * having "seen" what the replay serves from a previous run's filters.
 */
import { forJobs, type Config } from '../../compose/config.js';
import { openFreshet, type Freshet } from '../../compose/open.js';
import { ManualClock, HOUR_MS, DAY_MS } from '../../kernel/clock.js';
import type { ItemInput } from '../../kernel/items/content-store.js';
import { ENGAGEMENT_WEIGHT, VIEW_WEIGHT } from '../../discover/embeddings.js';
import type { DiscoverPage, DiscoverSource } from '../../discover/service.js';
import { parseHn } from '../import-hn.js';
import { inputLines, openInput } from '../input-file.js';
import { DEFAULT_START, notMindError, parseBehaviorsLine } from '../for-you/simulate-sessions.js';
import { fnv1a } from '../../kernel/hash.js';
import { authorsByItems } from '../authors.js';
import { MAX_PAGE_LIMIT } from '../args.js';
import { cliLogger } from '../log.js';
import { Progress } from '../progress.js';
import { openScratch } from '../scratch.js';
import { formatDiscoverReport, latency, type DiscoverReport } from './simulate-report.js';
import { upperBound } from '../hot/item-mapping.js';

export { formatDiscoverReport, type DiscoverReport } from './simulate-report.js';

/** Options of {@link runSimulateDiscover}. */
export interface SimulateDiscoverOptions {
  hnPath: string;
  behaviorsPath: string;
  ratingsPath: string;
  /** MIND sessions replayed (first N in time order; default 1000). */
  sessions?: number;
  /** MovieLens readers (default 100). */
  movielensReaders?: number;
  /** Only the newest N HN posts (default: all). */
  items?: number;
  pages?: number;
  /** Items per page, 1..100 (the API's cap; default 20). */
  limit?: number;
  /** Draw a progress bar (default: when stderr is a TTY; otherwise a progress line every 5 s). */
  progress?: boolean;
  out?: (text: string) => void;
}

interface Session {
  reader: string;
  t: number;
  history: { key: string; at: number; weight: number }[];
  clicks: string[];
}

const SOURCES: DiscoverSource[] = ['followed', 'trending', 'discovery', 'newest'];

/**
 * The non-empty lines of a plain or gzip file.
 * @throws InputRefused when the file is missing or not a file; ImportReadError when it stops being readable.
 */
async function* lines(path: string): AsyncGenerator<string> {
  const input = openInput(path);
  try {
    for await (const { text } of inputLines(input, path)) if (text) yield text;
  } finally {
    input.close();
  }
}

/**
 * MIND sessions shifted so the first day starts at DEFAULT_START.
 * @throws Error when the file has no valid behaviors line (not a MIND file).
 */
async function mindSessions(path: string, n: number): Promise<Session[]> {
  const out: Session[] = [];
  const invalid: { line: number; reason: string }[] = [];
  let lineNo = 0;
  for await (const line of lines(path)) {
    lineNo++;
    const parsed = parseBehaviorsLine(line);
    if (typeof parsed === 'string') {
      invalid.push({ line: lineNo, reason: parsed });
      continue;
    }
    const [, , , history, impressions] = line.split('\t');
    const t = parsed.timeMs;
    const hist = (history ?? '').split(' ').filter(Boolean);
    out.push({
      reader: parsed.userId,
      t,
      history: hist.map((key, i) => ({ key, at: t - (hist.length - i) * HOUR_MS, weight: VIEW_WEIGHT })),
      clicks: (impressions ?? '')
        .split(' ')
        .filter((x) => x.endsWith('-1'))
        .map((x) => x.slice(0, -2)),
    });
  }
  if (out.length === 0) throw notMindError(path, invalid);
  if (invalid.length > 0)
    process.stderr.write(
      `simulate discover: ${invalid.length} invalid behaviors lines skipped (first: line ${invalid[0]!.line}: ${invalid[0]!.reason})\n`,
    );
  out.sort((a, b) => a.t - b.t);
  const kept = out.slice(0, n);
  const first = kept[0]?.t ?? 0;
  const shift = Date.parse(DEFAULT_START) - (first - (first % DAY_MS));
  for (const s of kept) {
    s.t += shift;
    for (const h of s.history) h.at += shift;
  }
  return kept;
}

/** The header of a MovieLens ratings file. */
const RATINGS_HEADER = 'userId,movieId,rating,timestamp';

/**
 * MovieLens readers: their last 50 ratings end 1 h before a session placed in the MIND span by hash.
 * @throws Error when the file does not start with the ratings header.
 */
async function movielensSessions(path: string, readers: number, from: number): Promise<Session[]> {
  const byUser = new Map<string, { key: string; ts: number; rating: number }[]>();
  let first = true;
  for await (const line of lines(path)) {
    if (first) {
      first = false;
      if (line.trim() !== RATINGS_HEADER)
        throw new Error(
          `${path}: not a MovieLens ratings file (first line ${JSON.stringify(line.slice(0, 80))}, expected "${RATINGS_HEADER}")`,
        );
      continue;
    }
    const [u, movie, rating, ts] = line.split(',');
    if (!u || !/^\d+$/.test(u) || Number(u) > readers) continue;
    (byUser.get(u) ?? byUser.set(u, []).get(u)!).push({
      key: `m${movie}`,
      ts: Number(ts) * 1000,
      rating: Number(rating),
    });
  }
  return [...byUser].map(([u, rs]) => {
    rs.sort((a, b) => a.ts - b.ts);
    const last = rs.slice(-50);
    const t = from + (fnv1a(u) % (6 * 24)) * HOUR_MS;
    const end = last.at(-1)!.ts;
    return {
      reader: `ml_${u}`,
      t,
      history: last.map((r) => ({
        key: r.key,
        at: t - HOUR_MS - (end - r.ts),
        weight: r.rating >= 4 ? ENGAGEMENT_WEIGHT : VIEW_WEIGHT,
      })),
      clicks: [],
    };
  });
}

/** Runs the replay and prints the report. */
export async function runSimulateDiscover(base: Config, opts: SimulateDiscoverOptions): Promise<DiscoverReport> {
  const out = opts.out ?? ((text: string) => process.stdout.write(`${text}\n`));
  const limit = opts.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT)
    throw new Error(`limit must be an integer in 1..${MAX_PAGE_LIMIT} (the discover feed's cap)`);
  const mind = await mindSessions(opts.behaviorsPath, opts.sessions ?? 1000); // checked before the long load
  const ml = await movielensSessions(opts.ratingsPath, opts.movielensReaders ?? 100, mind[0]!.t);
  openInput(opts.hnPath).close(); // a missing posts file is said now, not after the stores are set up
  const scratch = await openScratch(base, 'discover');
  out(`simulate discover: ${scratch.where}`);
  const clock = new ManualClock(Date.parse(DEFAULT_START));
  const f = await openFreshet(forJobs(scratch.config), {
    sql: scratch.sql,
    clock,
    defaultMetrics: false,
    recoverHot: false,
    log: cliLogger(base),
  }).catch(async (err: unknown) => {
    await scratch.sql.close();
    await scratch.remove();
    throw err;
  });
  const started = performance.now();
  try {
    const items: ItemInput[] = [];
    for await (const batch of parseHn(opts.hnPath, { batchSize: 1000 })) items.push(...batch.items);
    items.sort((a, b) => a.publishedAt - b.publishedAt);
    if (opts.items !== undefined) items.splice(0, Math.max(0, items.length - opts.items));
    const loading = new Progress({
      label: 'simulate discover (publishing the posts)',
      total: items.length,
      counts: true,
      tty: opts.progress,
    });
    try {
      for (let i = 0; i < items.length; i += 1000) {
        await f.useCases.publishItems(items.slice(i, i + 1000), items.at(-1)!.publishedAt);
        loading.update(Math.min(items.length, i + 1000));
      }
      await f.discover.embeddings.embedMissing(clock.now());
    } finally {
      loading.stop();
    }
    const sessions = [...mind, ...ml].sort((a, b) => a.t - b.t);
    const report = await replay(f, items, sessions, opts.pages ?? 3, limit, opts.progress);
    report.readers = { mind: new Set(mind.map((s) => s.reader)).size, movielens: ml.length };
    report.wallMs = Math.round(performance.now() - started);
    out(formatDiscoverReport(report));
    return report;
  } finally {
    await f.close();
    await scratch.remove();
  }
}

/**
 * Writes a reader's history through the use cases, oldest first: engagement-weighted entries (a high
 * MovieLens rating) as likes, the others as views (hot counters, reader signals, recent views).
 */
async function writeHistory(
  f: Freshet,
  history: { readerId: string; itemId: string; atMs: number; weight: number }[],
): Promise<void> {
  const views = history
    .filter((h) => h.weight < ENGAGEMENT_WEIGHT)
    .map((h) => ({ itemId: h.itemId, visitorId: h.readerId, nowMs: h.atMs }));
  if (views.length > 0) await f.useCases.recordViews(views);
  for (const h of history)
    if (h.weight >= ENGAGEMENT_WEIGHT) await f.useCases.recordEngagement(h.readerId, h.itemId, 'like', h.atMs);
}

/** Plays the sessions in time order and gathers the report. */
async function replay(
  f: Freshet,
  items: ItemInput[],
  sessions: Session[],
  pages: number,
  limit: number,
  tty: boolean | undefined,
): Promise<DiscoverReport> {
  const progress = new Progress({ label: 'simulate discover', total: sessions.length, counts: true, tty });
  try {
    return await replaySessions(f, items, sessions, pages, limit, progress);
  } finally {
    progress.stop();
  }
}

async function replaySessions(
  f: Freshet,
  items: ItemInput[],
  sessions: Session[],
  pages: number,
  limit: number,
  progress: Progress,
): Promise<DiscoverReport> {
  const ids = items.map((i) => i.id);
  const times = items.map((i) => i.publishedAt);
  const anyItem = (key: string) => ids[fnv1a(key) % ids.length]!;
  const freshItem = (key: string, t: number) => {
    const hi = upperBound(times, t);
    const lo = upperBound(times, t - 72 * HOUR_MS);
    return hi > lo ? ids[lo + (fnv1a(key) % (hi - lo))]! : anyItem(key);
  };
  const authors = authorsByItems(items).slice(0, 200);
  await f.useCases.registerUsers([...authors, ...new Set(sessions.map((s) => s.reader))], sessions[0]?.t ?? 0);
  const r: DiscoverReport = blankReport(items.length);
  const served = new Map<string, Set<string>>();
  const primed = new Set<string>();
  const lat: number[] = [];
  for (const s of sessions) {
    if (!primed.has(s.reader)) {
      primed.add(s.reader);
      r.signals += await primeReader(f, s, authors, anyItem);
    }
    const mine = served.get(s.reader) ?? served.set(s.reader, new Set()).get(s.reader)!;
    let cursor: string | undefined;
    r.sessions++;
    for (let p = 0; p < pages; p++) {
      const t0 = performance.now();
      const page = await f.discover.feed.page(s.reader, limit, cursor, s.t + p * 1000);
      lat.push(performance.now() - t0);
      countPage(r, page, mine);
      if (page.nextCursor === null) {
        r.lastPages++;
        break;
      }
      if (page.items.length < limit) r.shortPages++;
      cursor = page.nextCursor;
    }
    const views = s.clicks.map((c) => ({ itemId: freshItem(c, s.t), visitorId: s.reader, nowMs: s.t + pages * 1000 }));
    if (views.length) await f.useCases.recordViews(views);
    progress.update(r.sessions, `${r.pages} pages, ${r.duplicates} duplicates`);
  }
  for (const k of SOURCES) {
    r.phaseMix[k] = r.pages ? r.phaseMix[k] / r.pages : 0;
    r.pagesWith[k] = r.pages ? r.pagesWith[k] / r.pages : 0;
  }
  r.latencyMs = latency(lat);
  r.exitCode = r.duplicates > 0 ? 1 : 0;
  return r;
}

/**
 * Before a reader's first session: it follows 5 of the authors (a day earlier) and its history is written
 * as reader signals. @returns the signals written.
 */
async function primeReader(
  f: Freshet,
  s: Session,
  authors: readonly string[],
  anyItem: (key: string) => string,
): Promise<number> {
  for (let k = 0; k < 5; k++)
    await f.useCases
      .follow(s.reader, authors[fnv1a(`${s.reader}:${k}`) % authors.length]!, s.t - DAY_MS)
      .catch(() => undefined);
  const history = s.history.map((h) => ({
    readerId: s.reader,
    itemId: anyItem(h.key),
    atMs: h.at,
    weight: h.weight,
  }));
  await writeHistory(f, history);
  return history.length;
}

/** Counts one served page into the report: its items (a repeat of `mine`, the reader's served ids, is a duplicate), phases and exclusions. */
function countPage(r: DiscoverReport, page: DiscoverPage, mine: Set<string>): void {
  r.pages++;
  r.served += page.items.length;
  for (const it of page.items) mine.has(it.id) ? r.duplicates++ : mine.add(it.id);
  page.sources.forEach((src) => (r.phaseMix[src] += 1));
  for (const src of new Set(page.sources)) r.pagesWith[src] += 1;
  for (const [k, v] of Object.entries(page.stats.excluded)) r.excluded[k] = (r.excluded[k] ?? 0) + (v ?? 0);
  r.seenDropped += page.stats.seenDropped;
}

function blankReport(items: number): DiscoverReport {
  const zero = () => ({ followed: 0, trending: 0, discovery: 0, newest: 0 });
  return {
    items,
    readers: { mind: 0, movielens: 0 },
    signals: 0,
    sessions: 0,
    pages: 0,
    served: 0,
    duplicates: 0,
    shortPages: 0,
    lastPages: 0,
    phaseMix: zero(),
    pagesWith: zero(),
    excluded: {},
    seenDropped: 0,
    latencyMs: { p50: 0, p99: 0, max: 0 },
    wallMs: 0,
    exitCode: 0,
  };
}
