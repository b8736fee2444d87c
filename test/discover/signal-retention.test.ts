/**
 * The retention of reader signals (src/discover/adapters/postgres-signal-retention.ts, run by the app's
 * RetentionSweeper), on PGlite and on the PostgreSQL server: rows older than the retention go, each
 * reader's newest `keep` stay whatever their age (ties at the `keep`-th time included), so what the
 * discover embedding reads — the newest `keep` — is the same before and after; a pass crosses many
 * steps (readers beyond one step, a reader with more doomed rows than one step deletes), and a second
 * pass deletes nothing.
 */
import { describe, expect, it } from 'vitest';
import {
  PostgresSignalRetention,
  READERS_PER_STEP,
  ROWS_PER_STEP,
} from '../../src/discover/adapters/postgres-signal-retention.js';
import { RetentionSweeper } from '../../src/use-cases/retention.js';
import { DAY_MS, HOUR_MS } from '../../src/kernel/clock.js';
import type { Sql } from '../../src/kernel/sql/sql.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { sqlEngines } from '../support/contract.js';

const NOW = Date.UTC(2026, 2, 6, 12);
const KEEP = 100;
const RETENTION = 7 * DAY_MS;

/** Inserts `n` signals of `reader`, the i-th at `at(i)`, items `it_<i>`. */
async function signals(sql: Sql, reader: string, n: number, at: (i: number) => number): Promise<void> {
  for (let start = 0; start < n; start += 1000) {
    const rows = Array.from({ length: Math.min(1000, n - start) }, (_, k) => start + k);
    const params: unknown[] = [];
    const tuples = rows.map((i) => {
      params.push(reader, at(i), `it_${i}`);
      const p = params.length;
      return `($${p - 2}::text, $${p - 1}::bigint, $${p}::text, 1)`;
    });
    await sql.query(`INSERT INTO reader_signals (reader_id, at, item_id, weight) VALUES ${tuples.join(',')}`, params);
  }
}

/** Every reader's signal times, newest first. */
async function byReader(sql: Sql): Promise<Map<string, number[]>> {
  const rows = await sql.query<{ reader_id: string; at: string | number }>(
    'SELECT reader_id, at FROM reader_signals ORDER BY reader_id, at DESC, item_id',
  );
  const out = new Map<string, number[]>();
  for (const r of rows) out.set(r.reader_id, [...(out.get(r.reader_id) ?? []), Number(r.at)]);
  return out;
}

for (const engine of sqlEngines()) {
  describe(`reader signal retention (${engine.name})`, () => {
    it('deletes signals past the retention except each reader’s newest, in bounded steps, idempotently', async () => {
      const { sql } = await engine.place();
      await signals(sql, 'heavy', 250, (i) => NOW - i * 6 * HOUR_MS); // 60 days, 4 a day
      await signals(sql, 'old', 30, (i) => NOW - 60 * DAY_MS - i); // few, all old: all stay
      await signals(sql, 'ties', 120, () => NOW - 30 * DAY_MS); // 120 at the same old time: all stay
      await signals(sql, 'bot', ROWS_PER_STEP + 2_000, (i) => NOW - 10 * DAY_MS - i); // more than one step deletes
      // more readers than one step reads, one old signal each: all stay
      await sql.query(
        `INSERT INTO reader_signals (reader_id, at, item_id, weight)
         SELECT 'r' || lpad(g::text, 4, '0'), $1::bigint, 'it_0', 1 FROM generate_series(0, $2::int - 1) g`,
        [NOW - 90 * DAY_MS, READERS_PER_STEP + 20],
      );
      const before = await byReader(sql);
      const task = new PostgresSignalRetention(sql, { keep: KEEP, retentionMs: RETENTION });
      const sweeper = new RetentionSweeper([task], silentLogger);

      const deleted = await sweeper.sweep(NOW);
      const after = await byReader(sql);
      // heavy: the newest 100 (25 days) stay; the other 150 are older than 7 days and go
      expect(after.get('heavy')).toEqual(before.get('heavy')!.slice(0, KEEP));
      expect(after.get('old')).toEqual(before.get('old'));
      expect(after.get('ties')).toEqual(before.get('ties'));
      expect(after.get('bot')).toEqual(before.get('bot')!.slice(0, KEEP));
      expect(after.get('r0000')).toHaveLength(1);
      expect(after.get(`r${String(READERS_PER_STEP + 19).padStart(4, '0')}`)).toHaveLength(1);
      expect(deleted).toEqual({ reader_signals: 150 + ROWS_PER_STEP + 2_000 - KEEP });
      // what the discover embedding reads (each reader's newest KEEP) is the same
      for (const [reader, times] of before) expect(after.get(reader)!.slice(0, KEEP)).toEqual(times.slice(0, KEEP));

      expect(await sweeper.sweep(NOW)).toEqual({ reader_signals: 0 }); // idempotent
      expect(await sweeper.sweep(NOW + 30 * DAY_MS)).toEqual({ reader_signals: 0 }); // the newest stay for ever
    }, 60_000);

    it('keeps everything with retention 0; keeps rows inside the retention beyond the newest', async () => {
      const { sql } = await engine.place();
      await signals(sql, 'a', 300, (i) => NOW - i * HOUR_MS); // 12.5 days, 24 a day
      const off = new PostgresSignalRetention(sql, { keep: KEEP, retentionMs: 0 });
      expect(await new RetentionSweeper([off], silentLogger).sweep(NOW)).toEqual({ reader_signals: 0 });
      const on = new PostgresSignalRetention(sql, { keep: KEEP, retentionMs: RETENTION });
      await new RetentionSweeper([on], silentLogger).sweep(NOW);
      const times = (await byReader(sql)).get('a')!;
      expect(times).toHaveLength(7 * 24 + 1); // 7 days of rows (the one exactly at the cutoff stays): more than KEEP
      expect(Math.min(...times)).toBe(NOW - RETENTION);
    });
  });
}
