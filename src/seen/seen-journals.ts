/**
 * Taking the seen-filter journals out of Redis for a checkpoint (seen-checkpointer.ts), under leases
 * (lua/includes/take.lua, lua/includes/ack.lua):
 * - rolling days: each shard's index (`keys.seenJournalDays`) lists the days with a journal; each is
 *   taken (`seenTake-3`) and, once its rows are committed, acknowledged (`seenAckDay-4`: the day
 *   leaves the index when nothing is left of its journal);
 * - readers: each shard's dirty set (`keys.readerSeenDirty`) is taken whole (`seenTake-3` on a SET),
 *   then each reader's journal with its last activity and time to live (`readerSeenTake-4`); each
 *   reader is acknowledged (`seenAck-2`), then, last, the dirty set.
 * A take another process holds under a live lease is skipped (that process writes it).
 */
import { isId } from '../kernel/ids.js';
import type { RedisClient } from '../kernel/redis/client.js';
import { redisCall } from '../kernel/redis/errors.js';
import type { Keys } from '../kernel/redis/keys.js';
import { LuaScripts } from '../kernel/redis/lua.js';
import type { CheckpointAppend } from './postgres-seen-checkpoints.js';

/** The scripts of taking and acknowledging journals (./lua/). */
export const JOURNAL_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), [
  'seenTake-3',
  'readerSeenTake-4',
  'seenAck-2',
  'seenAckDay-4',
]);

/** Readers taken from Redis at once (each take is one script on the reader's slot). */
const READER_TAKE_CONCURRENCY = 32;

/** What one pass took: rows to append, then acknowledgements to run once they are committed. */
export interface Takes {
  rows: CheckpointAppend[];
  /** Run after the commit, in any order. */
  acks: (() => Promise<unknown>)[];
  /** Run after {@link acks} (the dirty-reader sets: a crash before them retakes the readers). */
  lastAcks: (() => Promise<unknown>)[];
  /** Reader id of each reader subject taken. */
  readerOf: Map<string, string>;
}

/** Subject names of what is taken (seen-fold.ts). */
export interface SubjectNames {
  day(shard: number, day: string): string;
  reader(readerId: string): string;
}

/** Takes the journals of one process's checkpoints (its token names its leases). */
export class SeenJournals {
  private readonly lua;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly names: SubjectNames,
    private readonly token: string,
    private readonly leaseMs: number,
    /** Time to live of a day whose journal has none (never in practice: marks set one), ms. */
    private readonly fallbackDayTtlMs: number,
  ) {
    this.lua = JOURNAL_SCRIPTS.on(redis);
  }

  /** Every journal of every shard, with expiries from `now` (epoch ms) plus each key's time to live. */
  async takeAll(now: number): Promise<Takes> {
    const t: Takes = { rows: [], acks: [], lastAcks: [], readerOf: new Map() };
    for (let shard = 0; shard < this.keys.seenShards; shard++) {
      await this.takeDays(shard, now, t);
      await this.takeReaders(shard, now, t);
    }
    return t;
  }

  /** The shard's day journals (each day of its index). */
  private async takeDays(shard: number, now: number, t: Takes): Promise<void> {
    const index = this.keys.seenJournalDays(shard);
    for (const day of await redisCall(this.redis.smembers(index))) {
      if (!/^\d{8}$/.test(day)) continue;
      const journal = this.keys.seenDayJournal(shard, day);
      const taken = this.keys.seenDayJournalTaken(shard, day);
      const lease = this.keys.seenDayJournalLease(shard, day);
      const reply = (await this.lua.seenTake.buffer([journal, taken, lease], [this.token, this.leaseMs, 'str'])) as [
        number,
        Buffer,
        number,
      ];
      if (reply[0] === 2) continue; // another checkpoint holds it
      t.acks.push(() => this.lua.seenAckDay([taken, lease, journal, index], [this.token, day]));
      if (reply[0] !== 1) continue;
      const ttl = reply[2] > 0 ? reply[2] : this.fallbackDayTtlMs;
      t.rows.push({ subject: this.names.day(shard, day), expiresAt: now + ttl, atMs: 0, pairs: Buffer.from(reply[1]) });
    }
  }

  /** The journals of the shard's dirty readers. */
  private async takeReaders(shard: number, now: number, t: Takes): Promise<void> {
    const k = this.keys;
    const [dirty, dirtyTaken, dirtyLease] = [
      k.readerSeenDirty(shard),
      k.readerSeenDirtyTaken(shard),
      k.readerSeenDirtyLease(shard),
    ];
    const reply = (await this.lua.seenTake([dirty, dirtyTaken, dirtyLease], [this.token, this.leaseMs, 'set'])) as [
      number,
      string[],
      number,
    ];
    if (reply[0] !== 1) return;
    await mapLimit(reply[1].filter(isId), READER_TAKE_CONCURRENCY, async (readerId) => {
      const taken = k.readerSeenJournalTaken(readerId);
      const lease = k.readerSeenJournalLease(readerId);
      const r = (await this.lua.readerSeenTake.buffer(
        [k.readerSeenJournal(readerId), taken, lease, k.readerSeenMeta(readerId)],
        [this.token, this.leaseMs],
      )) as [number, Buffer, number, Buffer];
      if (r[0] !== 1) return;
      t.acks.push(() => this.lua.seenAck([taken, lease], [this.token]));
      const lastActive = r[3].toString();
      if (r[2] <= 0 || lastActive === '') return; // the filter is gone (forgotten or expired): nothing to keep
      const subject = this.names.reader(readerId);
      t.readerOf.set(subject, readerId);
      t.rows.push({ subject, expiresAt: now + r[2], atMs: Number(lastActive), pairs: Buffer.from(r[1]) });
    });
    t.lastAcks.push(() => this.lua.seenAck([dirtyTaken, dirtyLease], [this.token]));
  }
}

/** Runs `fn` over `items`, at most `limit` at a time. */
export async function mapLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
