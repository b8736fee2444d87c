/**
 * Checkpoints of the Redis seen filters into PostgreSQL, and their restore into Redis after a loss
 * (issue 10: "PostgreSQL is the truth; the seen state must be too, within a bounded loss").
 *
 * What is written: not bitmaps but JOURNALS. Each mark script appends the packed hash pairs (8 bytes)
 * of the members it added — for a rolling day, those that set a new bit (seenMark-4.lua); for a
 * reader, those added to its scalable filter, in order (readerSeen-3.lua) — to a journal key beside
 * the filter. Every `FRESHET_SEEN_CHECKPOINT_S` a checkpoint takes every journal (found through each
 * shard's index of days with a journal, and of readers whose journal was started), appends them as
 * rows in one PostgreSQL transaction, then acknowledges them in Redis. Now and then a subject's rows
 * are compacted into a base bitmap: a past day once (the first checkpoint that finds its rows after
 * the day ended), and any subject whose rows outgrow its bitmap (the write cost stays ≤ 2× the
 * journal bytes and a restore reads ≤ ~2 bitmaps a subject). Measured in bench/seen-checkpoint.ts
 * against rewriting bitmaps: bench/README.md "Seen checkpoints".
 *
 * Concurrency (N processes, each with its own timer): a take moves a journal to a `taken` key under
 * a lease (includes/take.lua); another process skips it while the lease lives and takes it over (with
 * what was journalled since) once it expires; an acknowledgement deletes `taken` only under its own
 * lease. So a journal is written at least once, sometimes twice — harmless: folding ORs bits, and a
 * reader's replay skips members present. A checkpoint that fails (PostgreSQL down) leaves its takes
 * under its lease; this process's next checkpoint (same token) takes them again at once.
 *
 * Restore (the promise: after a Redis loss a reader can be re-served only items first served after
 * the last checkpoint that completed before the restore):
 * - rolling: each shard has an epoch key, set by a restore. A check on a shard without one (Redis
 *   lost it) gets '?' from the script, before anything is answered; the adapter calls
 *   {@link SeenCheckpointer.restoreShard} — the window's days folded from PostgreSQL and OR-ed into
 *   Redis with fresh random versions (no cached copy of a day can match) — and checks again. A day
 *   key found missing while the epoch is there (evicted, deleted) is restored the same way when this
 *   process knows it is checkpointed ({@link SeenCheckpointer.hasCheckpoint}). On start, every shard
 *   without an epoch is restored ({@link SeenCheckpointer.ensureShards}).
 * - per reader: a reader with no state at all (new, expired, or lost) gets '?' from a guarded check or
 *   mark; {@link SeenCheckpointer.restoreReader} folds its checkpoint (or nothing) into a state, put
 *   only if the reader still has none, and the call runs again.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';
import { DAY_MS, dayStamp } from '../kernel/clock.js';
import type { Clock } from '../kernel/clock.js';
import type { Logger } from '../kernel/observability.js';
import type { RedisClient } from '../kernel/redis/client.js';
import { redisCall } from '../kernel/redis/errors.js';
import type { Keys } from '../kernel/redis/keys.js';
import { LuaScripts } from '../kernel/redis/lua.js';
import { seenDayEnd, seenWindow, type BloomGeometry } from './bloom.js';
import type { ReaderSeenSettings } from '../kernel/reader-seen-filter.js';
import { bitmapBytes, geometrySignature, scalableLevels } from './scalable-bloom.js';
import { daySubject, foldDay, foldDayBase, foldReader, foldReaderBase, readerSubject } from './seen-fold.js';
import type { PostgresSeenCheckpoints, SubjectBytes } from './postgres-seen-checkpoints.js';
import { SeenJournals, mapLimit } from './seen-journals.js';

/** The scripts of restores (./lua/); taking journals is seen-journals.ts's. */
export const RESTORE_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), [
  'seenRestore-3',
  'readerSeenRestore-2',
]);

/** How long a take is reserved for the checkpoint that made it, ms (then another may take it over). */
export const SEEN_CHECKPOINT_LEASE_MS = 30_000;

/** Acknowledgements sent at once after a commit. */
const ACK_CONCURRENCY = 32;

/** What one checkpoint did. */
export interface CheckpointReport {
  /** Day journals written. */
  days: number;
  /** Reader journals written. */
  readers: number;
  /** Bytes of hash pairs written (days and readers). */
  bytes: number;
  /** Of which, readers'. */
  readerBytes: number;
  /** Subjects compacted into their base. */
  compacted: number;
  /** Subjects expired (deleted). */
  expired: number;
  /** Duration, ms. */
  ms: number;
}

/** What the rolling Redis adapter asks of the checkpoints (redis-seen-filter.ts). */
export interface RollingRestorer {
  /** Restores the window ending at `nowMs` of one shard and sets its epoch. */
  restoreShard(shard: number, nowMs: number): Promise<void>;
  /** Restores some days of one shard (keys found missing). */
  restoreDays(shard: number, days: readonly string[], nowMs: number): Promise<void>;
  /** Whether this process knows the day of this shard to be checkpointed. */
  hasCheckpoint(shard: number, day: string): boolean;
}

/** What the per-reader Redis adapter asks of the checkpoints (redis-reader-seen-filter.ts). */
export interface ReaderRestorer {
  /** Puts the reader's checkpointed filter (or an empty state) into Redis unless it has a state. */
  restoreReader(readerId: string, nowMs: number): Promise<void>;
  /** Deletes the reader's checkpoints. */
  forgetReader(readerId: string): Promise<void>;
}

/** Dependencies of a {@link SeenCheckpointer}. */
export interface SeenCheckpointerDeps {
  redis: RedisClient;
  keys: Keys;
  store: PostgresSeenCheckpoints;
  /** The rolling filters' geometry per shard and day (its `days` is the window). */
  geometry: BloomGeometry;
  reader: ReaderSeenSettings;
  /** Time of expiries (a journal's time to live is added to it). */
  clock: Clock;
  log: Logger;
  registry?: Registry;
  /** Default {@link SEEN_CHECKPOINT_LEASE_MS}. */
  leaseMs?: number;
}

/** Checkpoints and restores of both Redis seen filters of one process. */
export class SeenCheckpointer implements RollingRestorer, ReaderRestorer {
  /** This process's token: its takes and leases (stable, so a failed checkpoint's next try retakes at once). */
  private readonly token = randomBytes(12).toString('hex');
  private readonly lua;
  private known = new Set<string>();
  private readonly journals: SeenJournals;
  private readonly restoring = new Map<string, Promise<void>>();
  private readonly leaseMs: number;
  private readonly shards: number;
  private readonly readerSig: string;
  private readonly readerBaseBytes: number;
  private queue: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private readonly metrics;

  constructor(private readonly d: SeenCheckpointerDeps) {
    this.lua = RESTORE_SCRIPTS.on(d.redis);
    this.leaseMs = d.leaseMs ?? SEEN_CHECKPOINT_LEASE_MS;
    this.shards = d.keys.seenShards;
    const names = {
      day: (shard: number, day: string) => this.daySubject(shard, day),
      reader: (id: string) => readerSubject(d.reader, id),
    };
    this.journals = new SeenJournals(d.redis, d.keys, names, this.token, this.leaseMs, d.geometry.days * DAY_MS);
    this.readerSig = geometrySignature(d.reader.initialCapacity, d.reader.errorRate);
    this.readerBaseBytes = bitmapBytes(scalableLevels(d.reader.initialCapacity, d.reader.errorRate), 1);
    this.metrics = d.registry ? checkpointMetrics(d.registry) : undefined;
  }

  /**
   * Takes every journal, appends it to PostgreSQL, acknowledges it, compacts and expires. Calls are
   * serialized (a call waits for the one running, then runs: a final checkpoint includes everything).
   * @throws FreshetError `STORE_UNAVAILABLE` when Redis or PostgreSQL fails (nothing is lost: the
   *   takes stay under this process's lease and the next checkpoint writes them).
   */
  checkpoint(): Promise<CheckpointReport> {
    const run = this.queue.then(() => this.run());
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Checkpoints every `intervalMs` (an unref'd timer; a failure is logged and retried at the next tick). */
  start(intervalMs: number): void {
    if (this.timer || this.closing) return;
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.checkpoint()
        .catch((err: unknown) => this.d.log.warn({ err }, 'seen-filter checkpoint failed (retried at the next one)'))
        .finally(() => (busy = false));
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes a final checkpoint (a failure is logged, not thrown). Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      clearInterval(this.timer);
      await this.checkpoint().catch((err: unknown) => this.d.log.warn({ err }, 'final seen-filter checkpoint failed'));
    })());
  }

  /** Restores every shard that has no epoch (an empty Redis on start), for the window ending at `nowMs`. */
  async ensureShards(nowMs: number): Promise<number> {
    let restored = 0;
    for (let shard = 0; shard < this.shards; shard++) {
      if ((await redisCall(this.d.redis.exists(this.d.keys.seenEpoch(shard)))) === 1) continue;
      await this.restoreShard(shard, nowMs);
      restored++;
    }
    await this.refreshKnown(nowMs);
    return restored;
  }

  restoreShard(shard: number, nowMs: number): Promise<void> {
    return this.once(`shard:${shard}`, async () => {
      await this.queue; // this process's checkpoint in flight lands first
      await this.restoreDayList(shard, seenWindow(nowMs, this.d.geometry.days).map(dayStamp), nowMs);
      await redisCall(this.d.redis.set(this.d.keys.seenEpoch(shard), String(this.d.clock.now())));
      this.metrics?.restores.inc({ kind: 'shard' });
    });
  }

  restoreDays(shard: number, days: readonly string[], nowMs: number): Promise<void> {
    return this.once(`days:${shard}:${days.join(',')}`, async () => {
      await this.restoreDayList(shard, days, nowMs);
      this.metrics?.restores.inc({ kind: 'day' }, days.length);
    });
  }

  hasCheckpoint(shard: number, day: string): boolean {
    return this.known.has(this.daySubject(shard, day));
  }

  restoreReader(readerId: string, nowMs: number): Promise<void> {
    return this.once(`reader:${readerId}`, async () => {
      const subject = readerSubject(this.d.reader, readerId);
      const c = (await this.d.store.load([subject])).get(subject);
      let saved = c && foldReader(this.d.reader, readerId, c);
      if (saved && nowMs - saved.lastActive >= this.d.reader.ttlMs) saved = undefined; // gone by now
      const { keys } = this.d;
      // nothing (live) checkpointed: an empty state, so the next calls need no restore
      await this.lua.readerSeenRestore(
        [keys.readerSeen(readerId), keys.readerSeenMeta(readerId)],
        [
          saved ? Buffer.from(saved.bitmap.buffer, saved.bitmap.byteOffset, saved.bitmap.byteLength) : '',
          Math.floor(saved ? saved.lastActive : nowMs),
          this.readerSig,
          saved ? saved.counts.join(',') : '0',
          Math.floor(this.d.reader.ttlMs),
        ],
      );
      if (saved) this.metrics?.restores.inc({ kind: 'reader' });
    });
  }

  async forgetReader(readerId: string): Promise<void> {
    await this.d.store.forget(readerSubject(this.d.reader, readerId));
  }

  /** Subject of a day of a shard (for tests and tools). */
  daySubject(shard: number, day: string): string {
    return daySubject(this.d.geometry, this.shards, shard, day);
  }

  private async run(): Promise<CheckpointReport> {
    const started = performance.now();
    const now = this.d.clock.now();
    try {
      const { rows, acks, lastAcks, readerOf } = await this.journals.takeAll(now);
      const logBytes = await this.d.store.append(rows);
      for (const r of rows) if (r.subject.startsWith('d:')) this.known.add(r.subject);
      await mapLimit(acks, ACK_CONCURRENCY, (ack) => ack());
      for (const ack of lastAcks) await ack();
      const compacted = await this.compact(logBytes, readerOf, now);
      const expired = await this.d.store.expire(now);
      await this.refreshKnown(now);
      let bytes = 0;
      let readerBytes = 0;
      for (const r of rows) {
        bytes += r.pairs.length;
        if (r.subject.startsWith('r:')) readerBytes += r.pairs.length;
      }
      this.metrics?.done(true, bytes, now);
      const days = rows.length - readerOf.size;
      return { days, readers: readerOf.size, bytes, readerBytes, compacted, expired, ms: performance.now() - started };
    } catch (err) {
      this.metrics?.done(false, 0, now);
      throw err;
    }
  }

  /**
   * Compacts: past days with rows (once each, normally at the first checkpoint after midnight), and
   * every subject whose rows now outgrow its bitmap (its base, or what a first base would take: a day's
   * bitmap, a reader's first sub-filter) — so a compaction rewrites a base at most once per base's
   * worth of journal, and the writes stay ≤ 2× the journal bytes.
   */
  private async compact(
    logBytes: Map<string, SubjectBytes>,
    readerOf: Map<string, string>,
    now: number,
  ): Promise<number> {
    const today = dayStamp(now);
    const dayBytes = Math.ceil(this.d.geometry.bits / 8);
    const due = new Set<string>();
    const pastDays: string[] = [];
    for (let shard = 0; shard < this.shards; shard++) {
      for (const ms of seenWindow(now, this.d.geometry.days).slice(1))
        pastDays.push(this.daySubject(shard, dayStamp(ms)));
    }
    for (const s of await this.d.store.withLog(pastDays)) due.add(s);
    for (const [subject, bytes] of logBytes) {
      const isDay = subject.startsWith('d:');
      if (isDay && subject.slice(-8) < today) due.add(subject);
      else if (bytes.log >= Math.max(bytes.base, isDay ? dayBytes : this.readerBaseBytes)) due.add(subject);
    }
    let compacted = 0;
    for (const subject of due) {
      const readerId = readerOf.get(subject);
      if (!subject.startsWith('d:') && readerId === undefined) continue;
      const folded = await this.d.store.compact(subject, (c) =>
        readerId === undefined ? foldDayBase(this.d.geometry, c) : foldReaderBase(this.d.reader, readerId, c),
      );
      if (folded > 0) compacted++;
    }
    return compacted;
  }

  /** Restores `days` of `shard` from their checkpoints (days with none are left as they are). */
  private async restoreDayList(shard: number, days: readonly string[], nowMs: number): Promise<void> {
    const { keys, geometry } = this.d;
    const subjects = days.map((day) => this.daySubject(shard, day));
    const found = await this.d.store.load(subjects);
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < days.length; i++) {
      const c = found.get(subjects[i]!);
      const day = days[i]!;
      const ttl = seenDayEnd(dayStartMs(day), geometry.days) - nowMs;
      if (!c || ttl <= 0) {
        this.known.delete(subjects[i]!); // nothing to restore: a check must not wait for it again
        continue;
      }
      this.known.add(subjects[i]!);
      const bitmap = foldDay(geometry, c);
      // sent together (pipelined on the connection); Redis runs them one by one
      writes.push(
        this.lua.seenRestore(
          [keys.seenShardDay(shard, day), keys.seenShardDayVersion(shard, day), keys.seenDayRestore(shard, day)],
          [Buffer.from(bitmap.buffer, bitmap.byteOffset, bitmap.byteLength), Math.floor(ttl), randomInt(1, 2 ** 48)],
        ),
      );
    }
    await Promise.all(writes);
  }

  /** Learns which days of every shard's window around `nowMs` are checkpointed (and forgets the others). */
  private async refreshKnown(nowMs: number): Promise<void> {
    const subjects: string[] = [];
    for (let shard = 0; shard < this.shards; shard++) {
      for (const ms of seenWindow(nowMs, this.d.geometry.days)) subjects.push(this.daySubject(shard, dayStamp(ms)));
    }
    this.known = await this.d.store.known(subjects); // days that left the window leave the set
  }

  /** Runs `task` once per key at a time: concurrent callers share the run in progress. */
  private once(key: string, task: () => Promise<void>): Promise<void> {
    const running = this.restoring.get(key);
    if (running) return running;
    const run = task().finally(() => this.restoring.delete(key));
    this.restoring.set(key, run);
    return run;
  }
}

/** Start (epoch ms) of a `YYYYMMDD` UTC day. */
function dayStartMs(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)));
}

/** The checkpoint metrics (docs/operations.md "Metrics"). */
function checkpointMetrics(registry: Registry) {
  const registers = [registry];
  const runs = new Counter({
    name: 'freshet_seen_checkpoints_total',
    help: 'Checkpoints of the Redis seen filters to PostgreSQL',
    labelNames: ['result'],
    registers,
  });
  const bytes = new Counter({
    name: 'freshet_seen_checkpoint_bytes_total',
    help: 'Bytes of journalled hash pairs written by seen-filter checkpoints',
    registers,
  });
  const last = new Gauge({
    name: 'freshet_seen_last_checkpoint_timestamp_seconds',
    help: 'Time of the last complete seen-filter checkpoint (epoch s)',
    registers,
  });
  const restores = new Counter({
    name: 'freshet_seen_restores_total',
    help: 'Seen filters restored into Redis from their checkpoints, by kind (shard, day, reader)',
    labelNames: ['kind'],
    registers,
  });
  return {
    restores,
    done(ok: boolean, n: number, atMs: number) {
      runs.inc({ result: ok ? 'ok' : 'failed' });
      if (n > 0) bytes.inc(n);
      if (ok) last.set(Math.floor(atMs / 1000));
    },
  };
}
