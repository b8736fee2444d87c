/**
 * Checkpoints of the Redis seen filters into PostgreSQL, and their restore into Redis after a loss
 * (PostgreSQL is the truth; the seen state must be too, within a bounded loss).
 *
 * What is written: not bitmaps but JOURNALS. Each mark script appends the packed hash pairs (8 bytes)
 * of the members it added — for a rolling day, those that set a new bit (lua/seenMark-4.lua); for a
 * reader, those added to its scalable filter, in order (lua/readerSeen-3+N.lua) — to a journal key beside
 * the filter. Every `FRESHET_SEEN_CHECKPOINT_S` a checkpoint takes every journal (found through each
 * shard's index of days with a journal, and the sets of readers whose journal was started:
 * seen-journals.ts), appends them as rows in one PostgreSQL transaction, then acknowledges them in
 * Redis. Each row goes to the subject of the filter's own geometry: a day's layout (layout.ts; the
 * day's layout is recorded beside its rows, `l:<day>`), a reader's signature (scalable-bloom.ts).
 * Now and then a subject's rows are compacted into a base bitmap: a past day once (the first
 * checkpoint that finds its rows after the day ended), and any subject whose rows outgrow its bitmap
 * and 4 KiB (seen-compaction.ts: the write cost stays ≤ 2× the journal bytes and a restore reads
 * ≤ ~2 bitmaps a subject). Measured in bench/seen-checkpoint.ts against rewriting bitmaps:
 * bench/README.md "Seen checkpoints".
 *
 * Concurrency (N processes, each with its own timer): a take moves a journal to a `taken` key under
 * a lease (lua/includes/take.lua); another process skips it while the lease lives and takes it over (with
 * what was journalled since) once it expires; an acknowledgement deletes `taken` only under its own
 * lease. So a journal is written at least once, sometimes twice — harmless: folding ORs bits, and a
 * reader's replay skips members present. A checkpoint that fails (PostgreSQL down) leaves its takes
 * under its lease; this process's next checkpoint (same token) takes them again at once.
 *
 * Restore (the promise: after a Redis loss a reader can be re-served only items first served after
 * the last checkpoint that completed before the restore):
 * - rolling: each shard has an epoch key, set by a restore. A check on a shard without one (Redis
 *   lost it) gets '?' from the script, before anything is answered; the adapter calls
 *   {@link SeenCheckpointer.restoreShard} — the window's days of that shard, each under its own
 *   layout, folded from PostgreSQL and OR-ed into Redis with fresh random versions (no cached copy of
 *   a day can match) — and checks again. A day key found missing while the epoch is there (evicted,
 *   deleted) is restored the same way when this process knows it is checkpointed
 *   ({@link SeenCheckpointer.hasCheckpoint}). On start, every shard of the layouts in use without an
 *   epoch is restored ({@link SeenCheckpointer.ensureShards}). A day whose layout key Redis lost is
 *   given back the layout its checkpoints were written under ({@link SeenCheckpointer.layoutsOfDays}).
 * - per reader: a reader with no state at all (new, expired, or lost) gets '?' from a guarded check or
 *   mark; {@link SeenCheckpointer.restoreReader} folds its checkpoint — under whichever geometry it
 *   was written — (or nothing) into a state, put only if the reader still has
 *   none, and the call runs again (reader-restore.ts).
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { Registry } from 'prom-client';
import { DAY_MS, dayStamp } from '../kernel/clock.js';
import type { Clock } from '../kernel/clock.js';
import type { Logger } from '../kernel/observability.js';
import type { RedisClient } from '../kernel/redis/client.js';
import { redisCall } from '../kernel/redis/errors.js';
import type { Keys } from '../kernel/redis/keys.js';
import { LuaScripts } from '../kernel/redis/lua.js';
import { dayStartMs, seenDayEnd, seenWindow } from './bloom.js';
import type { ReaderSeenSettings } from '../kernel/reader-seen-filter.js';
import { foldDay } from './seen-fold.js';
import type { PostgresSeenCheckpoints } from './postgres-seen-checkpoints.js';
import { SeenJournals, mapLimit, type ShardFamily } from './seen-journals.js';
import type { DayLayouts, LayoutRecords } from './day-layouts.js';
import { daySubject, shardKeys, type SeenLayout } from './layout.js';
import type { ShardRef } from './redis-seen-filter.js';
import { ReaderRestores } from './reader-restore.js';
import { compactDue } from './seen-compaction.js';
import { checkpointMetrics } from './seen-metrics.js';

/** The script of day restores (./lua/); a reader's is reader-restore.ts's, taking journals seen-journals.ts's. */
export const RESTORE_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), ['seenRestore-3']);

/** How long a take is reserved for the checkpoint that made it, ms (then another may take it over). */
export const SEEN_CHECKPOINT_LEASE_MS = 30_000;

/** Acknowledgements and epoch probes sent at once. */
const CONCURRENCY = 32;

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
  /** The days' layouts, shared with the adapter. */
  readonly dayLayouts: DayLayouts;
  /** Restores the window ending at `nowMs` of one shard (every day of its keys' tag) and sets its epoch. */
  restoreShard(ref: ShardRef, nowMs: number): Promise<void>;
  /** Restores some days of one shard of one layout (keys found missing). */
  restoreDays(ref: ShardRef, days: readonly string[], nowMs: number): Promise<void>;
  /** Whether this process knows a day subject (layout.ts `daySubject`) to be checkpointed. */
  hasCheckpoint(subject: string): boolean;
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
  /** The rolling days' layouts (the same instance as the rolling adapter's); its window is the filters'. */
  dayLayouts: DayLayouts;
  reader: ReaderSeenSettings;
  /** Time of expiries (a journal's time to live is added to it). */
  clock: Clock;
  log: Logger;
  registry?: Registry;
  /** Default {@link SEEN_CHECKPOINT_LEASE_MS}. */
  leaseMs?: number;
}

/** Checkpoints and restores of both Redis seen filters of one process. */
export class SeenCheckpointer implements RollingRestorer, ReaderRestorer, LayoutRecords {
  /** This process's token: its takes and leases (stable, so a failed checkpoint's next try retakes at once). */
  private readonly token = randomBytes(12).toString('hex');
  private readonly lua;
  private known = new Set<string>();
  private readonly journals: SeenJournals;
  private readonly restoring = new Map<string, Promise<void>>();
  private readonly leaseMs: number;
  private readonly days: number;
  /** Restores of per-reader filters (reader-restore.ts). */
  private readonly readers: ReaderRestores;
  private queue: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private readonly metrics;
  readonly dayLayouts: DayLayouts;

  constructor(private readonly d: SeenCheckpointerDeps) {
    this.lua = RESTORE_SCRIPTS.on(d.redis);
    this.leaseMs = d.leaseMs ?? SEEN_CHECKPOINT_LEASE_MS;
    this.dayLayouts = d.dayLayouts;
    this.days = d.dayLayouts.configured.geometry.days;
    d.dayLayouts.useRecords(this);
    this.journals = new SeenJournals(d.redis, d.keys, this.token, this.leaseMs, this.days * DAY_MS);
    this.metrics = d.registry ? checkpointMetrics(d.registry) : undefined;
    this.readers = new ReaderRestores(d.redis, d.keys, d.store, d.reader);
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

  /**
   * Restores every shard without an epoch (an empty Redis on start) of the layouts the window ending at
   * `nowMs` uses (learning them first) and of the configured layout.
   * @returns how many shards were restored.
   */
  async ensureShards(nowMs: number): Promise<number> {
    await this.refreshKnown(nowMs);
    await this.dayLayouts.forDays(windowStamps(nowMs, this.days), nowMs);
    let restored = 0;
    await mapLimit(this.shardRefs(), CONCURRENCY, async (ref) => {
      const epoch = shardKeys(this.d.keys, ref.layout, ref.shard).epoch();
      if ((await redisCall(this.d.redis.exists(epoch))) === 1) return;
      await this.restoreShard(ref, nowMs);
      restored++;
    });
    await this.refreshKnown(nowMs);
    return restored;
  }

  restoreShard(ref: ShardRef, nowMs: number): Promise<void> {
    const tag = shardKeys(this.d.keys, ref.layout, ref.shard).base;
    return this.once(`shard:${tag}`, async () => {
      await this.queue; // this process's checkpoint in flight lands first
      const stamps = windowStamps(nowMs, this.days);
      // every day of the window whose layout keeps its keys under this tag (same shard count)
      const reads = await this.dayLayouts.forDays(stamps, nowMs);
      const days: { day: string; layout: SeenLayout }[] = [];
      stamps.forEach((day, i) => {
        const layout = reads[i]!.write;
        if (layout && layout.shards === ref.layout.shards) days.push({ day, layout });
      });
      await this.restoreDayList(ref.shard, days, nowMs);
      const epoch = shardKeys(this.d.keys, ref.layout, ref.shard).epoch();
      await redisCall(this.d.redis.set(epoch, String(this.d.clock.now())));
      this.metrics?.restores.inc({ kind: 'shard' });
    });
  }

  restoreDays(ref: ShardRef, days: readonly string[], nowMs: number): Promise<void> {
    const tag = shardKeys(this.d.keys, ref.layout, ref.shard).base;
    return this.once(`days:${tag}:${days.join(',')}`, async () => {
      await this.restoreDayList(
        ref.shard,
        days.map((day) => ({ day, layout: ref.layout })),
        nowMs,
      );
      this.metrics?.restores.inc({ kind: 'day' }, days.length);
    });
  }

  hasCheckpoint(subject: string): boolean {
    return this.known.has(subject);
  }

  layoutsOfDays(days: readonly string[]): Promise<Map<string, string>> {
    return this.d.store.layoutsOfDays(days);
  }

  restoreReader(readerId: string, nowMs: number): Promise<void> {
    return this.once(`reader:${readerId}`, async () => {
      if (await this.readers.restore(readerId, nowMs)) this.metrics?.restores.inc({ kind: 'reader' });
    });
  }

  forgetReader(readerId: string): Promise<void> {
    return this.readers.forget(readerId);
  }

  /** Every shard of every layout in use: one per tag (layouts of one shard count share their tags). */
  private shardRefs(): ShardRef[] {
    const families = new Map<string, SeenLayout>();
    for (const l of this.dayLayouts.inUse()) families.set(`n${l.shards}`, l);
    return [...families.values()].flatMap((layout) =>
      Array.from({ length: layout.shards }, (_, shard) => ({ layout, shard })),
    );
  }

  /** The shard families the journals are taken from, each resolving its days' layouts. */
  private families(now: number): ShardFamily[] {
    const seen = new Set<string>();
    const out: ShardFamily[] = [];
    for (const layout of this.dayLayouts.inUse()) {
      const key = `n${layout.shards}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        layout,
        dayLayout: async (day) => {
          const l = this.dayLayouts.knownLayout(day) ?? (await this.dayLayouts.layoutOf(day, now));
          return l.shards === layout.shards ? l : null;
        },
      });
    }
    return out;
  }

  private async run(): Promise<CheckpointReport> {
    const started = performance.now();
    const now = this.d.clock.now();
    try {
      const { rows, acks, lastAcks, readerOf, dayLayouts } = await this.journals.takeAll(now, this.families(now));
      const days = [...dayLayouts].map(([day, l]) => ({
        day,
        layout: l.id,
        expiresAt: seenDayEnd(dayStartMs(day), this.days),
      }));
      const sigs = this.readers.unrecorded(readerOf.keys());
      const logBytes = await this.d.store.append(rows, { days, signatures: sigs });
      this.readers.recorded(sigs);
      await mapLimit(acks, CONCURRENCY, (ack) => ack());
      for (const ack of lastAcks) await ack();
      const past = this.windowSubjects(windowStamps(now, this.days).slice(1));
      const compacted = await compactDue(this.d.store, this.d.reader, { logBytes, readerOf, past, now });
      const expired = await this.d.store.expire(now);
      await this.refreshKnown(now);
      let bytes = 0;
      let readerBytes = 0;
      for (const r of rows) {
        bytes += r.pairs.length;
        if (r.subject.startsWith('r:')) readerBytes += r.pairs.length;
      }
      this.metrics?.done(true, bytes, now);
      const dayRows = rows.length - readerOf.size;
      return {
        days: dayRows,
        readers: readerOf.size,
        bytes,
        readerBytes,
        compacted,
        expired,
        ms: performance.now() - started,
      };
    } catch (err) {
      this.metrics?.done(false, 0, now);
      throw err;
    }
  }

  /** Restores `days` of `shard` (each under its layout) from their checkpoints (days with none are left as they are). */
  private async restoreDayList(
    shard: number,
    days: readonly { day: string; layout: SeenLayout }[],
    nowMs: number,
  ): Promise<void> {
    const subjects = days.map(({ day, layout }) => daySubject(layout, shard, day));
    const found = await this.d.store.load(subjects);
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < days.length; i++) {
      const { day, layout } = days[i]!;
      const c = found.get(subjects[i]!);
      const ttl = seenDayEnd(dayStartMs(day), this.days) - nowMs;
      if (!c || ttl <= 0) {
        this.known.delete(subjects[i]!); // nothing to restore: a check must not wait for it again
        continue;
      }
      this.known.add(subjects[i]!);
      const bitmap = foldDay(layout.geometry, c);
      const sk = shardKeys(this.d.keys, layout, shard);
      // sent together (pipelined on the connection); Redis runs them one by one
      writes.push(
        this.lua.seenRestore(
          [sk.day(day), sk.version(day), sk.restore(day)],
          [Buffer.from(bitmap.buffer, bitmap.byteOffset, bitmap.byteLength), Math.floor(ttl), randomInt(1, 2 ** 48)],
        ),
      );
    }
    await Promise.all(writes);
  }

  /** The subjects of `days` under the layouts known for them here. */
  private windowSubjects(days: readonly string[]): string[] {
    const out: string[] = [];
    for (const day of days) {
      const l = this.dayLayouts.knownLayout(day);
      if (l) for (let s = 0; s < l.shards; s++) out.push(daySubject(l, s, day));
    }
    return out;
  }

  /** Learns which days of every shard's window around `nowMs` are checkpointed (and forgets the others). */
  private async refreshKnown(nowMs: number): Promise<void> {
    this.known = await this.d.store.known(this.windowSubjects(windowStamps(nowMs, this.days)));
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

/** The days (`YYYYMMDD`) of the window of `days` ending at `nowMs`, today first. */
function windowStamps(nowMs: number, days: number): string[] {
  return seenWindow(nowMs, days).map(dayStamp);
}
