/**
 * The following timeline's inboxes and outboxes on Redis (docs/following.md): `tl:in:{u:<reader>}` and
 * `tl:out:{u:<author>}` are strings of packed tids — 7 bytes each, big-endian, ascending
 * (src/following/lua/includes/ring.lua; 800 tids = 5,600 bytes, MEMORY USAGE ≈ 6.2 KB where the
 * skiplist ZSET of earlier versions took ≈ 97 KB) — each with a state HASH (`…:meta:{u:<id>}`:
 * `state`, `floor`). Every step is one Lua script (src/following/lua/), one round trip; reads find
 * their range by binary search and return it as one packed string ({@link decodeTids}).
 *
 * Upgrade: a ZSET left by an earlier version under the same key is converted to the packed string by
 * the first script that touches it (every entry kept, its time to live kept), so paging that began
 * before the upgrade goes on without a loss or a repeat.
 *
 * Fan-out: on a standalone server `pushToInboxes` sends chunks of {@link PUSH_BATCH} readers per
 * EVALSHA (keys of many slots: fine without Cluster); on a Cluster it sends one EVALSHA per reader
 * (each with its own hash tag), all at once, which ioredis pipelines per node.
 *
 * Time to live (wall clock): an inbox's state lives `ttlMs` after the last read or rebuild, an outbox's
 * state `ttlMs` after its author's last publish, and each box of tids {@link INBOX_EXTRA_LIFE_MS} longer,
 * so a box is never seen without its state. A box created after its state (a push into an inbox that
 * its rebuild found empty) inherits the state's time to live in the same script.
 */
import { Cluster } from 'ioredis';
import { assertId } from '../../kernel/ids.js';
import type { InboxSlice, InboxState, InboxStats, OutboxSlice, TidRange, TimelineStore } from '../timeline-store.js';
import type { RedisClient } from '../../kernel/redis/client.js';
import { redisCall } from '../../kernel/redis/errors.js';
import type { Keys } from '../../kernel/redis/keys.js';
import { LuaScripts } from '../../kernel/redis/lua.js';
import { MISSING_FLOOR } from '../timeline-store.js';

/** The timeline's scripts (src/following/lua/; add and trim are includes shared by the writers). */
export const TIMELINE_SCRIPTS = new LuaScripts(new URL('../lua/', import.meta.url), [
  'tlPush-2N',
  'tlAppendOutbox-2',
  'tlRead-2',
  'tlBegin-2',
  'tlMerge-2',
  'tlTouch-2',
  'tlRemove-1',
]);

/** Bytes per tid in a packed inbox or outbox (lua/includes/ring.lua). */
export const TID_BYTES = 7;

/** Readers per tlPush call on a standalone server. */
export const PUSH_BATCH = 500;
/** How much longer an inbox's (or outbox's) tids live than its state (1 h): the state always expires first. */
export const INBOX_EXTRA_LIFE_MS = 3_600_000;
/** Tids per tlMerge call (bounds one script's arguments and run time). */
const MERGE_BATCH = 2_000;

/** tlRead's bounds: the exclusive upper bound ('' for none) and the exclusive lower bound. */
function bounds(r: TidRange): [string, number] {
  return [Number.isFinite(r.hi) ? String(r.hi) : '', r.lo];
}

/**
 * The tids of a packed string (7-byte big-endian unsigned integers, ascending), newest first.
 * @throws LuaScriptError when the length is not a multiple of 7 (not an inbox).
 */
export function decodeTids(packed: Buffer): number[] {
  if (packed.length % TID_BYTES !== 0) throw TIMELINE_SCRIPTS.unexpected('tlRead', packed);
  const out = new Array<number>(packed.length / TID_BYTES);
  for (let o = packed.length - TID_BYTES, i = 0; o >= 0; o -= TID_BYTES, i++)
    out[i] = packed[o]! * 2 ** 48 + packed.readUIntBE(o + 1, 6);
  return out;
}

function checkCount(r: TidRange): void {
  if (!Number.isInteger(r.count) || r.count < 1) throw new RangeError('count must be a positive integer');
}

/** Parses a tlRead reply `[state, floor, packed tids]` (Buffers); a missing state HASH reads as floor {@link MISSING_FLOOR}. */
function parseRead(reply: unknown): { state: string; floor: number; tids: number[] } {
  if (!Array.isArray(reply) || reply.length !== 3 || !reply.every((b) => Buffer.isBuffer(b)))
    throw TIMELINE_SCRIPTS.unexpected('tlRead', reply);
  const [state, floor, tids] = reply as [Buffer, Buffer, Buffer];
  return {
    state: state.toString(),
    floor: floor.length === 0 ? MISSING_FLOOR : Number(floor.toString()),
    tids: decodeTids(tids),
  };
}

/** Entries of one inbox key: `n` of a ring's header (3 bytes big-endian at offset 1), or a ZSET's members. */
async function inboxEntries(node: RedisClient, key: string): Promise<number> {
  if ((await redisCall(node.type(key))) === 'zset') return redisCall(node.zcard(key));
  const n = await redisCall(node.getrangeBuffer(key, 1, 3));
  return n.length === 3 ? n.readUIntBE(0, 3) : 0;
}

/** {@link TimelineStore} over Redis. Does not own the client. */
export class RedisTimelineStore implements TimelineStore {
  private readonly cluster: boolean;
  private readonly lua;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {
    this.cluster = redis instanceof Cluster;
    this.lua = TIMELINE_SCRIPTS.on(redis);
  }

  async appendToOutbox(authorId: string, tid: number, maxLen: number, ttlMs: number): Promise<void> {
    assertId(authorId, 'authorId');
    await this.lua.tlAppendOutbox(
      [this.keys.outbox(authorId), this.keys.outboxMeta(authorId)],
      [maxLen, tid, Math.ceil(ttlMs), INBOX_EXTRA_LIFE_MS, tid - 1],
    );
  }

  async pushToInboxes(readerIds: readonly string[], tid: number, maxLen: number): Promise<number> {
    readerIds.forEach((r) => assertId(r, 'readerId'));
    if (readerIds.length === 0) return 0;
    const keysOf = (r: string) => [this.keys.inbox(r), this.keys.inboxMeta(r)];
    const calls: Promise<unknown>[] = [];
    const per = this.cluster ? 1 : PUSH_BATCH;
    for (let i = 0; i < readerIds.length; i += per) {
      const keys = readerIds.slice(i, i + per).flatMap(keysOf);
      calls.push(this.lua.tlPush(keys, [tid, maxLen, INBOX_EXTRA_LIFE_MS]));
    }
    const counts = await Promise.all(calls);
    return counts.reduce<number>((a, b) => a + Number(b), 0);
  }

  async readInbox(readerId: string, range: TidRange): Promise<InboxSlice> {
    assertId(readerId, 'readerId');
    checkCount(range);
    const reply = await this.lua.tlRead.buffer(
      [this.keys.inbox(readerId), this.keys.inboxMeta(readerId)],
      [...bounds(range), range.count],
    );
    const { state, floor, tids } = parseRead(reply);
    if (state === '') return { state: 'missing', floor: 0, tids: [] };
    return { state: state as InboxState, floor, tids };
  }

  async readOutboxes(authorIds: readonly string[], range: TidRange): Promise<OutboxSlice[]> {
    authorIds.forEach((a) => assertId(a, 'authorId'));
    checkCount(range);
    const [hi, lo] = bounds(range);
    return Promise.all(
      authorIds.map(async (a) => {
        const { floor, tids } = parseRead(
          await this.lua.tlRead.buffer([this.keys.outbox(a), this.keys.outboxMeta(a)], [hi, lo, range.count]),
        );
        return { floor, tids };
      }),
    );
  }

  async beginRebuild(readerId: string, ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    await this.lua.tlBegin(this.inboxKeys(readerId), [Math.ceil(ttlMs), INBOX_EXTRA_LIFE_MS]);
  }

  async completeRebuild(
    readerId: string,
    tids: readonly number[],
    floor: number,
    maxLen: number,
    ttlMs: number,
  ): Promise<void> {
    assertId(readerId, 'readerId');
    await this.merge(readerId, tids, floor, maxLen, Math.ceil(ttlMs));
  }

  async mergeIntoInbox(readerId: string, tids: readonly number[], floor: number, maxLen: number): Promise<boolean> {
    assertId(readerId, 'readerId');
    return this.merge(readerId, tids, floor, maxLen, null);
  }

  async removeFromInbox(readerId: string, tids: readonly number[]): Promise<void> {
    assertId(readerId, 'readerId');
    if (tids.length > 0) await this.lua.tlRemove([this.keys.inbox(readerId)], tids.map(String));
  }

  async removeFromOutbox(authorId: string, tids: readonly number[]): Promise<void> {
    assertId(authorId, 'authorId');
    if (tids.length > 0) await this.lua.tlRemove([this.keys.outbox(authorId)], tids.map(String));
  }

  async dropInboxes(readerIds: readonly string[]): Promise<void> {
    readerIds.forEach((r) => assertId(r, 'readerId'));
    const per = this.cluster ? 1 : PUSH_BATCH; // one DEL per reader on a Cluster: its two keys share a slot
    const calls: Promise<number>[] = [];
    for (let i = 0; i < readerIds.length; i += per)
      calls.push(redisCall(this.redis.del(...readerIds.slice(i, i + per).flatMap((r) => this.inboxKeys(r)))));
    await Promise.all(calls);
  }

  /** One DEL of the user's four keys (one hash tag: one slot on a Cluster). */
  async forget(userId: string): Promise<void> {
    assertId(userId, 'userId');
    const k = this.keys;
    await redisCall(this.redis.del(k.inbox(userId), k.inboxMeta(userId), k.outbox(userId), k.outboxMeta(userId)));
  }

  async touch(readerId: string, ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    await this.lua.tlTouch(this.inboxKeys(readerId), [Math.ceil(ttlMs), INBOX_EXTRA_LIFE_MS]);
  }

  /**
   * Every inbox key under the prefix, found by SCAN on each master: its entries (the ring's header,
   * lua/includes/ring.lua; a ZSET of earlier versions not yet converted, its members), `MEMORY USAGE`
   * and whether it has a time to live.
   */
  async inboxStats(): Promise<InboxStats> {
    const nodes = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis];
    const r = { count: 0, entries: 0, bytes: 0, withoutTtl: 0 };
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, found] = await redisCall(node.scan(cursor, 'MATCH', this.keys.inboxPattern(), 'COUNT', 1000));
        cursor = next;
        for (const key of found) {
          r.count++;
          r.entries += await inboxEntries(node, key);
          r.bytes += Number((await redisCall(node.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'))) ?? 0);
          if ((await redisCall(node.pttl(key))) === -1) r.withoutTtl++;
        }
      } while (cursor !== '0');
    }
    return r;
  }

  /** Nothing to release: the client belongs to whoever created it. */
  async close(): Promise<void> {}

  private inboxKeys(readerId: string): string[] {
    return [this.keys.inbox(readerId), this.keys.inboxMeta(readerId)];
  }

  /**
   * tlMerge in batches; the last batch marks the inbox ready when `readyTtlMs` is given. Every batch
   * is atomic on its own; a push between two batches lands as it would anyway.
   */
  private async merge(
    readerId: string,
    tids: readonly number[],
    floor: number,
    maxLen: number,
    readyTtlMs: number | null,
  ): Promise<boolean> {
    const batches: (readonly number[])[] = [];
    for (let i = 0; i < tids.length; i += MERGE_BATCH) batches.push(tids.slice(i, i + MERGE_BATCH));
    if (batches.length === 0) batches.push([]);
    for (const [i, batch] of batches.entries()) {
      const last = i === batches.length - 1;
      const ready = last && readyTtlMs !== null;
      const ok = await this.lua.tlMerge(this.inboxKeys(readerId), [
        floor,
        maxLen,
        ready ? 'ready' : '',
        ready ? readyTtlMs : 0,
        INBOX_EXTRA_LIFE_MS,
        ...batch.map(String),
      ]);
      if (Number(ok) === 0) return false;
    }
    return true;
  }
}
