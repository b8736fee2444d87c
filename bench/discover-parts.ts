/**
 * The parts of a discover page (note 3), each timed alone on the same stores as bench/discover.ts,
 * as bench/feed.ts does for the for-you feed: where a phase-2 page's time goes. Floors measured in
 * the same run: Redis `PING` and PostgreSQL `SELECT 1`.
 *
 * Parts: exclusions snapshot (`forReader`), reader query uncached (signals read + decayed mean +
 * sketch + probe ranges), the vector search SQL (`nearest`), the exact cosine ranking of its pool in
 * Node, the trending read (hot ranking's cached list), the followed and newest keyset SQL, the seen
 * check of 60 candidates, hydration of 20 items, and the impressions write of 20.
 *
 * {@link recallRows}: the vector search's recall@20 against an exact scan (all vectors, cosine in Node)
 * and the found top 20's summed cosine as a share of the exact top 20's, with the SQL latency, for a few
 * `scan_rows` / `probes` settings.
 *
 * {@link pageBreakdown}: whole phase-2 pages through a DiscoverFeed whose dependencies are wrapped in
 * timers — calls and milliseconds per page for each dependency method (calls that overlap in time are
 * each counted in full, so the column can sum to more than the page).
 */
import { PostgresDiscoverIndex } from '../src/adapters/postgres/discover-index.js';
import type { Sql } from '../src/adapters/postgres/sql.js';
import type { Freshet } from '../src/container.js';
import { cosine, prefixBits, probeRanges } from '../src/domain/embedding.js';
import { DEFAULT_RANGE, parseRange } from '../src/domain/hot.js';
import { hotTrending } from '../src/container-discover.js';
import { CursorCodec } from '../src/services/discover-cursor.js';
import { DiscoverFeed, type DiscoverDeps } from '../src/services/discover-feed.js';
import { openRedis } from './support.js';
import { fmtMs, timeLoop, timingRow, type Summary } from './stats.js';

const LOOP = { warmup: 10, iterations: 300, seconds: 8 };

/** Timing rows of the parts at one size; `n` items `b0…`, readers `r<i>` with signals. */
export async function discoverParts(f: Freshet, sql: Sql, n: number, now: number): Promise<string[][]> {
  const index = new PostgresDiscoverIndex(sql);
  const redis = openRedis();
  const label = (what: string) => `${n / 1000}k: ${what}`;
  const reader = (i: number) => `r${Math.abs(i) % 200}`;
  const ids = (i: number, k: number) => Array.from({ length: k }, (_, j) => `b${(Math.abs(i) * 97 + j * 13) % n}`);
  const rows: [string, Summary][] = [];
  const time = async (what: string, fn: (i: number) => unknown) => rows.push([label(what), await timeLoop(fn, LOOP)]);
  try {
    const ping = await timeLoop(() => redis.ping(), LOOP);
    const select1 = await timeLoop(() => sql.query('SELECT 1'), LOOP);
    rows.push([label('floor: Redis PING'), ping], [label('floor: PostgreSQL SELECT 1'), select1]);
    await time('exclusions snapshot (forReader)', (i) => f.exclusions.forReader(reader(i), now));
    // a fresh t0 each call: the reader query is cached per (reader, t0)
    await time('reader query, uncached (signals + mean + sketch)', (i) => f.discover.embeddings.readerQuery(reader(i), now - 1000 - i));
    const q = (await f.discover.embeddings.readerQuery('r0', now))!;
    const pool = f.discover.feed.settings.pool;
    await time(`vector search SQL (nearest, pool ${pool})`, (i) => index.nearest({ sketch: q.sketch.bits, ranges: q.ranges, untilMs: now, pool, readerId: reader(i) }));
    const found = await index.nearest({ sketch: q.sketch.bits, ranges: q.ranges, untilMs: now, pool, readerId: 'r0' });
    await time(`exact cosine ranking of ${found.length} in Node`, () => found.map((r) => cosine(q.vector, r.vector)).sort((a, b) => b - a));
    await time('trending read (hot list, 72 h)', () => f.hot.hot(parseRange(DEFAULT_RANGE)!, 200, now));
    await time('followed SQL (60, follows nobody)', (i) => index.followed(reader(i), now, null, 60));
    await time('newest SQL (60)', (i) => index.newest(reader(i), now, null, 60));
    await time('seen check, 60 candidates', (i) => f.readerSeen.seen(reader(i), ids(i, 60), now));
    await time('hydration, 20 items', (i) => f.content.getItems(ids(i, 20)));
    await time('impressions write, 20 items', (i) => f.readerSeen.markSeen(`parts${i}`, ids(i, 20), now));
    return rows.map(([what, s]) => timingRow(what, s, {}, ping));
  } finally {
    redis.disconnect();
  }
}

/** Wraps every method of `obj` so each call's time and count go to `acc` under `name.method`. */
function timed<T extends object>(name: string, obj: T, acc: Map<string, { calls: number; ms: number }>): T {
  return new Proxy(obj, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return async (...args: unknown[]) => {
        const t = performance.now();
        try {
          return await (v as (...a: unknown[]) => unknown).apply(target, args);
        } finally {
          const a = acc.get(`${name}.${String(prop)}`) ?? { calls: 0, ms: 0 };
          a.calls++;
          a.ms += performance.now() - t;
          acc.set(`${name}.${String(prop)}`, a);
        }
      };
    },
  });
}

/** Phase-2 first pages of readers `r<i>` (as bench/discover.ts measures them), per dependency method. */
export async function pageBreakdown(f: Freshet, sql: Sql, n: number, now: number, pages: number): Promise<string[][]> {
  const acc = new Map<string, { calls: number; ms: number }>();
  const deps: DiscoverDeps = {
    index: timed('index', new PostgresDiscoverIndex(sql), acc),
    embeddings: timed('embeddings', f.discover.embeddings, acc),
    content: timed('content', f.content, acc),
    seen: timed('seen', f.readerSeen, acc),
    exclusions: timed('exclusions', f.exclusions, acc),
    trending: timed('trending', hotTrending(f.hot), acc),
    cursors: new CursorCodec('bench-secret-0123456789abcdef', 86_400_000),
    log: f.log,
  };
  const feed = new DiscoverFeed(deps, f.discover.feed.settings);
  let total = 0;
  for (let i = 0; i < pages; i++) {
    const t = performance.now();
    await feed.page(`r${i}`, 20, undefined, now + 1 + i); // a new t0: the reader query is not cached
    total += performance.now() - t;
  }
  const rows = [...acc].sort((a, b) => b[1].ms - a[1].ms).map(([k, a]) => [`${n / 1000}k: ${k}`, (a.calls / pages).toFixed(2), fmtMs(a.ms / pages)]);
  return [[`${n / 1000}k: whole page (mean)`, '1', fmtMs(total / pages)], ...rows];
}

/**
 * Recall@20 of the vector search (probe → Hamming pool → exact cosine of the pool) against the exact
 * top 20 by cosine over every stored vector, for readers `r0…r<readers-1>`, at several `scan_rows`
 * (probes as configured); with the SQL's p50/p99 at each.
 */
export async function recallRows(f: Freshet, sql: Sql, n: number, now: number, readers: number): Promise<string[][]> {
  const index = new PostgresDiscoverIndex(sql);
  const all = await sql.query<{ item_id: string; vec: Uint8Array }>('SELECT item_id, vec FROM item_embeddings');
  const vecs = all.map((r) => ({ id: r.item_id, v: new Int8Array(r.vec.buffer, r.vec.byteOffset, r.vec.byteLength) }));
  const pool = f.discover.feed.settings.pool;
  const queries = [];
  for (let i = 0; i < readers; i++) {
    const q = await f.discover.embeddings.readerQuery(`r${i}`, now);
    if (!q) continue;
    const exact = vecs.map((x) => ({ id: x.id, c: cosine(q.vector, x.v) })).sort((a, b) => b.c - a.c).slice(0, 20);
    queries.push({ q, exact: new Set(exact.map((x) => x.id)), exactCos: exact.reduce((s, x) => s + x.c, 0) });
  }
  const rows: string[][] = [];
  const settings = [[1000, 16], [2000, 16], [4000, 16], [8000, 16], [4000, 64]] as const;
  for (const [scanRows, probes] of settings) {
    const b = prefixBits(vecs.length, probes, scanRows);
    let hit = 0;
    let cosRatio = 0;
    const samples: number[] = [];
    for (const { q, exact, exactCos } of queries) {
      const ranges = probeRanges(q.sketch, b, probes);
      const t = performance.now();
      const found = await index.nearest({ sketch: q.sketch.bits, ranges, untilMs: now, pool, readerId: 'nobody' });
      samples.push(performance.now() - t);
      const top = found.map((r) => ({ id: r.id, c: cosine(q.vector, r.vector) })).sort((a, c) => c.c - a.c).slice(0, 20);
      hit += top.filter((x) => exact.has(x.id)).length;
      cosRatio += top.reduce((s, x) => s + x.c, 0) / exactCos;
    }
    samples.sort((a, c) => a - c);
    const at = (p: number) => samples[Math.min(samples.length - 1, Math.ceil(p * samples.length) - 1)] ?? 0;
    rows.push([`${n / 1000}k`, String(scanRows), String(b), String(probes), (hit / (20 * Math.max(1, queries.length))).toFixed(3), (cosRatio / Math.max(1, queries.length)).toFixed(3), fmtMs(at(0.5)), fmtMs(at(0.99))]);
  }
  return rows;
}
