/**
 * The per-reader seen filter's first sub-filter capacity n0 (issue 20), chosen by measurement: what a
 * light reader costs, and what a heavy one costs to check, for n0 = 100 (RedisBloom's default), 250,
 * 1,000 and 10,000 (growth 2, tightening 0.5, P = 1 %, one Redis string per sub-filter), next to the
 * filter before issue 20 (n0 = 100,000, every sub-filter in one string), all on Redis in this run.
 *
 * Per geometry:
 * - a light reader (one page of 20 marked): `MEMORY USAGE` of its filter keys (sub-filters + state;
 *   the journal and exclusions come on top, see bench/memory.ts);
 * - readers grown to 1,000 / 10,000 / 100,000 members (marks of 1,000): sub-filters open, bytes of
 *   their keys, expected compound rate and the rate measured on 20,000 never-marked ids, the bit tests
 *   a check makes per unseen candidate (counted in JS on the same bits, walking sub-filters newest
 *   first and each until its first 0 bit), and the times of `seen()` of 500 unseen candidates and of
 *   `markSeen()` of a page of 20 new ids (p50/p99, one connection, PING in the same run for scale).
 * Run alone with `npx tsx bench/seen-reader-growth.ts` (~1 minute).
 */
import { closeRedis, type RedisClient } from '../src/kernel/redis/client.js';
import { Keys } from '../src/kernel/redis/keys.js';
import { DAY_MS } from '../src/kernel/clock.js';
import { hashPairs } from '../src/seen/bloom.js';
import { MemoryReaderSeenFilter } from '../src/seen/memory-reader-seen-filter.js';
import { RedisReaderSeenFilter } from '../src/seen/redis-reader-seen-filter.js';
import { geometrySignature, parseSignature, type ScalableGeometry } from '../src/seen/scalable-bloom.js';
import type { ReaderSeenSettings } from '../src/kernel/reader-seen-filter.js';
import { fmtInt, fmtMs, fmtPct, printNotes, printTable, timeLoop, type Summary } from './stats.js';
import { dropPrefix, openRedis, printTitle, range, runIfMain, uniquePrefix, withCleanup } from './support.js';

const NOW = Date.UTC(2026, 2, 6, 12);
const TTL = 30 * DAY_MS;
const SIZES = [1_000, 10_000, 100_000];
const CANDIDATES = range(500, (i) => `cand${i}`);
const PROBES = range(20_000, (i) => `never${i}`);
const LOOP = { warmup: 20, iterations: 400, seconds: 4 };
/** The geometries compared: the one-string filter of before issue 20, then split filters by n0. */
const GEOMETRIES: { name: string; n0: number; signature: string }[] = [
  { name: 'n0 100,000, one string (before)', n0: 100_000, signature: '100000:0.01:s2:r0.5' },
  ...[100, 250, 1_000, 10_000].map((n0) => ({
    name: `n0 ${fmtInt(n0)}`,
    n0,
    signature: geometrySignature(n0, 0.01),
  })),
];

export async function run(): Promise<void> {
  printTitle('per-reader seen filter — the first sub-filter capacity n0, light and heavy readers (Redis)');
  await withCleanup(async (cleanup) => {
    const redis = openRedis();
    cleanup.add(() => closeRedis(redis));
    const prefix = uniquePrefix('rgrow');
    cleanup.add(() => dropPrefix(redis, prefix));
    const ping = await timeLoop(() => redis.ping(), LOOP);
    const light: string[][] = [];
    const heavy: string[][] = [];
    for (const [i, geo] of GEOMETRIES.entries()) {
      const keys = new Keys(`${prefix}${i}:`);
      const settings: ReaderSeenSettings = { initialCapacity: geo.n0, errorRate: 0.01, ttlMs: TTL };
      const filter = new RedisReaderSeenFilter(redis, keys, settings);
      light.push(await lightRow(redis, keys, settings, geo, filter));
      for (const size of SIZES) heavy.push(await heavyRow(redis, keys, settings, geo, filter, size));
    }
    printTable('a light reader: one page of 20 marked', ['geometry', 'sub-filters', 'bytes (MEMORY USAGE)'], light);
    printTable(
      `readers of 1,000 / 10,000 / 100,000 members (ms; PING p50 ${fmtMs(ping.p50)}, p99 ${fmtMs(ping.p99)} in this run)`,
      [
        'geometry',
        'members',
        'sub-filters',
        'bytes',
        'expected rate',
        'measured FPR',
        'bit tests / unseen',
        'seen(500) p50',
        'seen(500) p99',
        'mark(20) p50',
        'mark(20) p99',
      ],
      heavy,
    );
    printNotes(
      'bit tests / unseen: per never-marked candidate, the bits a check tests walking the open sub-filters newest first, each until its first 0 bit (counted in JS on the same bits)',
      'readers are built in process (the executable spec, bit for bit) and written to Redis as the adapter holds them; the one-string filter of before issue 20 is read under its own geometry',
    );
  });
}

/** A reader of `items` written to Redis under `geo`'s signature as the adapter holds it. */
async function seed(
  redis: RedisClient,
  keys: Keys,
  settings: ReaderSeenSettings,
  signature: string,
  reader: string,
  items: readonly string[],
): Promise<MemoryReaderSeenFilter> {
  const mem = new MemoryReaderSeenFilter(settings, signature);
  for (let i = 0; i < items.length; i += 1_000) await mem.markSeen(reader, items.slice(i, i + 1_000), NOW);
  const saved = mem.saved(reader)!;
  const g = parseSignature(signature)!;
  const bytes = Buffer.from(saved.bitmap);
  const pipe = redis.pipeline();
  const levels = [keys.readerSeen(reader), ...range(14, (i) => keys.readerSeenLevel(reader, i + 1))];
  pipe.del(...levels, keys.readerSeenMeta(reader));
  for (let i = 0; i < saved.counts.length; i++) {
    const l = g.levels[i]!;
    pipe.set(levels[i]!, bytes.subarray(l.offset / 8, l.offset / 8 + Math.ceil(l.bits / 8)), 'PX', TTL);
  }
  pipe.hset(keys.readerSeenMeta(reader), 't', String(NOW), 'g', signature, 'c', saved.counts.join(','));
  pipe.pexpire(keys.readerSeenMeta(reader), TTL);
  await pipe.exec();
  return mem;
}

/** Bytes Redis holds for a reader's filter: its sub-filter strings and state (MEMORY USAGE). */
async function readerBytes(redis: RedisClient, keys: Keys, reader: string): Promise<number> {
  let total = 0;
  for (const key of [
    keys.readerSeen(reader),
    keys.readerSeenMeta(reader),
    ...range(14, (i) => keys.readerSeenLevel(reader, i + 1)),
  ]) {
    total += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  }
  return total;
}

async function lightRow(
  redis: RedisClient,
  keys: Keys,
  settings: ReaderSeenSettings,
  geo: (typeof GEOMETRIES)[number],
  filter: RedisReaderSeenFilter,
): Promise<string[]> {
  await seed(
    redis,
    keys,
    settings,
    geo.signature,
    'light',
    range(20, (i) => `page${i}`),
  );
  const d = await filter.describe('light', NOW);
  return [geo.name, String(d.filters.length), fmtInt(await readerBytes(redis, keys, 'light'))];
}

async function heavyRow(
  redis: RedisClient,
  keys: Keys,
  settings: ReaderSeenSettings,
  geo: (typeof GEOMETRIES)[number],
  filter: RedisReaderSeenFilter,
  size: number,
): Promise<string[]> {
  const reader = `heavy${size}`;
  const items = range(size, (i) => `m${i}`);
  const mem = await seed(redis, keys, settings, geo.signature, reader, items);
  const d = await filter.describe(reader, NOW);
  const fpr = (await mem.seen(reader, PROBES, NOW)).filter(Boolean).length / PROBES.length;
  const tests = bitTests(mem, parseSignature(geo.signature)!, reader, CANDIDATES);
  const seen = await timeLoop(() => filter.seen(reader, CANDIDATES, NOW), LOOP);
  // marks change the reader: time them on a copy, seeded again every 10 marks (unmeasured)
  const marks: number[] = [];
  for (let round = 0; round < 20; round++) {
    await seed(redis, keys, settings, geo.signature, `${reader}m`, items);
    for (let j = 0; j < 10; j++) {
      const page = range(20, (x) => `new${round}_${j}_${x}`);
      const t = performance.now();
      await filter.markSeen(`${reader}m`, page, NOW);
      marks.push(performance.now() - t);
    }
  }
  const mark = summarizeMs(marks);
  return [
    geo.name,
    fmtInt(d.members),
    String(d.filters.length),
    fmtInt(await readerBytes(redis, keys, reader)),
    fmtPct(d.expectedRate),
    fmtPct(fpr),
    tests.toFixed(1),
    fmtMs(seen.p50),
    fmtMs(seen.p99),
    fmtMs(mark.p50),
    fmtMs(mark.p99),
  ];
}

function summarizeMs(samples: number[]): Pick<Summary, 'p50' | 'p99'> {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: sorted[Math.ceil(0.5 * sorted.length) - 1]!, p99: sorted[Math.ceil(0.99 * sorted.length) - 1]! };
}

/** Mean bits tested per candidate: open sub-filters newest first, each walked until its first 0 bit. */
function bitTests(mem: MemoryReaderSeenFilter, g: ScalableGeometry, reader: string, ids: readonly string[]): number {
  const bitmap = mem.bitmapOf(reader)!;
  const open = mem.saved(reader)!.counts.length;
  const pairs = hashPairs(reader, ids);
  let tests = 0;
  for (let c = 0; c < ids.length; c++) {
    for (let i = open - 1; i >= 0; i--) {
      const l = g.levels[i]!;
      let p = pairs[2 * c]! % l.bits;
      const step = pairs[2 * c + 1]! % l.bits;
      let all = true;
      for (let j = 0; j < l.hashes; j++) {
        tests++;
        const bit = l.offset + p;
        if ((bitmap[bit >>> 3]! & (0x80 >>> (bit & 7))) === 0) {
          all = false;
          break;
        }
        p += step;
        if (p >= l.bits) p -= l.bits;
      }
      if (all) break;
    }
  }
  return tests / ids.length;
}

runIfMain(import.meta.url, run);
