/**
 * The parts of a discover page (note 3), each timed alone on the same stores as bench/discover.ts,
 * as bench/feed.ts does for the for-you feed: where a phase-2 page's time goes. Floors measured in
 * the same run: Redis `PING` and PostgreSQL `SELECT 1`.
 *
 * Parts: exclusions snapshot (`forReader`), reader query uncached (signals read + decayed mean), the
 * vector search alone (`VectorSearch.search`, k 200), the whole phase-2 stream (`nearest`, pool
 * configured: search + exact re-rank + filter SQL), the trending read (hot ranking's cached list), the
 * followed and newest keyset SQL, the seen check of 60 candidates, hydration of 20 items, and the
 * impressions write of 20.
 */
import { PostgresDiscoverIndex } from '../src/discover/adapters/postgres-discover-index.js';
import type { Sql } from '../src/kernel/sql/sql.js';
import type { Freshet } from '../src/compose/open.js';
import { DEFAULT_RANGE, parseRange } from '../src/hot/domain.js';
import { openRedis } from './support.js';
import { timeLoop, timingRow, type Summary } from './stats.js';

const LOOP = { warmup: 10, iterations: 300, seconds: 8 };

/** Timing rows of the parts at one size; `n` items `b0…`, readers `r<i>` with signals. */
export async function discoverParts(f: Freshet, sql: Sql, n: number, now: number): Promise<string[][]> {
  const index = new PostgresDiscoverIndex(sql, f.discover.vectors);
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
    await time('reader query, uncached (signals + decayed mean)', (i) =>
      f.discover.embeddings.readerQuery(reader(i), now - 1000 - i),
    );
    const queries = await Promise.all(
      Array.from({ length: 200 }, (_, i) => f.discover.embeddings.readerQuery(reader(i), now)),
    );
    const q = (i: number) => queries[Math.abs(i) % 200]!.vector;
    const pool = f.discover.feed.settings.pool;
    await time(`vector search alone (${f.discover.vectors.stats().kind}, k 200)`, (i) =>
      f.discover.vectors.search(q(i), 200),
    );
    await time(`phase-2 stream (nearest: search + re-rank + filter SQL, ${pool})`, (i) =>
      index.nearest({ vector: q(i), untilMs: now, readerId: reader(i), limit: pool, after: null, minSimilarity: 0 }),
    );
    await time('trending read (hot list, 72 h)', () => f.hot.top(parseRange(DEFAULT_RANGE)!, 200, now));
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
