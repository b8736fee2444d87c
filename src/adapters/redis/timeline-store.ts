/**
 * The following timeline's inboxes and outboxes on Redis (note 4): `tl:in:{u:<reader>}` and
 * `tl:out:{u:<author>}` are ZSETs of tids (member = score = tid, exact below 2^53), each with a state
 * HASH (`…:meta:{u:<id>}`: `state`, `floor`). Every multi-command step is one Lua script
 * (scripts/timeline.ts), one round trip.
 *
 * Fan-out: on a standalone server `pushToInboxes` sends chunks of {@link PUSH_BATCH} readers per
 * EVALSHA (keys of many slots: fine without Cluster); on a Cluster it sends one EVALSHA per reader
 * (each with its own hash tag), all at once, which ioredis pipelines per node.
 *
 * Time to live (wall clock): the state lives `ttlMs` after the last read or rebuild and the inbox
 * {@link INBOX_EXTRA_LIFE_MS} longer, so an inbox is never seen without its state.
 */
import { Cluster } from 'ioredis';
import { assertId } from '../../domain/ids.js';
import type { InboxSlice, InboxState, OutboxSlice, TidRange, TimelineStore } from '../../ports/timeline-store.js';
import { runScript, type RedisClient } from './client.js';
import type { Keys } from './keys.js';
import { tlAppendOutbox, tlBegin, tlMerge, tlPush, tlRead, tlTouch } from './scripts/timeline.js';

/** Readers per tlPush call on a standalone server. */
export const PUSH_BATCH = 500;
/** How much longer an inbox lives than its state (1 h): the state always expires first. */
export const INBOX_EXTRA_LIFE_MS = 3_600_000;
/** Tids per tlMerge call (Lua unpack stays far below its C stack limit). */
const MERGE_BATCH = 2_000;

function bounds(r: TidRange): [string, string] {
  return [Number.isFinite(r.hi) ? `(${r.hi}` : '+inf', `(${r.lo}`];
}

function checkCount(r: TidRange): void {
  if (!Number.isInteger(r.count) || r.count < 1) throw new RangeError('count must be a positive integer');
}

/** Parses a tlRead reply `[state, floor, ...tids]`. */
function parseRead(reply: unknown): { state: string; floor: number; tids: number[] } {
  const [state, floor, ...tids] = reply as [string, string, ...string[]];
  return { state, floor: Number(floor), tids: tids.map(Number) };
}

/** {@link TimelineStore} over Redis. Does not own the client. */
export class RedisTimelineStore implements TimelineStore {
  private readonly cluster: boolean;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {
    this.cluster = redis instanceof Cluster;
  }

  async appendToOutbox(authorId: string, tid: number, maxLen: number): Promise<void> {
    assertId(authorId, 'authorId');
    await runScript(this.redis, tlAppendOutbox, [this.keys.outbox(authorId), this.keys.outboxMeta(authorId)], [maxLen, tid]);
  }

  async pushToInboxes(readerIds: readonly string[], tid: number, maxLen: number): Promise<number> {
    readerIds.forEach((r) => assertId(r, 'readerId'));
    if (readerIds.length === 0) return 0;
    const keysOf = (r: string) => [this.keys.inbox(r), this.keys.inboxMeta(r)];
    const calls: Promise<unknown>[] = [];
    const per = this.cluster ? 1 : PUSH_BATCH;
    for (let i = 0; i < readerIds.length; i += per) {
      const keys = readerIds.slice(i, i + per).flatMap(keysOf);
      calls.push(runScript(this.redis, tlPush, keys, [tid, maxLen]));
    }
    const counts = await Promise.all(calls);
    return counts.reduce<number>((a, b) => a + Number(b), 0);
  }

  async readInbox(readerId: string, range: TidRange): Promise<InboxSlice> {
    assertId(readerId, 'readerId');
    checkCount(range);
    const reply = await runScript(this.redis, tlRead, [this.keys.inbox(readerId), this.keys.inboxMeta(readerId)], [...bounds(range), range.count]);
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
        const { floor, tids } = parseRead(await runScript(this.redis, tlRead, [this.keys.outbox(a), this.keys.outboxMeta(a)], [hi, lo, range.count]));
        return { floor, tids };
      }),
    );
  }

  async beginRebuild(readerId: string, ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    await runScript(this.redis, tlBegin, this.inboxKeys(readerId), [Math.ceil(ttlMs), INBOX_EXTRA_LIFE_MS]);
  }

  async completeRebuild(readerId: string, tids: readonly number[], floor: number, maxLen: number, ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    await this.merge(readerId, tids, floor, maxLen, Math.ceil(ttlMs));
  }

  async mergeIntoInbox(readerId: string, tids: readonly number[], floor: number, maxLen: number): Promise<boolean> {
    assertId(readerId, 'readerId');
    return this.merge(readerId, tids, floor, maxLen, null);
  }

  async removeFromInbox(readerId: string, tids: readonly number[]): Promise<void> {
    assertId(readerId, 'readerId');
    if (tids.length > 0) await this.redis.zrem(this.keys.inbox(readerId), ...tids.map(String));
  }

  async removeFromOutbox(authorId: string, tids: readonly number[]): Promise<void> {
    assertId(authorId, 'authorId');
    if (tids.length > 0) await this.redis.zrem(this.keys.outbox(authorId), ...tids.map(String));
  }

  async touch(readerId: string, ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    await runScript(this.redis, tlTouch, this.inboxKeys(readerId), [Math.ceil(ttlMs), INBOX_EXTRA_LIFE_MS]);
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
  private async merge(readerId: string, tids: readonly number[], floor: number, maxLen: number, readyTtlMs: number | null): Promise<boolean> {
    const batches: (readonly number[])[] = [];
    for (let i = 0; i < tids.length; i += MERGE_BATCH) batches.push(tids.slice(i, i + MERGE_BATCH));
    if (batches.length === 0) batches.push([]);
    for (const [i, batch] of batches.entries()) {
      const last = i === batches.length - 1;
      const ready = last && readyTtlMs !== null;
      const ok = await runScript(this.redis, tlMerge, this.inboxKeys(readerId), [
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
