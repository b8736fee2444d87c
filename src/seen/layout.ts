/**
 * How a day of the for-you design's rolling seen filter is laid out: how many shard bitmaps, each of which Bloom
 * geometry — the capacity of a shard rather than of a day, so no key grows with the deployment.
 *
 * Derivation: a day of `capacityPerDay` impressions is split over
 * N = max(⌈capacityPerDay / C⌉, min(minShards, ⌊capacityPerDay / 10,000⌋)) shards (readers hashed to
 * them, `shardOf`: {@link shardCount}), each sized by
 * {@link sizeWindow} for ⌈capacityPerDay / N⌉ members at the window rate, where C is the shard
 * capacity asked for, capped at what a bitmap of {@link MAX_SHARD_BITS} (1 MiB) holds at that rate
 * and window ({@link maxShardCapacity}: 615,611 at 1 % over 7 days). Redis creates a shard's bitmap
 * zeroed in one allocation (SETRANGE): measured on the 2-core test machine under a load average of
 * 10, 0.44 / 0.72 / 1.9 ms on average at 1 / 2 / 4 MiB, with commands of 13–19 ms recorded by Redis's
 * latency monitor at 2 MiB and spikes to 9 ms at 4 MiB (8 MiB: 4–9 ms, 64 MiB: 33 ms); 1 MiB keeps the
 * creation well under the 10 ms a Redis stall may take, with the most room for a busy machine. At
 * the defaults (1,000,000 impressions a day, 16 shards) a shard is 106 KB; 10 million readers × 200
 * impressions a day take 3,249 shards of 1 MiB.
 *
 * A day keeps the layout it started with: the first process that touches a day records the layout
 * (day-layouts.ts), every process reads and writes that day under it, and a change of capacity,
 * rate or shards applies from the next day not yet touched — older days are read under their own
 * layouts until they leave the window, so a change never makes a reader see an item again.
 */
import type { Keys, SeenShardKeys } from '../kernel/redis/keys.js';
import { sizeWindow, type BloomGeometry } from './bloom.js';

/**
 * Largest shard bitmap (bits): 1 MiB less 16 bytes, created in well under the 10 ms a Redis stall may take
 * (see the module doc). The 16 bytes leave room for the string's header, so Redis's allocator (jemalloc)
 * holds it in a 1 MiB size class: a string of exactly 1 MiB takes 1.25 MiB (`MEMORY USAGE` 1,310,768).
 */
export const MAX_SHARD_BITS = 8 * (2 ** 20 - 16);

/** The layout of one day. */
export interface SeenLayout {
  /** Its name: `n<shards>c<capacity>m<bits>k<hashes>` (what the day's layout key and a checkpoint subject hold). */
  id: string;
  /** Shard bitmaps per day (N). */
  shards: number;
  /** Each shard's bitmap. */
  geometry: BloomGeometry;
}

/** What a layout is derived from (the `FRESHET_SEEN_*` settings). */
export interface LayoutSettings {
  /** Days in the window (D). */
  days: number;
  /** Impressions per day, all shards together. */
  capacityPerDay: number;
  /** False-positive rate of the whole window's check at capacity. */
  windowRate: number;
  /** Fewest shards per day (spreads a small deployment over a Cluster's slots). */
  minShards: number;
  /** Most impressions one shard's bitmap of one day is sized for (capped by {@link maxShardCapacity}). */
  shardCapacity: number;
}

/**
 * The most members one shard bitmap of at most {@link MAX_SHARD_BITS} holds at the per-filter rate of
 * a window of `days` at `windowRate`: the largest n with sizeWindow(n).bits ≤ MAX_SHARD_BITS.
 */
export function maxShardCapacity(windowRate: number, days: number): number {
  const p = 1 - (1 - windowRate) ** (1 / days);
  let n = Math.floor((MAX_SHARD_BITS * Math.LN2 * Math.LN2) / -Math.log(p));
  while (n > 1 && sizeWindow(n, windowRate, days).bits > MAX_SHARD_BITS) n--;
  return n;
}

/**
 * Fewest impressions a shard is sized for when `minShards` asks for more shards than the capacity needs:
 * below ~10,000 members a shard's bitmap is small enough for double hashing to run over its rate (+15–22 %
 * measured up to 3,200 members, scalable-bloom.ts) and its load varies much with few readers hashed to it.
 */
export const MIN_SHARD_CAPACITY = 10_000;

/**
 * The shard count of a layout: max(⌈capacityPerDay / C⌉, min(minShards, ⌊capacityPerDay / 10,000⌋)),
 * C the shard capacity within its cap — the shards the capacity needs, and up to `minShards` to spread
 * the day over a Cluster as long as each still holds {@link MIN_SHARD_CAPACITY} (a small deployment of
 * 10,000 impressions a day keeps one shard).
 */
export function shardCount(s: LayoutSettings): number {
  const c = Math.min(s.shardCapacity, maxShardCapacity(s.windowRate, s.days));
  const spread = Math.min(s.minShards, Math.max(1, Math.floor(s.capacityPerDay / MIN_SHARD_CAPACITY)));
  return Math.max(spread, Math.ceil(s.capacityPerDay / c));
}

/**
 * The layout these settings give a new day.
 * @throws RangeError for settings `sizeWindow` refuses (never a shard over {@link MAX_SHARD_BITS}: the
 *   shard count makes room).
 */
export function seenLayout(s: LayoutSettings): SeenLayout {
  const shards = shardCount(s);
  const geometry = sizeWindow(Math.ceil(s.capacityPerDay / shards), s.windowRate, s.days);
  if (geometry.bits > MAX_SHARD_BITS) {
    throw new RangeError(`a shard bitmap of ${geometry.bits} bits exceeds ${MAX_SHARD_BITS} (1 MiB)`);
  }
  return { id: layoutId(shards, geometry), shards, geometry };
}

/** A layout of `shards` shards each of `geometry` (tests, benches and tools that size a shard directly). */
export function fixedLayout(geometry: BloomGeometry, shards = 1): SeenLayout {
  return { id: layoutId(shards, geometry), shards, geometry };
}

/** The keys of shard `shard` of a layout (`Keys.seenDays`: the tag names the shard count). */
export function shardKeys(keys: Keys, layout: SeenLayout, shard: number): SeenShardKeys {
  return keys.seenDays(layout.shards, shard);
}

/** `n<shards>c<capacity>m<bits>k<hashes>`. */
function layoutId(shards: number, g: BloomGeometry): string {
  return `n${shards}c${g.capacity}m${g.bits}k${g.hashes}`;
}

/**
 * The layout a stored id names (a day's layout key, a checkpoint row), with the window of `days` at
 * `windowRate` (the rates only describe it; bits and hashes are the id's), or null for a malformed id.
 */
export function parseLayout(id: string, windowRate: number, days: number): SeenLayout | null {
  const m = /^n(\d+)c(\d+)m(\d+)k(\d+)$/.exec(id);
  if (!m) return null;
  const [shards, capacity, bits, hashes] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
  if (shards < 1 || capacity < 1 || bits < 1 || bits > MAX_SHARD_BITS || hashes < 1 || hashes > 64) return null;
  const perFilterRate = 1 - (1 - windowRate) ** (1 / days);
  return { id, shards, geometry: { bits, hashes, capacity, perFilterRate, windowRate, days } };
}

/** The checkpoint subject of one shard's day (src/seen/postgres-seen-checkpoints.ts): `d:<layout id>:<shard>:<YYYYMMDD>`. */
export function daySubject(layout: SeenLayout, shard: number, day: string): string {
  return `d:${layout.id}:${shard}:${day}`;
}
