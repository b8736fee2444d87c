/**
 * `freshet simulate`'s pieces that need no server: MIND time parsing, the shift onto virtual time,
 * the interests given to readers, per-reader serialization of the replay, and the report's
 * bookkeeping (duplicates within 7 days, page fill, percentiles, the Prometheus counter).
 * The run against a live server is the lead's end-to-end test.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/kernel/clock.js';
import { replayByReader } from '../../src/cli/for-you/simulate.js';
import { formatReport, percentile, promMetricSum, SimulateStats } from '../../src/cli/for-you/simulate-report.js';
import {
  INTEREST_TERMS,
  interestsFor,
  parseBehaviorsLine,
  parseMindTime,
  readMindSessions,
  shiftSessions,
  type VirtualSession,
} from '../../src/cli/for-you/simulate-sessions.js';
import { ImportReadError, InputRefused } from '../../src/cli/input-file.js';
import { dataFile } from '../support/env.js';

const REAL_BEHAVIORS = dataFile('mind/MINDsmall_train_sample_behaviors.tsv.gz');
const tmp = mkdtempSync(join(tmpdir(), 'freshet-mind-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('MIND times', () => {
  it('parses M/D/YYYY h:mm:ss AM/PM as UTC', () => {
    expect(parseMindTime('11/9/2019 12:01:13 AM')).toBe(Date.UTC(2019, 10, 9, 0, 1, 13));
    expect(parseMindTime('11/9/2019 12:30:00 PM')).toBe(Date.UTC(2019, 10, 9, 12, 30, 0));
    expect(parseMindTime('1/2/2019 1:05:09 PM')).toBe(Date.UTC(2019, 0, 2, 13, 5, 9));
    expect(parseMindTime('11/14/2019 11:50:13 PM')).toBe(Date.UTC(2019, 10, 14, 23, 50, 13));
  });

  it('rejects what is not such a time', () => {
    for (const bad of [
      '2/30/2019 1:00:00 AM',
      '13/1/2019 1:00:00 AM',
      '11/9/2019 00:01:13',
      '11/9/2019 13:01:13 PM',
      '2019-11-09T00:01:13',
      '',
    ]) {
      expect(parseMindTime(bad), bad).toBeNull();
    }
  });

  it('parses behaviors lines and explains bad ones', () => {
    expect(parseBehaviorsLine('27660\tU25550\t11/9/2019 12:02:44 AM\tN1 N2\tN3-0 N4-1')).toEqual({
      impressionId: '27660',
      userId: 'U25550',
      timeMs: Date.UTC(2019, 10, 9, 0, 2, 44),
    });
    expect(parseBehaviorsLine('1\tU1\t11/9/2019 12:02:44 AM')).toMatch(/3 fields/);
    expect(parseBehaviorsLine('1\tU:1\t11/9/2019 12:02:44 AM\t\tN3-0')).toMatch(/not a valid reader id/);
    expect(parseBehaviorsLine('1\tU1\tyesterday\t\tN3-0')).toMatch(/time "yesterday"/);
  });
});

describe('sessions on virtual time', () => {
  const fixture = [
    '3\tU2\t11/10/2019 9:15:00 AM\tN1\tN2-1',
    '1\tU1\t11/9/2019 6:00:00 PM\t\tN2-0 N3-1',
    'broken line',
    '2\tU1\t11/12/2019 8:00:30 AM\tN3\tN4-0',
    '',
  ].join('\n');

  it('reads a gzip file, sorts by time and reports invalid lines', async () => {
    const path = join(tmp, 'behaviors.tsv.gz');
    writeFileSync(path, gzipSync(fixture));
    const { sessions, invalid } = await readMindSessions(path);
    expect(sessions.map((s) => s.impressionId)).toEqual(['1', '3', '2']);
    expect(invalid).toEqual([{ line: 3, reason: '1 fields, expected 5' }]);
  });

  it('refuses a missing file or a folder in one line naming it, and a truncated gzip naming the last line read', async () => {
    await expect(readMindSessions(join(tmp, 'missing.tsv.gz'))).rejects.toThrow(
      new InputRefused(
        `${join(tmp, 'missing.tsv.gz')}: no such file — check the path (the data sets are in ../shared/data/, beside the repository)`,
      ),
    );
    await expect(readMindSessions(tmp)).rejects.toBeInstanceOf(InputRefused);
    const cut = join(tmp, 'cut.tsv.gz');
    const whole = gzipSync(fixture);
    writeFileSync(cut, whole.subarray(0, whole.length - 12));
    await expect(readMindSessions(cut)).rejects.toBeInstanceOf(ImportReadError);
  });

  it('shifts (never stretches): the first UTC day lands on start, gaps are kept', async () => {
    const path = join(tmp, 'behaviors.tsv');
    writeFileSync(path, fixture);
    const { sessions } = await readMindSessions(path);
    const v = shiftSessions(sessions);
    expect(new Date(v[0]!.virtualMs).toISOString()).toBe('2016-09-20T18:00:00.000Z');
    expect(new Date(v[1]!.virtualMs).toISOString()).toBe('2016-09-21T09:15:00.000Z');
    expect(new Date(v[2]!.virtualMs).toISOString()).toBe('2016-09-23T08:00:30.000Z');
    for (let i = 1; i < v.length; i++)
      expect(v[i]!.virtualMs - v[i - 1]!.virtualMs).toBe(sessions[i]!.timeMs - sessions[i - 1]!.timeMs);
    expect(new Date(shiftSessions(sessions, '2016-01-01T00:00:00Z')[0]!.virtualMs).toISOString()).toBe(
      '2016-01-01T18:00:00.000Z',
    );
    expect(() => shiftSessions(sessions, 'soon')).toThrow(/not an ISO 8601 date/);
  });

  it('places the whole real MIND week before the newest HN post', async () => {
    const { sessions, invalid } = await readMindSessions(REAL_BEHAVIORS);
    expect(invalid).toEqual([]);
    expect(sessions).toHaveLength(5_000);
    const v = shiftSessions(sessions);
    expect(new Date(v[0]!.virtualMs).toISOString()).toBe('2016-09-20T00:01:13.000Z');
    expect(new Date(v.at(-1)!.virtualMs).toISOString()).toBe('2016-09-25T23:50:13.000Z');
    expect(v.at(-1)!.virtualMs).toBeLessThan(Date.UTC(2016, 8, 26, 7, 13)); // newest HN post
    const readers = [...new Set(sessions.map((s) => s.userId))];
    expect(readers).toHaveLength(4_637);
    const share = readers.filter((r) => interestsFor(r).length > 0).length / readers.length;
    expect(share).toBeGreaterThan(0.45);
    expect(share).toBeLessThan(0.55);
  });
});

describe('interests', () => {
  it('gives a reader 0 or 2–4 distinct known terms, the same every time', () => {
    let withTerms = 0;
    for (let i = 0; i < 500; i++) {
      const terms = interestsFor(`U${i}`);
      expect(interestsFor(`U${i}`)).toEqual(terms);
      if (terms.length === 0) continue;
      withTerms++;
      expect(terms.length).toBeGreaterThanOrEqual(2);
      expect(terms.length).toBeLessThanOrEqual(4);
      expect(new Set(terms).size).toBe(terms.length);
      for (const t of terms) expect(INTEREST_TERMS).toContain(t);
    }
    expect(withTerms).toBeGreaterThan(200);
    expect(withTerms).toBeLessThan(300);
  });
});

describe('replayByReader', () => {
  it('keeps the concurrency bound and never overlaps two sessions of one reader', async () => {
    const readers = ['a', 'b', 'c', 'a', 'a', 'd', 'b', 'e', 'f', 'a'];
    const sessions: VirtualSession[] = readers.map((userId, i) => ({
      impressionId: String(i),
      userId,
      timeMs: i,
      virtualMs: i,
    }));
    const busy = new Set<string>();
    const order: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    await replayByReader(sessions, 3, async (s) => {
      expect(busy.has(s.userId)).toBe(false);
      busy.add(s.userId);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      // hand the event loop over 1–3 times, so sessions overlap and finish out of their start order
      for (let turn = 0; turn <= Number(s.impressionId) % 3; turn++) await new Promise((r) => setImmediate(r));
      order.push(s.impressionId);
      inFlight--;
      busy.delete(s.userId);
    });
    expect(order).toHaveLength(10);
    expect(maxInFlight).toBeLessThanOrEqual(3);
    expect(maxInFlight).toBeGreaterThan(1);
    const aOrder = order.filter((id) => readers[Number(id)] === 'a');
    expect(aOrder).toEqual(['0', '3', '4', '9']);
  });
});

describe('report bookkeeping', () => {
  it('counts an item served again to the same reader within 7 days as a duplicate, not after', () => {
    const stats = new SimulateStats(2);
    const t = Date.UTC(2016, 8, 20);
    stats.page('refresh', 'U1', ['a', 'b'], t, 1.5, false);
    stats.page('refresh', 'U2', ['a'], t, 1, false); // another reader: fine
    stats.page('load_more', 'U1', ['b'], t + 7 * DAY_MS - 1, 2, true); // within 7 days: duplicate
    stats.page('load_more', 'U1', [], t + 7 * DAY_MS, 3, false);
    stats.page('refresh', 'U1', ['a'], t + 7 * DAY_MS, 4, false); // exactly 7 days later: allowed
    const r = stats.report({
      readersWithInterests: 1,
      seenFilterDropped: 12,
      virtualFrom: t,
      virtualTo: t + 7 * DAY_MS,
      wallMs: 10,
    });
    expect(r.duplicates).toBe(1);
    expect(r.duplicateExamples).toEqual([{ readerId: 'U1', itemId: 'b', gapMs: 7 * DAY_MS - 1 }]);
    expect(r.itemsServed).toBe(5);
    expect(r.distinctReaders).toBe(2);
    expect(r.fallbacks).toBe(1);
    expect(r.pages.refresh).toEqual({ pages: 3, empty: 0, short: 2, full: 1, meanItems: 1.3 });
    expect(r.pages.load_more).toEqual({ pages: 2, empty: 1, short: 1, full: 0, meanItems: 0.5 });
    expect(r.exitCode).toBe(1);
    const table = formatReport(r);
    expect(table).toMatch(/duplicates within 7 days\s+1/);
    expect(table).toMatch(/dropped by the seen filter\s+12/);
  });

  it('fails the run on any error answer, and passes a clean one', () => {
    const clean = new SimulateStats(20);
    clean.page('refresh', 'U1', ['a'], 0, 1, false);
    const extra = { readersWithInterests: 0, seenFilterDropped: null, virtualFrom: 0, virtualTo: 0, wallMs: 1 };
    expect(clean.report(extra).exitCode).toBe(0);
    expect(formatReport(clean.report(extra))).toMatch(/dropped by the seen filter\s+n\/a/);
    clean.error('503');
    clean.error('network');
    const r = clean.report(extra);
    expect(r.errors).toEqual({ 503: 1, network: 1 });
    expect(r.exitCode).toBe(1);
  });

  it('takes nearest-rank percentiles, rounded to 0.1 ms', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1.04);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile([], 50)).toBe(0);
    expect(percentile([0.36], 99)).toBe(0.4);
  });

  it('sums a Prometheus counter over its label sets', () => {
    const text = [
      '# HELP freshet_seen_filter_dropped_total Candidates removed',
      '# TYPE freshet_seen_filter_dropped_total counter',
      'freshet_seen_filter_dropped_total{feed="for_you"} 40',
      'freshet_seen_filter_dropped_total{feed="discover"} 2',
      'freshet_seen_filter_dropped_totalx 1000',
      '',
    ].join('\n');
    expect(promMetricSum(text, 'freshet_seen_filter_dropped_total')).toBe(42);
    expect(
      promMetricSum('# TYPE freshet_seen_filter_dropped_total counter\n', 'freshet_seen_filter_dropped_total'),
    ).toBe(0);
    expect(promMetricSum('other_total 3\n', 'freshet_seen_filter_dropped_total')).toBeNull();
  });
});
