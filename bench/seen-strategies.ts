/**
 * Seen strategies compared on the same replay (README "Seen strategy"): note 1's global rolling daily
 * filters (`rolling`) against note 3's per-reader scalable filters (`per_reader`), both on Redis.
 *
 * Replay: the MIND impression log (/work/shared/data/mind/mind_impressions_long.csv.gz, Microsoft News,
 * 6 days of Nov 2019), the first READERS readers in time order with every impression they were shown:
 * each impression list is one `markSeen(reader, shown ids, time)` on virtual time. Then:
 * - memory: `MEMORY USAGE` of every key the strategy wrote, per active reader and per 1M impressions;
 * - measured false-positive rate: PROBES never-shown ids per reader, checked at the end of the replay;
 * - a heavy reader (HEAVY impressions in 25 days) on the per-reader filter: sub-filters, bytes, rate, seen() times;
 * - what each forgets, and when: one impression probed after 6 d 23 h, 7 d, 29 d of activity, and
 *   after 30 days idle;
 * - the time of one `seen()` of 500 candidates (p50 and p99 of 200, one connection).
 * Strategies: rolling sized for the replay's busiest day (how it would be configured; one shard), per_reader
 * at its default since 0.2.0 (n0 = 100, P = 1 %: small sub-filters, growing as the reader sees more) and
 * at note 3's n0 = 100,000 (the default before). The heavy reader runs at the default n0.
 * Run alone with `npx tsx bench/seen-strategies.ts`.
 */
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { createInterface } from 'node:readline';
import { closeRedis, type RedisClient } from '../src/kernel/redis/client.js';
import { Keys } from '../src/kernel/redis/keys.js';
import { RedisSeenFilter } from '../src/seen/redis-seen-filter.js';
import { RedisReaderSeenFilter } from '../src/seen/redis-reader-seen-filter.js';
import { sizeWindow } from '../src/seen/bloom.js';
import { fixedLayout } from '../src/seen/layout.js';
import { DAY_MS, HOUR_MS } from '../src/kernel/clock.js';
import type { SeenFilter } from '../src/kernel/seen-filter.js';
import { fmtInt, fmtMs, fmtPct, printNotes, printTable } from './stats.js';
import { dropPrefix, openRedis, printTitle, range, runIfMain, uniquePrefix, withCleanup } from './support.js';

const DATA = process.env.FRESHET_MIND_IMPRESSIONS ?? '/work/shared/data/mind/mind_impressions_long.csv.gz';
/** Readers replayed (each per-reader filter at n0 = 100,000 takes ~164 KB: 400 readers ≈ 66 MB of Redis). */
const READERS = 400;
const PROBES = 500;
const HEAVY = 250_000;
const TTL = 30 * DAY_MS;

interface Impression {
  reader: string;
  at: number;
  items: string[];
}

/** The impressions of the first `readers` readers, in time order (one entry per impression list). */
async function loadReplay(readers: number): Promise<Impression[]> {
  const byId = new Map<string, Impression>();
  const chosen = new Set<string>();
  const lines = createInterface({ input: createReadStream(DATA).pipe(createGunzip()) });
  let header = true;
  for await (const line of lines) {
    if (header) {
      header = false;
      continue;
    }
    const [impression, user, time, news] = line.split(',');
    if (!chosen.has(user!)) {
      if (chosen.size >= readers) continue;
      chosen.add(user!);
    }
    let imp = byId.get(impression!);
    if (!imp) byId.set(impression!, (imp = { reader: user!, at: Date.parse(`${time}Z`), items: [] }));
    imp.items.push(news!);
  }
  return [...byId.values()].sort((a, b) => a.at - b.at);
}

/** Bytes Redis uses for every key under `prefix` (`MEMORY USAGE … SAMPLES 0`). */
async function memoryOf(redis: RedisClient, prefix: string): Promise<{ bytes: number; keys: number }> {
  let cursor = '0';
  let bytes = 0;
  let keys = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const k of found) {
      bytes += Number(await redis.call('MEMORY', 'USAGE', k, 'SAMPLES', '0'));
      keys++;
    }
  } while (cursor !== '0');
  return { bytes, keys };
}

/** Fraction of never-shown ids a filter answers "seen" for, over every reader. */
async function measuredRate(filter: SeenFilter, readers: string[], at: number): Promise<number> {
  let hits = 0;
  for (const r of readers)
    hits += (
      await filter.seen(
        r,
        range(PROBES, (i) => `probe-${i}`),
        at,
      )
    ).filter(Boolean).length;
  return hits / (readers.length * PROBES);
}

/** p50 and p99 (nearest rank) of `seen()` of 500 candidates over 200 calls, ms. */
async function seenTimes(filter: SeenFilter, reader: string, at: number): Promise<{ p50: number; p99: number }> {
  const ids = range(500, (i) => `cand-${i}`);
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    await filter.seen(reader, ids, at);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: times[99]!, p99: times[197]! };
}

/** What the filter remembers of an impression made at `t0`, probed later (activity in between for per_reader). */
async function forgetting(filter: SeenFilter, perReader: boolean): Promise<string> {
  const t0 = Date.UTC(2026, 2, 6, 12);
  await filter.markSeen('f_reader', ['f_item'], t0);
  const out: string[] = [];
  for (const [label, at] of [
    ['6d23h', t0 + 6 * DAY_MS + 11 * HOUR_MS],
    ['7d12h', t0 + 7 * DAY_MS],
    ['29d', t0 + 29 * DAY_MS],
  ] as const) {
    if (perReader) await filter.markSeen('f_reader', [`other-${label}`], at - HOUR_MS); // the reader stays active
    out.push(`${label}: ${(await filter.seen('f_reader', ['f_item'], at))[0] ? 'seen' : 'forgotten'}`);
  }
  const idle = t0 + 29 * DAY_MS + TTL;
  out.push(`30 d idle: ${(await filter.seen('f_reader', ['f_item'], idle))[0] ? 'seen' : 'forgotten'}`);
  return out.join(' · ');
}

export async function run(): Promise<void> {
  printTitle('Seen strategies: rolling daily filters (note 1) vs per-reader scalable filters (note 3)');
  const replay = await loadReplay(READERS);
  const readers = [...new Set(replay.map((i) => i.reader))];
  const impressions = replay.reduce((n, i) => n + i.items.length, 0);
  const perDay = new Map<number, number>();
  for (const i of replay)
    perDay.set(Math.floor(i.at / DAY_MS), (perDay.get(Math.floor(i.at / DAY_MS)) ?? 0) + i.items.length);
  const busiest = Math.max(...perDay.values());
  const end = replay[replay.length - 1]!.at;
  console.log(
    `replay: ${fmtInt(readers.length)} MIND readers, ${fmtInt(replay.length)} impression lists, ${fmtInt(impressions)} impressions, busiest day ${fmtInt(busiest)}`,
  );

  await withCleanup(async (cleanup) => {
    const redis = openRedis();
    cleanup.add(() => closeRedis(redis));
    const strategies: { name: string; make: (k: Keys) => SeenFilter; perReader: boolean }[] = [
      {
        name: `rolling (7 days, ${fmtInt(Math.ceil(busiest / 1000) * 1000)}/day, 1 %)`,
        perReader: false,
        make: (k) =>
          new RedisSeenFilter(redis, k, fixedLayout(sizeWindow(Math.ceil(busiest / 1000) * 1000, 0.01, 7)), {
            days: 7,
          }),
      },
      {
        name: 'per_reader (n0 100, 1 %: the default)',
        perReader: true,
        make: (k) => new RedisReaderSeenFilter(redis, k, { initialCapacity: 100, errorRate: 0.01, ttlMs: TTL }),
      },
      {
        name: 'per_reader (n0 100,000, 1 %: note 3, the default before 0.2.0)',
        perReader: true,
        make: (k) => new RedisReaderSeenFilter(redis, k, { initialCapacity: 100_000, errorRate: 0.01, ttlMs: TTL }),
      },
    ];
    const rows: string[][] = [];
    const forgets: string[] = [];
    for (const s of strategies) {
      const prefix = uniquePrefix('seenstrat');
      cleanup.add(() => dropPrefix(redis, prefix));
      const filter = s.make(new Keys(prefix));
      for (const imp of replay) await filter.markSeen(imp.reader, imp.items, imp.at);
      const mem = await memoryOf(redis, prefix);
      const rate = await measuredRate(filter, readers, end);
      const times = await seenTimes(filter, readers[0]!, end);
      rows.push([
        s.name,
        fmtInt(mem.keys),
        `${(mem.bytes / 2 ** 20).toFixed(1)} MB`,
        `${fmtInt(Math.round(mem.bytes / readers.length))} B`,
        `${(((mem.bytes / impressions) * 1e6) / 2 ** 20).toFixed(1)} MB`,
        fmtPct(rate),
        fmtMs(times.p50),
        fmtMs(times.p99),
      ]);
      await dropPrefix(redis, prefix);
      const fprefix = uniquePrefix('seenstrat');
      cleanup.add(() => dropPrefix(redis, fprefix));
      forgets.push(`${s.name}: ${await forgetting(s.make(new Keys(fprefix)), s.perReader)}`);
      await dropPrefix(redis, fprefix);
    }
    printTable(
      `Same replay (${fmtInt(readers.length)} readers, ${fmtInt(impressions)} impressions), Redis MEMORY USAGE`,
      [
        'strategy',
        'keys',
        'memory',
        'per active reader',
        'per 1M impressions',
        `measured FPR (${fmtInt(readers.length * PROBES)} probes)`,
        'seen() 500 p50',
        'p99',
      ],
      rows,
    );
    printNotes(...forgets);

    const hprefix = uniquePrefix('seenstrat');
    cleanup.add(() => dropPrefix(redis, hprefix));
    const heavy = new RedisReaderSeenFilter(redis, new Keys(hprefix), {
      initialCapacity: 100,
      errorRate: 0.01,
      ttlMs: TTL,
    });
    const t0 = Date.UTC(2026, 2, 1);
    for (let i = 0; i < HEAVY; i += 1000)
      await heavy.markSeen(
        'heavy',
        range(1000, (j) => `h${i + j}`),
        t0 + Math.floor((i / HEAVY) * 25 * DAY_MS),
      );
    const d = await heavy.describe('heavy', t0 + 25 * DAY_MS);
    let fp = 0;
    for (let i = 0; i < 50_000; i += 1000)
      fp += (
        await heavy.seen(
          'heavy',
          range(1000, (j) => `never${i + j}`),
          t0 + 25 * DAY_MS,
        )
      ).filter(Boolean).length;
    const times = await seenTimes(heavy, 'heavy', t0 + 25 * DAY_MS);
    printTable(
      `A heavy reader: ${fmtInt(HEAVY)} impressions in 25 days on per_reader (n0 100, 1 %: the default)`,
      ['sub-filters', 'members', 'bitmap', 'expected rate', 'measured FPR (50,000 probes)', 'seen() 500 p50', 'p99'],
      [
        [
          `${d.filters.length} (${fmtInt(d.filters[0]!.capacity)} … ${fmtInt(d.filters.at(-1)!.capacity)})`,
          fmtInt(d.members),
          `${(d.bytes / 2 ** 20).toFixed(2)} MB`,
          fmtPct(d.expectedRate),
          fmtPct(fp / 50_000),
          fmtMs(times.p50),
          fmtMs(times.p99),
        ],
      ],
    );
    const fixed = sizeWindow(100_000, 0.01, 1);
    printNotes(
      `a single fixed filter (note 3 as written: 100,000 at 1 %) holding ${fmtInt(HEAVY)} would answer ${fmtPct((1 - Math.exp((-fixed.hashes * HEAVY) / fixed.bits)) ** fixed.hashes)} (expected)`,
      `rolling at the default FRESHET_SEEN_CAPACITY_PER_DAY (1,000,000): ${((7 * Math.ceil(sizeWindow(1_000_000, 0.01, 7).bits / 8)) / 2 ** 20).toFixed(1)} MB for everyone, whatever the number of readers`,
    );
  });
}

runIfMain(import.meta.url, run);
