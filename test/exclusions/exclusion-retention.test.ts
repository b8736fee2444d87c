/**
 * The retention of engagements and feedback (src/exclusions/adapters/postgres-exclusion-retention.ts) on
 * PGlite and the PostgreSQL server: only rows no read reaches go — what `load` answers (the newest `cap`
 * engaged items, the newest `cap` feedback rows) is the same before and after, the newest engagements the
 * discover embedding reads stay — whatever their age, and a second pass deletes nothing.
 */
import { describe, expect, it } from 'vitest';
import {
  PostgresEngagementRetention,
  PostgresFeedbackRetention,
} from '../../src/exclusions/adapters/postgres-exclusion-retention.js';
import { PostgresExclusionStore } from '../../src/exclusions/adapters/postgres-exclusion-store.js';
import { RetentionSweeper } from '../../src/use-cases/retention.js';
import { DAY_MS } from '../../src/kernel/clock.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { sqlEngines } from '../support/contract.js';

const T = Date.UTC(2026, 2, 5);
const CAP = 10;
const SIGNALS = 5;
const KINDS = ['reply', 'like', 'share'] as const;

for (const engine of sqlEngines()) {
  describe(`exclusion retention (${engine.name})`, () => {
    it('deletes the engagements and feedback beyond what any read reaches, nothing a read answers', async () => {
      const { sql } = await engine.place();
      await sql.query(
        `INSERT INTO items (id, author_id, title, published_at, update_time, tsv)
         SELECT 'i' || g, 'au' || (g % 7), 't', $1::bigint, $1::bigint, ''::tsvector FROM generate_series(0, 199) g`,
        [T - 400 * DAY_MS],
      );
      const store = new PostgresExclusionStore(sql);
      // heavy: 60 items engaged, each with 1–3 kinds, a year ago to now; 25 dismissed
      for (let i = 0; i < 60; i++)
        for (const kind of KINDS.slice(0, 1 + (i % 3)))
          await store.recordEngagement('heavy', `i${i}`, kind, T - (60 - i) * 6 * DAY_MS + KINDS.indexOf(kind));
      for (let i = 0; i < 25; i++) await store.setFeedback('heavy', `i${100 + i}`, 'not_interested', T - i * DAY_MS);
      // light: below every bound
      for (let i = 0; i < 4; i++) await store.recordEngagement('light', `i${i}`, 'like', T - 300 * DAY_MS);
      await store.setFeedback('light', 'i150', 'not_interested', T - 300 * DAY_MS);
      const before = { heavy: await store.load('heavy', CAP), light: await store.load('light', CAP) };
      const newest = async () =>
        (
          await sql.query<{ item_id: string }>(
            'SELECT item_id FROM engagements WHERE reader_id = $1 ORDER BY created_at DESC LIMIT $2',
            ['heavy', SIGNALS],
          )
        ).map((r) => r.item_id);
      const newestBefore = await newest();
      const count = async (table: string, reader: string) =>
        Number(
          (await sql.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE reader_id = $1`, [reader]))[0]!.n,
        );
      const engagedBefore = await count('engagements', 'heavy');

      const sweeper = new RetentionSweeper(
        [
          new PostgresEngagementRetention(sql, { cap: CAP, signalLimit: SIGNALS }),
          new PostgresFeedbackRetention(sql, { cap: CAP }),
        ],
        silentLogger,
      );
      const deleted = await sweeper.sweep(T);
      expect(deleted).toEqual({ engagements: engagedBefore - 3 * CAP, feedback: 25 - CAP });
      expect(await count('engagements', 'heavy')).toBe(3 * CAP);
      expect(await count('feedback', 'heavy')).toBe(CAP);
      expect(await count('engagements', 'light')).toBe(4);
      expect({ heavy: await store.load('heavy', CAP), light: await store.load('light', CAP) }).toEqual(before);
      expect(await newest()).toEqual(newestBefore);
      expect(await sweeper.sweep(T + 365 * DAY_MS)).toEqual({ engagements: 0, feedback: 0 });
    }, 60_000);
  });
}
