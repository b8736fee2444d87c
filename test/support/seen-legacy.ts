/**
 * Seen-filter state exactly as the version before 0.2.0 left it, for the upgrade tests
 * (test/seen/seen-upgrade.test.ts): its Redis keys, its PostgreSQL checkpoint rows, its snapshot files.
 *
 * - Rolling days: one key per day and shard under the `global…` tags (`Keys.legacySeenDays`), written by
 *   the mark script that version ran (seenMark-4.lua: the same bits, journal and index; only the way a
 *   missing key is created differs, not its bytes), and no day-layout key (that version had none).
 * - Per-reader filters: signature `100000:0.01:s2:r0.5`, every sub-filter in ONE string at its offset
 *   (`Keys.readerSeen`), state HASH {t, g, c} — the bytes the in-process filter builds under that
 *   signature (it was that version's executable spec, bit for bit).
 * - Snapshots: the in-process rolling filter's format 1 (one geometry in the header) and the per-reader
 *   format 2 (one signature for the file), written byte for byte as that version wrote them.
 */
import { randomInt } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dayStamp } from '../../src/kernel/clock.js';
import { shardOf, type Keys } from '../../src/kernel/redis/keys.js';
import type { RedisClient } from '../../src/kernel/redis/client.js';
import { hashPairs, packPairs, seenDayEnd, setAllBits, type BloomGeometry } from '../../src/seen/bloom.js';
import { SEEN_SCRIPTS } from '../../src/seen/redis-seen-filter.js';
import { MemoryReaderSeenFilter } from '../../src/seen/memory-reader-seen-filter.js';
import type { ReaderSeenSettings } from '../../src/kernel/reader-seen-filter.js';

/** The per-reader signature of the version before 0.2.0 at its defaults (n0 = 100,000, P = 1 %, one string). */
export const OLD_READER_SIGNATURE = '100000:0.01:s2:r0.5';

/**
 * Marks `items` for `reader` on the day of `nowMs` as that version did: the day key of the reader's
 * shard of `shards` under the `global…` tags, its version, and (with `journal`) the day's journal and
 * the shard's journal index.
 */
export async function markLegacyDay(
  redis: RedisClient,
  keys: Keys,
  g: BloomGeometry,
  shards: number,
  reader: string,
  items: readonly string[],
  nowMs: number,
  journal = false,
): Promise<void> {
  const day = dayStamp(nowMs);
  const sk = keys.legacySeenDays(shards, shardOf(reader, shards));
  await SEEN_SCRIPTS.on(redis).seenMark(
    [sk.day(day), sk.version(day), sk.journal(day), sk.journalDays()],
    [
      g.bits,
      g.hashes,
      seenDayEnd(nowMs, g.days) - nowMs,
      packPairs(hashPairs(reader, items)),
      randomInt(1, 2 ** 48),
      journal ? day : '',
    ],
  );
}

/**
 * Puts a per-reader filter of the old signature into Redis, as that version held it after marking each
 * batch of `batches` at `nowMs` (one string holding every sub-filter, the state HASH, the reader TTL).
 */
export async function putOldReader(
  redis: RedisClient,
  keys: Keys,
  settings: ReaderSeenSettings,
  reader: string,
  batches: readonly (readonly string[])[],
  nowMs: number,
): Promise<void> {
  const f = new MemoryReaderSeenFilter(settings, OLD_READER_SIGNATURE);
  for (const items of batches) await f.markSeen(reader, items, nowMs);
  const saved = f.saved(reader)!;
  const ttl = Math.floor(settings.ttlMs);
  await redis.set(keys.readerSeen(reader), Buffer.from(saved.bitmap), 'PX', ttl);
  await redis.hset(
    keys.readerSeenMeta(reader),
    't',
    String(nowMs),
    'g',
    OLD_READER_SIGNATURE,
    'c',
    saved.counts.join(','),
  );
  await redis.pexpire(keys.readerSeenMeta(reader), ttl);
}

/** One day bitmap of the old in-process rolling filter: `key` as that version named it (no prefix). */
export interface OldDay {
  key: string;
  bitmap: Uint8Array;
  expiresAt: number;
}

/** The bitmap of one day and shard holding `members` (`[reader, item]`), as that version built it. */
export function oldDayBitmap(g: BloomGeometry, members: readonly (readonly [string, string])[]): Uint8Array {
  const bitmap = new Uint8Array(Math.ceil(g.bits / 8));
  for (const [reader, item] of members) {
    const [h1, h2] = hashPairs(reader, [item]);
    setAllBits(bitmap, g.bits, g.hashes, h1! % g.bits, h2! % g.bits);
  }
  return bitmap;
}

/** The old rolling snapshot (format 1): "FSSF", 1, bits, hashes, days, shards, count, then the days. */
export async function writeOldRollingSnapshot(
  path: string,
  g: BloomGeometry,
  shards: number,
  days: readonly OldDay[],
): Promise<void> {
  const head = Buffer.alloc(32);
  head.writeUInt32LE(0x46535346, 0);
  head.writeUInt32LE(1, 4);
  head.writeDoubleLE(g.bits, 8);
  head.writeUInt32LE(g.hashes, 16);
  head.writeUInt32LE(g.days, 20);
  head.writeUInt32LE(shards, 24);
  head.writeUInt32LE(days.length, 28);
  const parts: Buffer[] = [head];
  for (const d of days) {
    const name = Buffer.from(d.key, 'utf8');
    const entry = Buffer.alloc(2 + name.length + 12);
    entry.writeUInt16LE(name.length, 0);
    name.copy(entry, 2);
    entry.writeDoubleLE(d.expiresAt, 2 + name.length);
    entry.writeUInt32LE(d.bitmap.byteLength, 10 + name.length);
    parts.push(entry, Buffer.from(d.bitmap));
  }
  await writeFile(path, Buffer.concat(parts));
}

/**
 * The old per-reader snapshot (format 2): "FSRS", 2, the file's signature, count, then per reader id,
 * last activity, counts, bitmap (raw DEFLATE) — readers built under the old signature from `batches`.
 */
export async function writeOldReaderSnapshot(
  path: string,
  settings: ReaderSeenSettings,
  readers: ReadonlyMap<string, readonly (readonly string[])[]>,
  nowMs: number,
): Promise<void> {
  const { deflateRawSync } = await import('node:zlib');
  const f = new MemoryReaderSeenFilter(settings, OLD_READER_SIGNATURE);
  for (const [reader, batches] of readers) for (const items of batches) await f.markSeen(reader, items, nowMs);
  const sig = Buffer.from(OLD_READER_SIGNATURE, 'utf8');
  const head = Buffer.alloc(4 + 4 + 2 + sig.length + 4);
  head.writeUInt32LE(0x53525346, 0);
  head.writeUInt32LE(2, 4);
  head.writeUInt16LE(sig.length, 8);
  sig.copy(head, 10);
  head.writeUInt32LE(readers.size, 10 + sig.length);
  const parts: Buffer[] = [head];
  for (const reader of readers.keys()) {
    const s = f.saved(reader)!;
    const id = Buffer.from(reader, 'utf8');
    const packed = deflateRawSync(s.bitmap, { level: 1 });
    const entry = Buffer.alloc(2 + id.length + 8 + 2 + 4 * s.counts.length + 8);
    let at = entry.writeUInt16LE(id.length, 0);
    at += id.copy(entry, at);
    at = entry.writeDoubleLE(s.lastActive, at);
    at = entry.writeUInt16LE(s.counts.length, at);
    for (const c of s.counts) at = entry.writeUInt32LE(c, at);
    at = entry.writeUInt32LE(s.bitmap.byteLength, at);
    entry.writeUInt32LE(packed.byteLength, at);
    parts.push(entry, packed);
  }
  await writeFile(path, Buffer.concat(parts));
}
