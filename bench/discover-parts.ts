/**
 * The parts of a discover page (note 3), each timed alone on the same stores as bench/discover.ts,
 * as bench/feed.ts does for the for-you feed: where a phase-2 page's time goes. Floors measured in
 * the same run: Redis `PING` and PostgreSQL `SELECT 1`.
 *
 * Parts: exclusions snapshot (`forReader`), reader query uncached (signals read + decayed mean +
 * sketch + probe ranges), the vector search SQL (`nearest`), the exact cosine ranking of its pool in
 * Node, the trending read (hot ranking's cached list), the followed and newest keyset SQL, the seen
 * check of 60 candidates, hydration of 20 items, and the impressions write of 20.
 */
import { PostgresDiscoverIndex } from '../src/adapters/postgres/discover-index.js';
import type { Sql } from '../src/adapters/postgres/sql.js';
import type { Freshet } from '../src/container.js';
import { cosine } from '../src/domain/embedding.js';
import { DEFAULT_RANGE, parseRange } from '../src/domain/hot.js';
import { openRedis } from './support.js';
import { timeLoop, timingRow, type Summary } from './stats.js';

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
