/**
 * Bloom accuracy benchmark: does the seen filter keep its false-positive promise, and what does it
 * cost in memory?
 *
 * Geometry: the configured window rate (1 %) and 7 days, on a smaller capacity (100,000 a day) so
 * that every day can be filled to exactly capacity quickly. Both adapters are filled the same way
 * — 7 days × 100,000 distinct members through `markSeen` — then probed with 200,000 members never
 * inserted:
 * - whole-window FPR: the share of probes `seen()` answers true for (the rate a reader loses an
 *   unseen item), against the target `windowRate`;
 * - per-filter FPR: the share of probes whose k bits are all set in one day's bitmap (read back from
 *   each adapter), against `perFilterRate` (mean and worst of the 7 days);
 * - the Redis bitmaps compared byte for byte with the in-process ones (same layout by design);
 * - space: m/n against the optimum −ln p / ln²2 for the per-filter p, and `MEMORY USAGE` of a Redis
 *   day key in bits per member — as `markSeen` grew it, and the same bitmap written by one `SET`
 *   (a string grown bit by bit keeps Redis's greedy preallocation);
 * then every day gets another 100,000 members (2× capacity) and the rates are measured again
 * against `expectedRate` / `expectedWindowRate`. "± 95 %" is the binomial half-width
 * 1.96·√(p(1−p)/probes). Run alone with `npx tsx bench/bloom-accuracy.ts`.
 */
import { closeRedis, type RedisClient } from '../src/kernel/redis/client.js';
import { Keys } from '../src/kernel/redis/keys.js';
import { RedisSeenFilter } from '../src/seen/redis-seen-filter.js';
import { MemorySeenFilter } from '../src/seen/memory-seen-filter.js';
import { fixedLayout } from '../src/seen/layout.js';
import {
  expectedRate,
  expectedWindowRate,
  hashPairs,
  seenWindow,
  sizeWindow,
  type BloomGeometry,
} from '../src/seen/bloom.js';
import { dayStamp } from '../src/kernel/clock.js';
import type { SeenFilter } from '../src/kernel/seen-filter.js';
import { fmtInt, fmtPct, fmtRatio, printNotes, printTable } from './stats.js';
import {
  SCRATCH_TTL_MS,
  dropPrefix,
  fillDays,
  openRedis,
  printTitle,
  range,
  runIfMain,
  uniquePrefix,
  withCleanup,
} from './support.js';

const CAPACITY = 100_000;
const WINDOW_RATE = 0.01;
const DAYS = 7;
const PROBES = 200_000;
/** Members per markSeen / seen call on Redis: keeps each script under ~50 ms (Redis is shared). */
const REDIS_BATCH = 2_000;
const MEMORY_BATCH = 20_000;
/** 2026-03-06 12:00 UTC: day 0 of the window (virtual time). */
const NOW = Date.UTC(2026, 2, 6, 12);
const PROBE_READER = 'probe';

/** One adapter under test, and how to read its day bitmaps back. */
interface Subject {
  name: string;
  filter: SeenFilter;
  batch: number;
  bitmaps(): Promise<Uint8Array[]>;
}

/** Measured rates of one subject at one fill. */
interface Rates {
  window: number;
  perFilterMean: number;
  perFilterWorst: number;
}

export async function run(): Promise<void> {
  printTitle('Bloom accuracy — 7 daily filters filled to capacity, 200,000 never-inserted probes');
  const g = sizeWindow(CAPACITY, WINDOW_RATE, DAYS);
  await withCleanup(async (cleanup) => {
    const redis = openRedis();
    cleanup.add(() => closeRedis(redis));
    const keys = new Keys(uniquePrefix('bloom'));
    cleanup.add(() => dropPrefix(redis, keys.prefix));
    const subjects = [memorySubject(g), redisSubject(redis, keys, g)];
    const probes = range(PROBES, (i) => `p${i}`);

    const fillTimes = await fillAll(subjects, 0);
    const atCapacity = await measureAll(subjects, g, probes);
    const identical = await sameBitmaps(subjects);
    const bytes = await redisBytes(redis, keys);
    await fillAll(subjects, CAPACITY);
    const atDouble = await measureAll(subjects, g, probes);

    printRates(g, subjects, atCapacity, atDouble);
    printSpace(g, bytes);
    printNotes(
      `Redis day bitmaps equal the in-process ones byte for byte: ${identical ? 'yes (all 7 days)' : 'NO'}`,
      ...subjects.map(
        (s, i) => `fill through ${s.name} markSeen (batches of ${fmtInt(s.batch)}): ${fmtInt(fillTimes[i]!)} members/s`,
      ),
    );
  });
}

function dayKeys(keys: Keys): string[] {
  // one shard: every reader's days are the same keys
  return seenWindow(NOW, DAYS).map((ms) => keys.seenDays(1, 0).day(dayStamp(ms)));
}

function memorySubject(g: BloomGeometry): Subject {
  const filter = new MemorySeenFilter(fixedLayout(g), { days: DAYS });
  const keys = new Keys('');
  return {
    name: 'memory',
    filter,
    batch: MEMORY_BATCH,
    bitmaps: async () => dayKeys(keys).map((k) => filter.dayFilters().get(k)?.bitmap ?? new Uint8Array(0)),
  };
}

function redisSubject(redis: RedisClient, keys: Keys, g: BloomGeometry): Subject {
  return {
    name: 'Redis',
    filter: new RedisSeenFilter(redis, keys, fixedLayout(g), { days: DAYS }),
    batch: REDIS_BATCH,
    bitmaps: async () =>
      (await Promise.all(dayKeys(keys).map((k) => redis.getBuffer(k)))).map((b) => b ?? new Uint8Array(0)),
  };
}

/** Adds CAPACITY members (numbered from `offset`) to every day of every subject; members/s each. */
async function fillAll(subjects: readonly Subject[], offset: number): Promise<number[]> {
  const rates: number[] = [];
  for (const s of subjects) {
    const t = performance.now();
    await fillDays(s.filter, { days: DAYS, perDay: CAPACITY, nowMs: NOW, batch: s.batch, offset });
    rates.push((DAYS * CAPACITY * 1000) / (performance.now() - t));
  }
  return rates;
}

async function measureAll(subjects: readonly Subject[], g: BloomGeometry, probes: readonly string[]): Promise<Rates[]> {
  const hashes = hashPairs(PROBE_READER, probes);
  const pairs = range(probes.length, (i): [number, number] => [hashes[2 * i]!, hashes[2 * i + 1]!]);
  const out: Rates[] = [];
  for (const s of subjects) {
    const window = await windowRate(s, probes);
    const perDay = (await s.bitmaps()).map((b) => filterRate(g, b, pairs));
    out.push({
      window,
      perFilterMean: perDay.reduce((a, r) => a + r, 0) / perDay.length,
      perFilterWorst: Math.max(...perDay),
    });
  }
  return out;
}

/** Share of probes the whole 7-day check answers "seen" for (through the adapter's `seen`). */
async function windowRate(s: Subject, probes: readonly string[]): Promise<number> {
  let hits = 0;
  for (let from = 0; from < probes.length; from += s.batch) {
    const answers = await s.filter.seen(PROBE_READER, probes.slice(from, from + s.batch), NOW);
    for (const a of answers) if (a) hits++;
  }
  return hits / probes.length;
}

/** Share of probes whose k bits are all set in one bitmap (Redis bit order: bit 0 = MSB of byte 0). */
function filterRate(g: BloomGeometry, bitmap: Uint8Array, pairs: readonly [number, number][]): number {
  let hits = 0;
  for (const [h1, h2] of pairs) {
    let pos = h1 % g.bits;
    const step = h2 % g.bits;
    let all = true;
    for (let i = 0; i < g.hashes && all; i++) {
      all = (bitmap[pos >>> 3]! & (0x80 >>> (pos & 7))) !== 0;
      pos += step;
      if (pos >= g.bits) pos -= g.bits;
    }
    if (all) hits++;
  }
  return hits / pairs.length;
}

/**
 * Whether both subjects hold the same bits on every day. A Redis string ends at its highest set
 * bit, so the shorter bitmap is compared as if padded with zero bytes.
 */
async function sameBitmaps(subjects: readonly Subject[]): Promise<boolean> {
  const [a, b] = await Promise.all(subjects.map((s) => s.bitmaps()));
  return a!.every((x, d) => {
    const y = b![d]!;
    const [short, long] = x.length <= y.length ? [x, y] : [y, x];
    if (short.length === 0) return false;
    for (let i = 0; i < long.length; i++) if ((short[i] ?? 0) !== long[i]) return false;
    return true;
  });
}

/**
 * `MEMORY USAGE` (bytes) of a day key as `markSeen` grew it (SETBIT by SETBIT), and of the same
 * bitmap written whole with one `SET` (a scratch copy under the prefix, expiring by itself).
 */
async function redisBytes(redis: RedisClient, keys: Keys): Promise<{ grown: number; whole: number }> {
  const day = dayKeys(keys)[0]!;
  const copy = `${keys.prefix}copy`;
  await redis.set(copy, (await redis.getBuffer(day)) ?? '', 'PX', SCRATCH_TTL_MS);
  const [grown, whole] = await Promise.all([redis.memory('USAGE', day), redis.memory('USAGE', copy)]);
  return { grown: Number(grown), whole: Number(whole) };
}

/** Binomial 95 % half-width of a rate measured over PROBES trials. */
function halfWidth(rate: number): string {
  return `± ${fmtPct(1.96 * Math.sqrt((rate * (1 - rate)) / PROBES))}`;
}

function rateRows(g: BloomGeometry, label: string, members: number, s: Subject, r: Rates): string[][] {
  const window = members === CAPACITY ? g.windowRate : expectedWindowRate(g, members);
  const perFilter = members === CAPACITY ? g.perFilterRate : expectedRate(g, members);
  const fill = `${label} (${fmtInt(members)}/day)`;
  return [
    [
      `whole window, ${s.name}`,
      fill,
      fmtPct(r.window),
      halfWidth(r.window),
      fmtPct(window),
      fmtRatio(r.window, window),
      '',
    ],
    [
      `per filter, ${s.name}`,
      fill,
      fmtPct(r.perFilterMean),
      halfWidth(r.perFilterMean),
      fmtPct(perFilter),
      fmtRatio(r.perFilterMean, perFilter),
      fmtPct(r.perFilterWorst),
    ],
  ];
}

function printRates(g: BloomGeometry, subjects: readonly Subject[], one: Rates[], two: Rates[]): void {
  const rows = subjects.flatMap((s, i) => [
    ...rateRows(g, '1× capacity', CAPACITY, s, one[i]!),
    ...rateRows(g, '2× capacity', 2 * CAPACITY, s, two[i]!),
  ]);
  printTable(
    `false-positive rates (${fmtInt(PROBES)} probes; target at 1×, expected (1−e^(−kn/m))^k at 2×)`,
    ['rate', 'fill', 'measured', '± 95 %', 'target/expected', 'ratio', 'worst day'],
    rows,
  );
}

function printSpace(g: BloomGeometry, bytes: { grown: number; whole: number }): void {
  const perItem = g.bits / g.capacity;
  const optimum = -Math.log(g.perFilterRate) / (Math.LN2 * Math.LN2);
  const perMember = (b: number) => (b * 8) / g.capacity;
  const kOpt = perItem * Math.LN2;
  printTable(
    `space (per-filter p = ${fmtPct(g.perFilterRate)}, m = ${fmtInt(g.bits)} bits, k = ${g.hashes})`,
    ['what', 'bits per member', 'optimum', 'ratio'],
    [
      ['m/n of the geometry', perItem.toFixed(2), optimum.toFixed(2), fmtRatio(perItem, optimum)],
      [
        'Redis MEMORY USAGE, day key grown by markSeen',
        perMember(bytes.grown).toFixed(2),
        optimum.toFixed(2),
        fmtRatio(perMember(bytes.grown), optimum),
      ],
      [
        'Redis MEMORY USAGE, same bitmap written by one SET',
        perMember(bytes.whole).toFixed(2),
        optimum.toFixed(2),
        fmtRatio(perMember(bytes.whole), optimum),
      ],
      ['k (hashes) vs (m/n)·ln 2', String(g.hashes), kOpt.toFixed(2), fmtRatio(g.hashes, kOpt)],
    ],
  );
}

runIfMain(import.meta.url, run);
