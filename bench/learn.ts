/**
 * The learning room's cost (docs/learning.md "Cost"): `npx tsx bench/learn.ts [--pairs=100k,1m]`.
 *
 * Data: synthetic engagements on PostgreSQL — `pairs` (reader, item) pairs over pairs / 40 readers and
 * pairs / 10 items, the item of each pair drawn from a Zipf(1) popularity and each reader's history
 * length from a log-normal around 40 (a heavy tail, as real engagement) — written by PostgreSQL itself
 * (`INSERT … SELECT generate_series`), so loading 1M pairs takes seconds.
 *
 * At each size: a full build of the co-engagement neighbours (the builder's first tick: every pair read,
 * every row computed and written), its parts (reading the pairs; computing every row alone, as a baseline
 * of the same run), the tables' sizes (`pg_total_relation_size`), one factor training (ALS, 64 factors,
 * 10 alternations) and the model's size, an incremental tick after 1,000 new pairs (the rows it makes
 * stale, and the time to settle them), and a reader's learned recall (neighbours + factor scan) p50/p99,
 * for 200 of the heaviest readers (up to 500 pairs each) with their neighbour rows not yet cached, then
 * cached.
 */
import pino from 'pino';
import { openPostgres, type Sql } from '../src/kernel/sql/sql.js';
import { migrate } from '../src/compose/migrations.js';
import { PostgresInteractionStore } from '../src/learn/adapters/postgres-interactions.js';
import { PostgresModelStore } from '../src/learn/adapters/postgres-model-store.js';
import { LearnBuilder } from '../src/learn/builder.js';
import { FactorIndex, FactorTrainer } from '../src/learn/factor-model.js';
import { allRows } from '../src/learn/neighbours.js';
import { LearnedRecall } from '../src/learn/recall.js';
import { fmtInt, printNotes, printTable, timeLoop } from './stats.js';
import { BENCH_DATABASE_URL, dropSchema, printTitle, range, runIfMain, uniqueSchema, withCleanup } from './support.js';

const NOW = Date.UTC(2026, 2, 6, 12);
const SETTINGS = { k: 100, shrink: 10, historyCap: 500, budget: 1e12, popularityHalfLifeMs: 24 * 3_600_000 };
const ALS = { factors: 64, regularization: 10, alpha: 1, iterations: 10, cgSteps: 3, seed: 42 };
const log = pino({ level: 'silent' });

/** `n` pairs written by PostgreSQL: readers r<k>, items i<k> by Zipf(1) (inverse CDF over a harmonic ramp). */
async function load(sql: Sql, pairs: number): Promise<void> {
  const readers = Math.max(10, Math.round(pairs / 40));
  const items = Math.max(10, Math.round(pairs / 10));
  const chunk = 200_000;
  for (let at = 0; at < pairs; at += chunk) {
    await sql.query(
      `INSERT INTO interactions (reader_id, item_id, kinds, at)
       SELECT 'r' || (floor(${readers} * power(random(), 2.5)))::int,
              'i' || (floor(exp(random() * ln(${items}))) - 1)::int,
              CASE WHEN random() < 0.3 THEN 3 ELSE 1 END,
              ${NOW} - (random() * 86400000 * 30)::bigint
       FROM generate_series(1, $1::int)
       ON CONFLICT DO NOTHING`,
      [Math.min(chunk, pairs - at)],
    );
  }
  await sql.exec('ANALYZE interactions');
}

/** Bytes of a table with its indexes and TOAST. */
async function tableBytes(sql: Sql, table: string): Promise<number> {
  const rows = await sql.query<{ n: string | number }>(`SELECT pg_total_relation_size($1::regclass) AS n`, [table]);
  return Number(rows[0]!.n);
}

const mb = (b: number) => `${(b / 1048576).toFixed(1)} MB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function atSize(label: string, pairs: number): Promise<string[][]> {
  return withCleanup(async (cleanup) => {
    const schema = uniqueSchema();
    const sql = await openPostgres(BENCH_DATABASE_URL, { schema });
    cleanup.add(async () => {
      await sql.close();
      await dropSchema(schema);
    });
    await migrate(sql);
    let t = performance.now();
    await load(sql, pairs);
    const loaded = performance.now() - t;
    const store = new PostgresInteractionStore(sql);
    const models = new PostgresModelStore(sql);
    const builder = new LearnBuilder(store, models, SETTINGS, log);
    t = performance.now();
    await builder.settle(NOW);
    const build = performance.now() - t;
    const g = builder.current.compact();
    t = performance.now();
    allRows(g, SETTINGS);
    const computeOnly = performance.now() - t;
    const trainer = new FactorTrainer(builder, models, ALS, log);
    t = performance.now();
    await trainer.train(NOW);
    const train = performance.now() - t;
    // an incremental tick: 1,000 new pairs by existing readers on existing items
    await sql.query(
      `INSERT INTO interactions (reader_id, item_id, kinds, at)
       SELECT reader_id, item_id, 2, ${NOW + 1} FROM interactions TABLESAMPLE SYSTEM (5) LIMIT 1000
       ON CONFLICT (reader_id, item_id) DO UPDATE SET kinds = interactions.kinds | 2, at = excluded.at, changed = pg_current_xact_id()`,
    );
    t = performance.now();
    const tick = await builder.tick(NOW + 1);
    const settleMs = performance.now() - t;
    const sizes = await Promise.all(
      ['interactions', 'item_neighbours', 'item_popularity', 'item_factors'].map((x) => tableBytes(sql, x)),
    );
    const recall = new LearnedRecall(
      store,
      models,
      { historyCap: 500, rowCacheTtlMs: 3_600_000, rowCacheRows: 1_000_000 },
      new FactorIndex(models, { ...ALS, pollMs: 3_600_000 }, () => NOW),
    );
    const readers = range(200, (k) => `r${k}`);
    await recall.recommend('r999999', 500); // loads the model
    // each reader once with its rows not yet cached, then again with them cached (a session's next pages)
    const cold = await timeLoop((i) => recall.recommend(readers[i]!, 500), { seconds: 30, iterations: readers.length });
    const s = await timeLoop((i) => recall.recommend(readers[i % readers.length]!, 500), {
      seconds: 4,
      iterations: 2000,
    });
    return [
      [
        label,
        'pairs / readers / items',
        `${fmtInt(g.readerItems.length)} / ${fmtInt(g.readers)} / ${fmtInt(g.items)}`,
        `loaded in ${secs(loaded)}`,
      ],
      [label, 'neighbours: full build (read + compute + write)', secs(build), `compute alone ${secs(computeOnly)}`],
      [
        label,
        'neighbours: tick after 1,000 new pairs',
        secs(settleMs),
        `${fmtInt(tick.rows)} rows rewritten, ${fmtInt(tick.stale)} left`,
      ],
      [label, 'factors: ALS training (64 f, 10 it.)', secs(train), ''],
      [label, 'tables: interactions / neighbours / popularity / factors', sizes.map(mb).join(' / '), ''],
      [
        label,
        'learned recall of a reader, rows not cached (p50 / p99)',
        `${cold.p50.toFixed(2)} / ${cold.p99.toFixed(2)} ms`,
        `n = ${fmtInt(cold.n)}`,
      ],
      [
        label,
        'learned recall of a reader, rows cached (p50 / p99)',
        `${s.p50.toFixed(2)} / ${s.p99.toFixed(2)} ms`,
        `n = ${fmtInt(s.n)}`,
      ],
    ];
  });
}

export async function run(
  sizes: [string, number][] = [
    ['100k', 100_000],
    ['1M', 1_000_000],
  ],
): Promise<void> {
  printTitle('Learning room: build, size and recall cost against the number of engagements');
  const rows: string[][] = [];
  for (const [label, n] of sizes) rows.push(...(await atSize(label, n)));
  printTable('learning room (PostgreSQL)', ['size', 'what', 'figure', 'note'], rows);
  printNotes(
    'a build is one process; serving processes only read the rows and the model',
    'times are the wall time of one run on this machine (bench/README.md gives its CPU)',
  );
}

runIfMain(import.meta.url, async () => {
  const arg = process.argv.find((a) => a.startsWith('--pairs='))?.slice(8);
  const sizes = arg
    ? arg.split(',').map((x): [string, number] => [x, Number(x.replace(/k$/i, '000').replace(/m$/i, '000000'))])
    : undefined;
  await run(sizes);
});
