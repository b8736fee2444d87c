/**
 * The per-reader scalable seen filter of note 3 on stock Redis (standalone or Cluster): one bitmap
 * string and one state HASH per reader, both under the reader's hash tag `{u:<reader>}` (keys.ts), so
 * every call is ONE `EVALSHA` of `readerSeen-2` (scripts/reader-seen.ts) on one slot. Hashing and
 * geometry are the engine's (src/domain/bloom.ts, src/domain/scalable-bloom.ts); Lua only walks bits.
 * Same bits, same answers as the in-process adapter (src/adapters/memory/reader-seen-filter.ts).
 */
import { assertId } from '../../domain/ids.js';
import { hashPairs } from '../../domain/bloom.js';
import { compoundRate, geometrySignature, scalableLevels, type SubFilterGeometry } from '../../domain/scalable-bloom.js';
import type { ReaderFilterState, ReaderSeenFilter, ReaderSeenSettings } from '../../ports/reader-seen-filter.js';
import { runScript, type RedisClient } from './client.js';
import type { Keys } from './keys.js';
import { readerSeen } from './scripts/reader-seen.js';

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** {@link ReaderSeenFilter} on Redis. The client is the caller's (not closed here). */
export class RedisReaderSeenFilter implements ReaderSeenFilter {
  private readonly levels: SubFilterGeometry[];
  private readonly levelArg: string;
  private readonly signature: string;

  /** @throws RangeError for an invalid capacity, rate or TTL. */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly settings: ReaderSeenSettings,
  ) {
    if (!(settings.ttlMs > 0)) throw new RangeError('ttlMs must be > 0');
    this.levels = scalableLevels(settings.initialCapacity, settings.errorRate);
    this.levelArg = this.levels.map((g) => `${g.offset},${g.bits},${g.hashes},${g.capacity};`).join('');
    this.signature = geometrySignature(settings.initialCapacity, settings.errorRate);
  }

  async seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]> {
    assertId(readerId, 'reader id');
    if (itemIds.length === 0) return [];
    const reply = await this.run('c', readerId, nowMs, pack(hashPairs(readerId, itemIds)));
    if (typeof reply !== 'string' || reply.length !== itemIds.length) throw new Error('readerSeen-2: unexpected reply');
    return itemIds.map((_, i) => reply.charCodeAt(i) === 49); // '1'
  }

  async markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void> {
    assertId(readerId, 'reader id');
    if (itemIds.length === 0) return;
    await this.run('m', readerId, nowMs, pack(hashPairs(readerId, itemIds)));
  }

  async describe(readerId: string, nowMs: number): Promise<ReaderFilterState> {
    assertId(readerId, 'reader id');
    const reply = (await this.run('d', readerId, nowMs, '')) as [string, string, number];
    if (reply[0] === '') return { filters: [], members: 0, bytes: 0, lastActiveMs: null, expectedRate: 0 };
    const counts = reply[1].split(',').map(Number);
    return {
      filters: counts.map((members, i) => {
        const g = this.levels[i]!;
        return { bits: g.bits, hashes: g.hashes, capacity: g.capacity, rate: g.rate, members };
      }),
      members: counts.reduce((a, b) => a + b, 0),
      bytes: Number(reply[2]),
      lastActiveMs: Number(reply[0]),
      expectedRate: compoundRate(this.levels, counts),
    };
  }

  async forget(readerId: string): Promise<void> {
    assertId(readerId, 'reader id');
    // both keys share one slot, so one DEL works on a Cluster too
    await this.redis.del(this.keys.readerSeen(readerId), this.keys.readerSeenMeta(readerId));
  }

  async close(): Promise<void> {}

  private run(mode: 'c' | 'm' | 'd', readerId: string, nowMs: number, packed: Buffer | string): Promise<unknown> {
    const keys = [this.keys.readerSeen(readerId), this.keys.readerSeenMeta(readerId)];
    const args = [mode, Math.floor(nowMs), Math.floor(this.settings.ttlMs), this.signature, this.levelArg, packed];
    return runScript(this.redis, readerSeen, keys, args);
  }
}

/** Hash pairs as the script unpacks them: 8 bytes per member, h1 then h2, little-endian uint32. */
function pack(pairs: Uint32Array): Buffer {
  const buf = Buffer.from(pairs.buffer, pairs.byteOffset, pairs.byteLength);
  return LITTLE_ENDIAN ? buf : Buffer.from(buf).swap32();
}
