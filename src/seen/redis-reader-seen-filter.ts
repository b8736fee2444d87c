/**
 * The per-reader scalable seen filter of the discover design on stock Redis (standalone or Cluster): one string per
 * sub-filter and one state HASH per reader, all under the reader's hash tag `{u:<reader>}` (src/kernel/redis/keys.ts),
 * so every call is ONE `EVALSHA` of `readerSeen-3+N` (lua/readerSeen-3+N.lua) on one slot. A filter
 * starts with a first sub-filter of `initialCapacity` members (100 by default: 149 bytes at 1 %) and
 * opens each next one at its own size when the last fills, so a reader pays for what they saw.
 *
 * A reader's filter keeps the geometry it was started with (its signature, scalable-bloom.ts): one
 * written under other settings is read and marked under its own geometry until it is gone — the script answers with the filter's
 * signature and the call runs again under it (two round trips, then one: the signature is
 * remembered for {@link FOREIGN_READERS} readers). With checkpoints (seen-checkpointer.ts) a mark
 * also journals the members it adds (and indexes the reader for the next checkpoint), and a reader
 * with no state in Redis (new, expired, or lost with Redis) is restored from PostgreSQL before it is
 * answered. Hashing and geometry are the engine's (src/seen/bloom.ts, src/seen/scalable-bloom.ts);
 * Lua only walks bits. Same bits, same answers as the in-process adapter
 * (src/seen/memory-reader-seen-filter.ts).
 */
import { assertId } from '../kernel/ids.js';
import { hasAllBits, hashPairs, packPairs } from './bloom.js';
import { compoundRate, parseSignature, probeOf, scalableGeometry, type ScalableGeometry } from './scalable-bloom.js';
import type { ReaderFilterState, ReaderSeenFilter, ReaderSeenSettings } from '../kernel/reader-seen-filter.js';
import type { SeenProbe } from '../kernel/seen-filter.js';
import type { RedisClient } from '../kernel/redis/client.js';
import { redisCall } from '../kernel/redis/errors.js';
import { READER_DIRTY_SHARDS, shardOf, type Keys } from '../kernel/redis/keys.js';
import { LuaScripts } from '../kernel/redis/lua.js';
import { fail } from '../kernel/errors.js';
import type { ReaderRestorer } from './seen-checkpointer.js';
import { MAX_RESTORES } from './redis-seen-filter.js';

/** The scripts (./lua/): check, mark or describe one reader's filter; index a reader's new journal. */
export const READER_SEEN_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), [
  'readerSeen-3+N',
  'readerSeenProbe-2+N',
  'seenIndex-1',
]);

/** Readers whose filter has another signature than the settings', remembered so their calls take one round trip. */
export const FOREIGN_READERS = 65_536;

/** Sub-filter strings `forget` deletes (a split filter has at most 14 at any accepted n0 and rate). */
const FORGET_LEVELS = 16;

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
  /** The geometry of filters started here. */
  private readonly g: ScalableGeometry;
  private readonly lua;
  private readonly checkpoints: ReaderRestorer | undefined;
  /** Reader → signature of its live filter when not the settings' (LRU, {@link FOREIGN_READERS}). */
  private readonly foreign = new Map<string, string>();

  /** @throws RangeError for an invalid capacity, rate or TTL. */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly settings: ReaderSeenSettings,
    opts: RedisReaderSeenFilterOptions = {},
  ) {
    this.checkpoints = opts.checkpoints;
    if (!(settings.ttlMs > 0)) throw new RangeError('ttlMs must be > 0');
    this.g = scalableGeometry(settings.initialCapacity, settings.errorRate);
    this.lua = READER_SEEN_SCRIPTS.on(redis);
  }

  /**
   * One round trip (two when the reader had no state in Redis and checkpoints are on: the restore
   * from PostgreSQL comes first; one more the first time a filter of another geometry is met).
   */
  async seen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<boolean[]> {
    assertId(readerId, 'reader id');
    if (itemIds.length === 0) return [];
    const pairs = hashPairs(readerId, itemIds);
    const { reply, g } = await this.guarded('c', readerId, nowMs, packPairs(pairs));
    const answers = Array.isArray(reply) ? reply[0] : reply;
    if (!(answers instanceof Buffer) || answers.length !== itemIds.length)
      throw READER_SEEN_SCRIPTS.unexpected('readerSeen', reply);
    const out = itemIds.map((_, i) => answers[i] === 49); // '1'
    if (Array.isArray(reply)) testShipped(g, reply.slice(1) as Buffer[], pairs, out);
    return out;
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
   * reader joins its dirty set, read by the next checkpoint), and a restore first when the reader
   * had no state in Redis.
   */
  async markSeen(readerId: string, itemIds: readonly string[], nowMs: number): Promise<void> {
    assertId(readerId, 'reader id');
    if (itemIds.length === 0) return;
    const { reply } = await this.guarded('m', readerId, nowMs, packPairs(hashPairs(readerId, itemIds)));
    if (!Array.isArray(reply) || reply.length !== 2) throw READER_SEEN_SCRIPTS.unexpected('readerSeen', reply);
    if (reply[1] === 1) {
      // after the script, never before: a checkpoint that took the set in between would miss the journal
      const dirty = this.keys.readerSeenDirty(shardOf(readerId, READER_DIRTY_SHARDS));
      await this.lua.seenIndex([dirty], [readerId, Math.floor(this.settings.ttlMs)]);
    }
  }

  /**
   * Read-only (`SeenFilter.probe`): one `readerSeenProbe-2+N` (two when the filter has another geometry
   * than the settings'): per member, the newest sub-filter holding it and its rate from its member count.
   * No TTL refresh and no restore: a reader Redis lost reads as unseen.
   */
  async probe(readerId: string, itemIds: readonly string[], nowMs: number): Promise<SeenProbe[]> {
    assertId(readerId, 'reader id');
    const none = () => itemIds.map(() => ({ seen: false, day: null, subFilter: null, fpr: 0 }));
    if (itemIds.length === 0) return [];
    const packed = packPairs(hashPairs(readerId, itemIds));
    let g: ScalableGeometry = this.geometryOf(readerId);
    let reply: unknown;
    for (let tries = 0; tries < 2; tries++) {
      const keys = this.scriptKeys(readerId, g).filter((_, i) => i !== 2); // no journal
      reply = await this.lua.readerSeenProbe(keys, [
        Math.floor(nowMs),
        Math.floor(this.settings.ttlMs),
        g.signature,
        levelArg(g),
        packed,
      ]);
      if (reply === '' || reply === null) return none();
      if (!Array.isArray(reply) || reply.length !== 2) break;
      if (reply[0] !== '?g') {
        const counts = String(reply[0]).split(',').map(Number);
        const levels = String(reply[1]).split(',').map(Number);
        if (levels.length !== itemIds.length) break;
        return levels.map((l) => probeOf(g, counts, l < 0 ? null : l));
      }
      const other = parseSignature(String(reply[1]));
      if (!other) return none(); // a geometry this version cannot read: replaced at the next mark
      g = other;
    }
    throw READER_SEEN_SCRIPTS.unexpected('readerSeenProbe', reply);
  }

  async describe(readerId: string, nowMs: number): Promise<ReaderFilterState> {
    assertId(readerId, 'reader id');
    const { reply, g } = await this.run('d', readerId, nowMs, '');
    const [t, c, bytes] = (reply as [Buffer, Buffer, number]).map((x) => (Buffer.isBuffer(x) ? x.toString() : x)) as [
      string,
      string,
      number,
    ];
    if (t === '') return { filters: [], members: 0, bytes: 0, lastActiveMs: null, expectedRate: 0, signature: null };
    const counts = c.split(',').map(Number);
    return {
      filters: counts.map((members, i) => {
        const l = g.levels[i]!;
        return { bits: l.bits, hashes: l.hashes, capacity: l.capacity, rate: l.rate, members };
      }),
      members: counts.reduce((a, b) => a + b, 0),
      bytes: Number(bytes),
      lastActiveMs: Number(t),
      expectedRate: compoundRate(g.levels, counts),
      signature: g.signature,
    };
  }

  /**
   * Deletes the filter, its journals and (with checkpoints) its PostgreSQL checkpoints, then the
   * Redis keys again: a restore that ran between the two finds nothing left to put back. With
   * checkpoints, the reader also leaves its shard's dirty-reader set (and the set a running checkpoint
   * took): a mark since the last checkpoint put its id there, where it stayed until the next one.
   */
  async forget(readerId: string): Promise<void> {
    assertId(readerId, 'reader id');
    this.foreign.delete(readerId);
    // the keys share one slot, so one DEL works on a Cluster too
    const k = this.keys;
    const all = [
      k.readerSeen(readerId),
      k.readerSeenMeta(readerId),
      k.readerSeenJournal(readerId),
      k.readerSeenJournalTaken(readerId),
      k.readerSeenJournalLease(readerId),
      ...Array.from({ length: FORGET_LEVELS - 1 }, (_, i) => k.readerSeenLevel(readerId, i + 1)),
    ];
    await redisCall(this.redis.del(...all));
    if (!this.checkpoints) return;
    await this.checkpoints.forgetReader(readerId);
    await redisCall(this.redis.del(...all));
    const shard = shardOf(readerId, READER_DIRTY_SHARDS);
    // each set under its shard's tag: two commands (another slot than the reader's keys on a Cluster)
    await redisCall(this.redis.srem(this.keys.readerSeenDirty(shard), readerId));
    await redisCall(this.redis.srem(this.keys.readerSeenDirtyTaken(shard), readerId));
  }

  async close(): Promise<void> {}

  /** {@link run}, restoring the reader first when the script finds no state (checkpoints only). */
  private async guarded(
    mode: 'c' | 'm',
    readerId: string,
    nowMs: number,
    packed: Buffer,
  ): Promise<{ reply: unknown; g: ScalableGeometry }> {
    for (let restores = 0; ; restores++) {
      const r = await this.run(mode, readerId, nowMs, packed);
      if (!isMissing(r.reply) || !this.checkpoints) return r;
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

  /**
   * One script run under the reader's geometry: the settings', or the one its live filter was
   * started with (learned from the script's `{'?g', sig}` answer and remembered).
   */
  private async run(
    mode: 'c' | 'm' | 'd',
    readerId: string,
    nowMs: number,
    packed: Buffer | string,
  ): Promise<{ reply: unknown; g: ScalableGeometry }> {
    let g = this.geometryOf(readerId);
    for (let tries = 0; ; tries++) {
      const reply = await this.lua.readerSeen.buffer(
        this.scriptKeys(readerId, g),
        this.scriptArgs(mode, g, nowMs, packed),
      );
      if (!Array.isArray(reply) || String(reply[0]) !== '?g') return { reply, g };
      if (tries === 2) throw READER_SEEN_SCRIPTS.unexpected('readerSeen', reply);
      const sig = String(reply[1]);
      const other = sig === '' ? null : parseSignature(sig);
      if (other && sig !== this.g.signature) this.remember(readerId, sig);
      else this.foreign.delete(readerId);
      // a signature this version cannot read: run under the settings', replacing that filter ('r')
      g = other ?? { ...this.g, signature: this.g.signature, replace: sig !== '' };
    }
  }

  /** The geometry the reader's filter is known to have (the settings' unless remembered otherwise). */
  private geometryOf(readerId: string): ScalableGeometry & { replace?: boolean } {
    const sig = this.foreign.get(readerId);
    if (sig === undefined) return this.g;
    this.foreign.delete(readerId); // most recently used goes last
    this.foreign.set(readerId, sig);
    return parseSignature(sig) ?? this.g;
  }

  private remember(readerId: string, sig: string): void {
    this.foreign.delete(readerId);
    if (this.foreign.size >= FOREIGN_READERS) this.foreign.delete(this.foreign.keys().next().value!);
    this.foreign.set(readerId, sig);
  }

  private scriptKeys(readerId: string, g: ScalableGeometry): string[] {
    const k = this.keys;
    const out = [k.readerSeen(readerId), k.readerSeenMeta(readerId), k.readerSeenJournal(readerId)];
    for (let i = 1; i < g.levels.length; i++) out.push(k.readerSeenLevel(readerId, i));
    return out;
  }

  private scriptArgs(
    mode: 'c' | 'm' | 'd',
    g: ScalableGeometry & { replace?: boolean },
    nowMs: number,
    packed: Buffer | string,
  ): (string | number | Buffer)[] {
    let flags = this.checkpoints ? 'gj' : '';
    if (g.signature !== this.g.signature) flags += 'o';
    if (g.replace) flags += 'r';
    return [mode, Math.floor(nowMs), Math.floor(this.settings.ttlMs), g.signature, levelArg(g), packed, flags];
  }
}

/** A guarded call's answer for a reader with no state in Redis: '?'. */
function isMissing(reply: unknown): boolean {
  return Buffer.isBuffer(reply) && reply.length === 1 && reply[0] === 63; // '?'
}

/**
 * Tests the members still answered false against sub-filters 0..j-1 the check shipped (their bytes as
 * Redis holds them, each a string of its own): sets true
 * where one has all k bits.
 */
function testShipped(g: ScalableGeometry, shipped: readonly Buffer[], pairs: Uint32Array, out: boolean[]): void {
  for (let i = 0; i < shipped.length; i++) {
    const l = g.levels[i]!;
    const bytes = shipped[i]!;
    for (let j = 0; j < out.length; j++) {
      if (out[j]) continue;
      if (hasAllBits(bytes, l.bits, l.hashes, pairs[2 * j]! % l.bits, pairs[2 * j + 1]! % l.bits)) out[j] = true;
    }
  }
}

const levelArgs = new WeakMap<ScalableGeometry, string>();

/** The script's sub-filter list, 'offset,bits,hashes,capacity;' per level (cached per geometry). */
function levelArg(g: ScalableGeometry): string {
  let s = levelArgs.get(g);
  if (s === undefined) {
    s = g.levels.map((l) => `${l.offset},${l.bits},${l.hashes},${l.capacity};`).join('');
    levelArgs.set(g, s);
  }
  return s;
}
