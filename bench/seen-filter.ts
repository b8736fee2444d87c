/**
 * Seen-filter benchmark (note 1's "3,500 membership tests"): how long the Redis seen filter takes to
 * check 500 recalled candidates against 7 daily Bloom filters, at 1,000,000 impressions a day and a
 * whole-window rate of 1 % over 7 days, in two layouts measured in the same run:
 * - the default layout since issue 20: 16 shards a day of 62,500 members each (106 KB bitmaps; a
 *   reader's check reads its own shard's 7 days);
 * - one shard sized for the whole day (1.62 MiB bitmaps): the default layout before issue 20, and the
 *   size of one shard of a large deployment (a shard is at most 1 MiB since: 615,611 members).
 *
 * Two fills of each layout's day bitmaps:
 * - "20 % full": 200,000 members a day over 2,000 readers (so every shard gets its share), built in
 *   process by MemorySeenFilter (bit for bit the Redis layout; bench/bloom-accuracy.ts checks that
 *   equality) and copied with SET — fast to set up;
 * - "at capacity": bitmaps with half their bits set at random, which is what a full day looks like
 *   to a member that was never inserted (k = (m/n)·ln 2 ⇒ half the bits are ones).
 * On top, the bench reader has really seen (through the adapter's `markSeen`) 100 of its 500
 * candidates, spread over the 7 days.
 *
 * Rows, all measured in this run, sequentially on one connection:
 * - `RedisSeenFilter.seen()` of 500 candidates (one EVALSHA; JS hashing included) — target p50 ≤ 1 ms,
 *   p99 ≤ 5 ms — on both fills of both layouts, and with no day key at all (the fixed cost: hashing,
 *   arguments, 7 × EXISTS);
 * - baseline (a): a pipeline of 3,500 `BITFIELD` commands, one per candidate and day, each reading
 *   the candidate's k bits (`GET u1` × k) — the naive "GETBIT per member" design;
 * - baseline (b): the same k·3,500 bit reads as 7 `BITFIELD` commands (one per day) in one pipeline;
 * - baseline (c): `PING` — one round trip, the floor;
 * - `hashPairs` of 500 members in JS (MurmurHash3 pairs), the engine-side hashing of `seen()`;
 * - `markSeen()` of 20 new ids (one page of impressions), on both layouts.
 * Ratios are against PING. Run alone with `npx tsx bench/seen-filter.ts`.
 */
import { closeRedis, type RedisClient } from '../src/kernel/redis/client.js';
import { Keys } from '../src/kernel/redis/keys.js';
import { RedisSeenFilter } from '../src/seen/redis-seen-filter.js';
import { MemorySeenFilter } from '../src/seen/memory-seen-filter.js';
import { fixedLayout, seenLayout, shardKeys, type SeenLayout } from '../src/seen/layout.js';
import { shardOf } from '../src/kernel/redis/keys.js';
import { hashPair } from '../src/kernel/hash.js';
import { hashPairs, positions, seenMember, seenWindow, sizeWindow, type BloomGeometry } from '../src/seen/bloom.js';
import { DAY_MS, dayStamp } from '../src/kernel/clock.js';
import {
  TIMING_COLUMNS,
  fmtInt,
  fmtPct,
  fmtRatio,
  printNotes,
  printTable,
  timeLoop,
  timingRow,
  type Summary,
} from './stats.js';
import {
  dropPrefix,
  fillDays,
  openRedis,
  printTitle,
  putBitmaps,
  randomBitmap,
  range,
  runIfMain,
  timeLoopOnServer,
  fmtServer,
  type ServerTimed,
  uniquePrefix,
  withCleanup,
} from './support.js';

const CAPACITY = 1_000_000;
const WINDOW_RATE = 0.01;
const DAYS = 7;
/** Members put in each day for the "20 % full" fill. */
const PARTIAL_FILL = 200_000;
const CANDIDATES = 500;
/** Of the candidates, how many the bench reader has really seen (spread over the days). */
const SEEN_CANDIDATES = 100;
const PAGE = 20;
/** 2026-03-06 12:00 UTC: day 0 of the window (virtual time). */
const NOW = Date.UTC(2026, 2, 6, 12);
const READER = 'bench_reader';

const TARGETS = { p50: 1, p99: 5 };
const FAST = { warmup: 50, iterations: 3000, seconds: 5 };
const SLOW = { warmup: 3, iterations: 150, seconds: 6 };

/** A seen filter on Redis under its own prefix, with its 7 day bitmaps in place. */
interface Fixture {
  seen: RedisSeenFilter;
  /** The bench reader's 7 day keys (its shard). */
  dayKeys: string[];
  candidates: string[];
}

/** The default layout since issue 20 at 1,000,000 a day: 16 shards of 62,500. */
const DEFAULT_LAYOUT = seenLayout({
  days: DAYS,
  capacityPerDay: CAPACITY,
  windowRate: WINDOW_RATE,
  minShards: 16,
  shardCapacity: 1_000_000,
});
/** One shard for the whole day (the default before issue 20). */
const ONE_KEY = fixedLayout(sizeWindow(CAPACITY, WINDOW_RATE, DAYS));
/** Readers the fills spread over (every shard of the default layout gets its share). */
const FILL_READERS = 2_000;

export async function run(): Promise<void> {
  printTitle('seen filter — 500 candidates × 7 daily Bloom filters on Redis');
  for (const [name, l] of [
    ['default layout', DEFAULT_LAYOUT],
    ['one shard a day', ONE_KEY],
  ] as const)
    printGeometry(name, l);
  await withCleanup(async (cleanup) => {
    const redis = openRedis();
    cleanup.add(() => closeRedis(redis));
    const prefix = uniquePrefix('seen');
    cleanup.add(() => dropPrefix(redis, prefix));

    const sharded = {
      partial: await partialFixture(redis, new Keys(`${prefix}sp:`), DEFAULT_LAYOUT),
      full: await fullFixture(redis, new Keys(`${prefix}sf:`), DEFAULT_LAYOUT),
      empty: emptyFixture(redis, new Keys(`${prefix}se:`), DEFAULT_LAYOUT),
    };
    const one = {
      partial: await partialFixture(redis, new Keys(`${prefix}op:`), ONE_KEY),
      full: await fullFixture(redis, new Keys(`${prefix}of:`), ONE_KEY),
    };
    await printFill(redis, DEFAULT_LAYOUT.geometry, sharded.partial, sharded.full, 'default layout');
    await printFill(redis, ONE_KEY.geometry, one.partial, one.full, 'one shard a day');

    const g = ONE_KEY.geometry;
    const ping = await timeLoop(() => redis.ping(), FAST);
    const row = (what: string, t: ServerTimed, targets = {}) => timingRow(what, t.summary, targets, ping, fmtServer(t));
    const rows = [
      row('seen(): 500 × 7, 16 shards, days 20 % full', await timeSeen(redis, sharded.partial), TARGETS),
      row('seen(): 500 × 7, 16 shards, days at capacity', await timeSeen(redis, sharded.full), TARGETS),
      row('seen(): 500, no day key exists (fixed cost)', await timeSeen(redis, sharded.empty), TARGETS),
      row('seen(): 500 × 7, one shard, days 20 % full', await timeSeen(redis, one.partial), TARGETS),
      row('seen(): 500 × 7, one shard, days at capacity', await timeSeen(redis, one.full), TARGETS),
      row(
        '(a) one shard: pipeline of 3,500 BITFIELD (k GETs each)',
        await timePerMemberPipeline(redis, g, one.partial),
      ),
      row(
        `(b) one shard: 7 × BITFIELD of ${fmtInt(CANDIDATES * g.hashes)} GETs, pipelined`,
        await timePerDayPipeline(redis, g, one.partial),
      ),
      timingRow('(c) PING (one round trip, the floor)', ping),
      timingRow('hashPairs of 500 members in JS (no I/O)', await timeHashing(), {}, ping),
      row('markSeen(): 20 new ids, 16 shards', await timeMarkSeen(redis, sharded.partial.seen)),
      row('markSeen(): 20 new ids, one shard', await timeMarkSeen(redis, one.partial.seen)),
    ];
    printTable('seen filter (ms; ratios against PING, same run)', [...TIMING_COLUMNS, 'Redis ms/iter'], rows);
    printNotes(
      'Redis ms/iter: time Redis itself spent per iteration (INFO commandstats); ~ = other clients ran the command too',
    );
    await printAgreement(redis, g, one.partial);
    await printGrownKey(redis, new Keys(`${prefix}g:`), g, one.partial.dayKeys[1]!);
  });
}

function printGeometry(name: string, l: SeenLayout): void {
  const g = l.geometry;
  printNotes(
    `${name}: ${fmtInt(CAPACITY)}/day in ${l.shards} shard(s) of ${fmtInt(g.capacity)}, window rate ${fmtPct(g.windowRate)} over ${g.days} days → ` +
      `per-filter p ${fmtPct(g.perFilterRate)}, m = ${fmtInt(g.bits)} bits (${(g.bits / 8 / 2 ** 10).toFixed(0)} KiB), k = ${g.hashes}`,
  );
}

/** The bench reader's candidates; the first SEEN_CANDIDATES are marked seen, one day each. */
function candidates(): string[] {
  return range(CANDIDATES, (i) => `c${i}`);
}

async function markReader(seen: RedisSeenFilter, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < SEEN_CANDIDATES; i++) await seen.markSeen(READER, [ids[i]!], NOW - (i % DAYS) * DAY_MS);
}

/** The bench reader's day keys under a layout (its shard's). */
function dayKeys(keys: Keys, l: SeenLayout): string[] {
  const sk = shardKeys(keys, l, shardOf(READER, l.shards));
  return seenWindow(NOW, DAYS).map((ms) => sk.day(dayStamp(ms)));
}

/** Every shard's day keys of the window under a layout. */
function allDayKeys(keys: Keys, l: SeenLayout): string[] {
  return Array.from({ length: l.shards }, (_, s) => shardKeys(keys, l, s)).flatMap((sk) =>
    seenWindow(NOW, DAYS).map((ms) => sk.day(dayStamp(ms))),
  );
}

/** 200,000 members a day over every shard, built in process and copied to Redis (same bits as markSeen would set). */
async function partialFixture(redis: RedisClient, keys: Keys, l: SeenLayout): Promise<Fixture> {
  const memory = new MemorySeenFilter(l, { days: DAYS });
  await fillDays(memory, { days: DAYS, perDay: PARTIAL_FILL, nowMs: NOW, batch: 100, readers: FILL_READERS });
  const bitmaps = new Map<string, Uint8Array>();
  for (const [key, day] of memory.dayFilters()) bitmaps.set(`${keys.prefix}${key}`, day.bitmap);
  await putBitmaps(redis, bitmaps);
  return readerFixture(redis, keys, l);
}

/** Days at capacity: half the bits of each bitmap of every shard set at random. */
async function fullFixture(redis: RedisClient, keys: Keys, l: SeenLayout): Promise<Fixture> {
  await putBitmaps(redis, new Map(allDayKeys(keys, l).map((k) => [k, randomBitmap(l.geometry.bits, 0.5)])));
  return readerFixture(redis, keys, l);
}

/** No day key at all (a fresh deployment): what a check costs besides reading bits. */
function emptyFixture(redis: RedisClient, keys: Keys, l: SeenLayout): Fixture {
  return {
    seen: new RedisSeenFilter(redis, keys, l, { days: DAYS }),
    dayKeys: dayKeys(keys, l),
    candidates: candidates(),
  };
}

async function readerFixture(redis: RedisClient, keys: Keys, l: SeenLayout): Promise<Fixture> {
  const seen = new RedisSeenFilter(redis, keys, l, { days: DAYS });
  const ids = candidates();
  await markReader(seen, ids);
  return { seen, dayKeys: dayKeys(keys, l), candidates: ids };
}

/** Share of ones in each fixture's bitmaps of the bench reader's shard (BITCOUNT / m), as a check of the fill. */
async function printFill(
  redis: RedisClient,
  g: BloomGeometry,
  partial: Fixture,
  full: Fixture,
  name: string,
): Promise<void> {
  const ones = async (f: Fixture) => {
    const counts = await Promise.all(f.dayKeys.map((k) => redis.bitcount(k)));
    return counts.reduce((s, c) => s + c, 0) / (counts.length * g.bits);
  };
  printNotes(
    `${name}, bits set in the bench reader's shard: ${fmtPct(await ones(partial))} (20 % full: ${fmtInt(PARTIAL_FILL)} members/day), ` +
      `${fmtPct(await ones(full))} (at capacity); the reader has seen ${SEEN_CANDIDATES} of its ${CANDIDATES} candidates`,
  );
}

function timeSeen(redis: RedisClient, f: Fixture): Promise<ServerTimed> {
  return timeLoopOnServer(redis, 'evalsha', 1, FAST, () => f.seen.seen(READER, f.candidates, NOW));
}

/** `GET u1 <pos>` for each of a member's k positions. */
function bitOps(g: BloomGeometry, member: string): (string | number)[] {
  const [h1, h2] = hashPair(member);
  return positions(g, h1, h2).flatMap((p) => ['GET', 'u1', p]);
}

function memberOps(g: BloomGeometry, f: Fixture): (string | number)[][] {
  return f.candidates.map((id) => bitOps(g, seenMember(READER, id)));
}

/** Baseline (a): 3,500 BITFIELD commands (candidate × day), k GETs each, in one pipeline. */
function perMemberPipeline(redis: RedisClient, g: BloomGeometry, f: Fixture): () => Promise<unknown> {
  const ops = memberOps(g, f);
  return async () => {
    const pipe = redis.pipeline();
    for (const key of f.dayKeys) for (const o of ops) pipe.call('BITFIELD', key, ...o);
    return pipe.exec();
  };
}

/** Baseline (b): one BITFIELD per day holding every candidate's k GETs, 7 in one pipeline. */
function perDayPipeline(redis: RedisClient, g: BloomGeometry, f: Fixture): () => Promise<unknown> {
  const ops = memberOps(g, f).flat();
  return async () => {
    const pipe = redis.pipeline();
    for (const key of f.dayKeys) pipe.call('BITFIELD', key, ...ops);
    return pipe.exec();
  };
}

function timePerMemberPipeline(redis: RedisClient, g: BloomGeometry, f: Fixture): Promise<ServerTimed> {
  return timeLoopOnServer(redis, 'bitfield', DAYS * CANDIDATES, SLOW, perMemberPipeline(redis, g, f));
}

function timePerDayPipeline(redis: RedisClient, g: BloomGeometry, f: Fixture): Promise<ServerTimed> {
  return timeLoopOnServer(redis, 'bitfield', DAYS, SLOW, perDayPipeline(redis, g, f));
}

/** The adapter's engine-side hashing of one check: `hashPairs` of the 500 candidates. */
function timeHashing(): Promise<Summary> {
  const ids = candidates();
  return timeLoop(() => hashPairs(READER, ids), FAST);
}

function timeMarkSeen(redis: RedisClient, seen: RedisSeenFilter): Promise<ServerTimed> {
  return timeLoopOnServer(redis, 'evalsha', 1, FAST, (i) =>
    seen.markSeen(
      'bench_marker',
      range(PAGE, (j) => `m${i}_${j}`),
      NOW,
    ),
  );
}

/**
 * Cross-check (not an assertion): the candidates baseline (a) finds in some day (all k bits set)
 * should be exactly those `seen()` answers true for.
 */
async function printAgreement(redis: RedisClient, g: BloomGeometry, f: Fixture): Promise<void> {
  const replies = ((await perMemberPipeline(redis, g, f)()) as [Error | null, number[]][]).map(([, bits]) => bits);
  const byBitfield = f.candidates.map((_, c) =>
    f.dayKeys.some((_, d) => replies[d * f.candidates.length + c]!.every((b) => b === 1)),
  );
  const bySeen = await f.seen.seen(READER, f.candidates, NOW);
  const differ = byBitfield.filter((v, i) => v !== bySeen[i]).length;
  const found = bySeen.filter(Boolean).length;
  printNotes(
    `seen() answered "seen" for ${found} of ${CANDIDATES} candidates (${SEEN_CANDIDATES} really seen); ` +
      `baseline (a) disagrees on ${differ}`,
  );
}

/**
 * Memory of a day key that `markSeen` created and grew (SETBIT by SETBIT, as in production) next to
 * the bitmap's own size ⌈m/8⌉ and to a key written whole by one SET (`written`): Redis keeps the
 * greedy preallocation of a string grown in place.
 */
async function printGrownKey(redis: RedisClient, keys: Keys, g: BloomGeometry, written: string): Promise<void> {
  const seen = new RedisSeenFilter(redis, keys, fixedLayout(g), { days: DAYS });
  await seen.markSeen(
    'grow',
    range(1000, (i) => `g${i}`),
    NOW,
  );
  const grown = Number(await redis.memory('USAGE', await seen.dayKey('grow', NOW)));
  const whole = Number(await redis.memory('USAGE', written));
  const size = Math.ceil(g.bits / 8);
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(2)} MiB`;
  printNotes(
    `memory of a ${mib(size)} day bitmap (MEMORY USAGE): created by markSeen ${mib(grown)} (${fmtRatio(grown, size)}), ` +
      `written by one SET ${mib(whole)} (${fmtRatio(whole, size)}); × ${DAYS} days: ${mib(DAYS * grown)} vs ${mib(DAYS * whole)} per window and shard`,
  );
}

runIfMain(import.meta.url, run);
