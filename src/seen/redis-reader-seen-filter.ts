/**
 * The per-reader scalable seen filter of note 3 on stock Redis (standalone or Cluster): one bitmap
 * string and one state HASH per reader, both under the reader's hash tag `{u:<reader>}` (keys.ts), so
 * every call is ONE `EVALSHA` of `readerSeen-3` (lua/readerSeen-3.lua) on one slot. With checkpoints
 * (seen-checkpointer.ts) a mark also journals the members it adds, and a reader with no state in Redis
 * (new, expired, or lost with Redis) is restored from PostgreSQL before it is answered. Hashing and
 * geometry are the engine's (src/seen/bloom.ts, src/seen/scalable-bloom.ts); Lua only walks bits.
 * Same bits, same answers as the in-process adapter (src/seen/memory-reader-seen-filter.ts).
 */
import { assertId } from '../kernel/ids.js';
import { hashPairs, packPairs } from './bloom.js';
import { compoundRate, geometrySignature, scalableLevels, type SubFilterGeometry } from './scalable-bloom.js';
import type { ReaderFilterState, ReaderSeenFilter, ReaderSeenSettings } from '../kernel/reader-seen-filter.js';
import type { RedisClient } from '../kernel/redis/client.js';
import { redisCall } from '../kernel/redis/errors.js';
import type { Keys } from '../kernel/redis/keys.js';
import { LuaScripts } from '../kernel/redis/lua.js';
import { fail } from '../kernel/errors.js';
import type { ReaderRestorer } from './seen-checkpointer.js';
import { MAX_RESTORES } from './redis-seen-filter.js';

/** The scripts (./lua/): check, mark or describe one reader's filter; index a reader's new journal. */
export const READER_SEEN_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), ['readerSeen-3', 'seenIndex-1']);

/** Options of {@link RedisReaderSeenFilter}. */
export interface RedisReaderSeenFilterOptions {
  /**
   * The PostgreSQL checkpoints (seen-checkpointer.ts). With them, marks journal the members they add
   * (and index the reader for the next checkpoint), and a check or mark of a reader with no state in
   * Redis restores it from PostgreSQL first; without them (tests, tools) a lost filter is empty.
   */
  checkpoints?: ReaderRestorer;
}

/** The packed members of a check of none (`warm`). */
const NO_MEMBERS = Buffer.alloc(0);

/** {@link ReaderSeenFilter} on Redis. The client is the caller's (not closed here). */
export class RedisReaderSeenFilter implements ReaderSeenFilter {
  private readonly levels: SubFilterGeometry[];
  private readonly levelArg: string;
  private readonly signature: string;
  private readonly lua;
  private readonly checkpoints: ReaderRestorer | undefined;
  private readonly flags: string;

  /** @throws RangeError for an invalid capacity, rate or TTL. */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly settings: ReaderSeenSettings,
    opts: RedisReaderSeenFilterOptions = {},
  ) {
    this.checkpoints = opts.checkpoints;
    this.flags = opts.checkpoints ? 'gj' : '';
    if (!(settings.ttlMs > 0)) throw new RangeError('ttlMs must be > 0');
    this.levels = scalableLevels(settings.initialCapacity, settings.errorRate);
    this.levelArg = this.levels.map((g) => `${g.offset},${g.bits},${g.hashes},${g.capacity};`).join('');
    this.signature = geometrySignature(settings.initialCapacity, settings.errorRate);
    this.lua = READER_SEEN_SCRIPTS.on(redis);
  }

  /**
   * One round trip (two when the reader had no state in Redis and checkpoints are on: the restore
   * from PostgreSQL comes first).
   */
  async seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]> {
    assertId(readerId, 'reader id');
    if (itemIds.length === 0) return [];
    const reply = await this.guarded('c', readerId, nowMs, packPairs(hashPairs(readerId, itemIds)));
    if (typeof reply !== 'string' || reply.length !== itemIds.length)
      throw READER_SEEN_SCRIPTS.unexpected('readerSeen', reply);
    return itemIds.map((_, i) => reply.charCodeAt(i) === 49); // '1'
  }

  /**
   * With checkpoints: a check of no members, which restores the reader's filter from PostgreSQL when
   * Redis has no state for it (a new reader gets an empty state). Without checkpoints there is nothing
   * to ready. One round trip (three when it restores).
   */
  async warm(readerId: string, nowMs: number): Promise<void> {
    assertId(readerId, 'reader id');
    if (!this.checkpoints) return;
    await this.guarded('c', readerId, nowMs, NO_MEMBERS);
  }

  /**
   * One round trip; with checkpoints, one more when this mark started the reader's journal (the
   * reader joins its shard's dirty set, read by the next checkpoint), and a restore first when the
   * reader had no state in Redis.
   */
  async markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void> {
    assertId(readerId, 'reader id');
    if (itemIds.length === 0) return;
    const reply = await this.guarded('m', readerId, nowMs, packPairs(hashPairs(readerId, itemIds)));
    if (!Array.isArray(reply) || reply.length !== 2) throw READER_SEEN_SCRIPTS.unexpected('readerSeen', reply);
    if (reply[1] === 1) {
      // after the script, never before: a checkpoint that took the set in between would miss the journal
      const dirty = this.keys.readerSeenDirty(this.keys.seenShard(readerId));
      await this.lua.seenIndex([dirty], [readerId, Math.floor(this.settings.ttlMs)]);
    }
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

  /**
   * Deletes the filter, its journals and (with checkpoints) its PostgreSQL checkpoints, then the
   * Redis keys again: a restore that ran between the two finds nothing left to put back.
   */
  async forget(readerId: string): Promise<void> {
    assertId(readerId, 'reader id');
    // the keys share one slot, so one DEL works on a Cluster too
    const k = this.keys;
    const all = [
      k.readerSeen(readerId),
      k.readerSeenMeta(readerId),
      k.readerSeenJournal(readerId),
      k.readerSeenJournalTaken(readerId),
      k.readerSeenJournalLease(readerId),
    ];
    await redisCall(this.redis.del(...all));
    if (!this.checkpoints) return;
    await this.checkpoints.forgetReader(readerId);
    await redisCall(this.redis.del(...all));
  }

  async close(): Promise<void> {}

  /** {@link run}, restoring the reader first when the script finds no state (checkpoints only). */
  private async guarded(mode: 'c' | 'm', readerId: string, nowMs: number, packed: Buffer): Promise<unknown> {
    for (let restores = 0; ; restores++) {
      const reply = await this.run(mode, readerId, nowMs, packed);
      if (reply !== '?' || !this.checkpoints) return reply;
      if (restores === MAX_RESTORES) {
        throw fail(
          'STORE_UNAVAILABLE',
          "Redis unavailable: the reader's seen filter was lost again during its restore",
          { store: 'redis' },
        );
      }
      await this.checkpoints.restoreReader(readerId, nowMs);
    }
  }

  private run(mode: 'c' | 'm' | 'd', readerId: string, nowMs: number, packed: Buffer | string): Promise<unknown> {
    const keys = [
      this.keys.readerSeen(readerId),
      this.keys.readerSeenMeta(readerId),
      this.keys.readerSeenJournal(readerId),
    ];
    const args = [
      mode,
      Math.floor(nowMs),
      Math.floor(this.settings.ttlMs),
      this.signature,
      this.levelArg,
      packed,
      this.flags,
    ];
    return this.lua.readerSeen(keys, args);
  }
}
