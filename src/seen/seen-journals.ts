/**
 * Taking the seen-filter journals out of Redis for a checkpoint (seen-checkpointer.ts), under leases
 * (lua/includes/take.lua, lua/includes/ack.lua):
 * - rolling days: each shard's index (`SeenShardKeys.journalDays`) lists the days with a journal; each
 *   is taken (`seenTake-3`) and, once its rows are committed, acknowledged (`seenAckDay-4`: the day
 *   leaves the index when nothing is left of its journal). A day's rows go to the subject of the day's
 *   layout (layout.ts), which the caller resolves;
 * - readers: each dirty set (`keys.readerSeenDirty`: the 16 sets) is
 *   taken whole (`seenTake-3` on a SET), then each reader's journal with its last activity, time to
 *   live and geometry signature (`readerSeenTake-4`: its rows go to the subject of that geometry);
 *   each reader is acknowledged (`seenAck-2`), then, last, the dirty set.
 * A take another process holds under a live lease is skipped (that process writes it).
 */
import { isId } from '../kernel/ids.js';
import type { RedisClient } from '../kernel/redis/client.js';
import { redisCall } from '../kernel/redis/errors.js';
import { READER_DIRTY_SHARDS, type Keys } from '../kernel/redis/keys.js';
import { LuaScripts } from '../kernel/redis/lua.js';
import type { CheckpointAppend } from './postgres-seen-checkpoints.js';
import { daySubject, shardKeys, type SeenLayout } from './layout.js';
import { readerSubject } from './seen-fold.js';

/** The scripts of taking and acknowledging journals (./lua/). */
export const JOURNAL_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), [
  'seenTake-3',
  'readerSeenTake-4',
  'seenAck-2',
  'seenAckDay-4',
]);

/** Shards and readers taken from Redis at once (each take is one script on one slot). */
const TAKE_CONCURRENCY = 32;

/** What one pass took: rows to append, then acknowledgements to run once they are committed. */
export interface Takes {
  rows: CheckpointAppend[];
  /** Run after the commit, in any order. */
  acks: (() => Promise<unknown>)[];
  /** Run after {@link acks} (the dirty-reader sets: a crash before them retakes the readers). */
  lastAcks: (() => Promise<unknown>)[];
  /** Reader id of each reader subject taken. */
  readerOf: Map<string, string>;
  /** The layout of each day taken (recorded beside its rows: `l:<day>`). */
  dayLayouts: Map<string, SeenLayout>;
}

/** A set of shards whose keys share their tags: every shard of a layout's shard count. */
export interface ShardFamily {
  /** A layout of the family (its shard count names the tags). */
  layout: SeenLayout;
  /** The layout of a day journalled in this family, or null when the day belongs to another (skipped). */
  dayLayout(day: string): Promise<SeenLayout | null>;
}

/** Takes the journals of one process's checkpoints (its token names its leases). */
export class SeenJournals {
  private readonly lua;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly token: string,
    private readonly leaseMs: number,
    /** Time to live of a day whose journal has none (never in practice: marks set one), ms. */
    private readonly fallbackDayTtlMs: number,
  ) {
    this.lua = JOURNAL_SCRIPTS.on(redis);
  }

  /** Every journal of every shard of `families`, with expiries from `now` (epoch ms) plus each key's time to live. */
  async takeAll(now: number, families: readonly ShardFamily[]): Promise<Takes> {
    const t: Takes = { rows: [], acks: [], lastAcks: [], readerOf: new Map(), dayLayouts: new Map() };
    const shards = families.flatMap((f) => Array.from({ length: f.layout.shards }, (_, s) => ({ f, s })));
    await mapLimit(shards, TAKE_CONCURRENCY, ({ f, s }) => this.takeDays(f, s, now, t));
    for (let s = 0; s < READER_DIRTY_SHARDS; s++) await this.takeReaders(s, now, t);
    return t;
  }

  /** The day journals of one shard (each day of its index). */
  private async takeDays(f: ShardFamily, shard: number, now: number, t: Takes): Promise<void> {
    const sk = shardKeys(this.keys, f.layout, shard);
    const index = sk.journalDays();
    for (const day of await redisCall(this.redis.smembers(index))) {
      if (!/^\d{8}$/.test(day)) continue;
      const layout = await f.dayLayout(day);
      if (!layout) continue;
      const [journal, taken, lease] = [sk.journal(day), sk.journalTaken(day), sk.journalLease(day)];
      const reply = (await this.lua.seenTake.buffer([journal, taken, lease], [this.token, this.leaseMs, 'str'])) as [
        number,
        Buffer,
        number,
      ];
      if (reply[0] === 2) continue; // another checkpoint holds it
      t.acks.push(() => this.lua.seenAckDay([taken, lease, journal, index], [this.token, day]));
      if (reply[0] !== 1) continue;
      const ttl = reply[2] > 0 ? reply[2] : this.fallbackDayTtlMs;
      t.dayLayouts.set(day, layout);
      const subject = daySubject(layout, shard, day);
      t.rows.push({ subject, expiresAt: now + ttl, atMs: 0, pairs: Buffer.from(reply[1]) });
    }
  }

  /** The journals of one dirty set's readers. */
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
    await mapLimit(reply[1].filter(isId), TAKE_CONCURRENCY, async (readerId) => {
      const taken = k.readerSeenJournalTaken(readerId);
      const lease = k.readerSeenJournalLease(readerId);
      const r = (await this.lua.readerSeenTake.buffer(
        [k.readerSeenJournal(readerId), taken, lease, k.readerSeenMeta(readerId)],
        [this.token, this.leaseMs],
      )) as [number, Buffer, number, Buffer, Buffer];
      if (r[0] !== 1) return;
      t.acks.push(() => this.lua.seenAck([taken, lease], [this.token]));
      const lastActive = r[3].toString();
      const signature = r[4].toString();
      // the filter is gone (forgotten or expired): nothing to keep
      if (r[2] <= 0 || lastActive === '' || signature === '') return;
      const subject = readerSubject(signature, readerId);
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
