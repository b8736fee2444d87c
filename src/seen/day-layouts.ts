/**
 * Which layout (layout.ts) each day of the Redis rolling seen filter is written and read under, as
 * one process knows it: the day's layout key in Redis (`Keys.seenLayout`, set once by the first process
 * that touches the day, lua/seenLayout-1.lua), cached here for the day's life — a day's layout never
 * changes, so the cache is never stale.
 *
 * - A day no process has touched gets this process's layout — or, when Redis lost the day's key, the
 *   layout its PostgreSQL checkpoints name ({@link LayoutRecords}), so a restarted process never
 *   writes a day under a second layout.
 * - The legacy keys (written before 0.2.0) are read for a day while they may hold impressions: they
 *   exist (probed with EXISTS: a past day once, today again every {@link LEGACY_PROBE_MS}, since
 *   processes of the previous version may still write it during a rolling upgrade) or the day's
 *   legacy checkpoints do (after a Redis loss they are restored).
 * Cost: one `EVALSHA` (lua/seenLayout-N.lua) for the days a process meets for the first time —
 * with checkpoints, an `MGET` first, and a PostgreSQL lookup for the days Redis has no layout for —
 * i.e. once a day per process; nothing per check after that.
 */
import { DAY_MS, dayStamp } from '../kernel/clock.js';
import { FreshetError } from '../kernel/errors.js';
import type { RedisClient } from '../kernel/redis/client.js';
import { redisCall } from '../kernel/redis/errors.js';
import type { Keys } from '../kernel/redis/keys.js';
import { LuaScripts } from '../kernel/redis/lua.js';
import { dayStartMs, seenDayEnd } from './bloom.js';
import { parseLayout, type SeenLayout } from './layout.js';

/** The script (./lua/): record a day's layout unless one is recorded. */
export const LAYOUT_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), ['seenLayout-N']);

/** How often the legacy keys of today are probed again (ms of real time). */
export const LEGACY_PROBE_MS = 60_000;

/** What the PostgreSQL checkpoints know of days' layouts (seen-checkpointer.ts). */
export interface LayoutRecords {
  /** The layout ids recorded with the days' checkpoints (days without one are absent). One query. */
  layoutsOfDays(days: readonly string[]): Promise<Map<string, string>>;
  /** Whether the day has checkpoints of the legacy layout (this process's view, refreshed by each checkpoint). */
  legacyCheckpointed(day: string): boolean;
}

/** How one day is read and written. */
export interface DayReads {
  /**
   * The day's layout: marks go there, checks read it. Null only when the day has none and Redis
   * refused to record one (out of memory, a read-only replica): nothing was written to the day under a
   * layout, so a check has nothing to read there.
   */
  write: SeenLayout | null;
  /** Whether the legacy keys of the day are read too. */
  legacy: boolean;
}

/**
 * Whether Redis refused a write but serves reads (errors.ts's reasons: out of memory under
 * `noeviction`, a read-only replica, writes stopped after a failed save, too few replicas).
 */
function writeRefused(err: unknown): boolean {
  return err instanceof FreshetError && /\((OOM|READONLY|MISCONF|NOREPLICAS)\)$/.test(err.message);
}

/** One process's view of the days' layouts on Redis (see the module doc). */
export class DayLayouts {
  private readonly known = new Map<string, SeenLayout>();
  private readonly pending = new Map<string, Promise<SeenLayout | null>>();
  /** Per day: whether its legacy keys exist, and when that was probed (performance.now()). */
  private readonly legacyProbes = new Map<string, { present: boolean; at: number }>();
  private readonly lua;
  private records: LayoutRecords | undefined;

  /**
   * @param configured the layout this process gives a day nobody touched.
   * @param legacy the layout of the keys written before 0.2.0 (null: none to read).
   * @param days the window D (a day's layout key lives as long as the day's keys).
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    readonly configured: SeenLayout,
    readonly legacy: SeenLayout | null,
    private readonly days: number,
  ) {
    this.lua = LAYOUT_SCRIPTS.on(redis);
  }

  /** Lets the checkpoints answer for days whose layout key Redis lost (wiring sets it once). */
  useRecords(records: LayoutRecords): void {
    this.records = records;
  }

  /**
   * How each of `stamps` (`YYYYMMDD`, the days of a window ending at `nowMs`, or a late write's day)
   * is read and written. Days this process does not know yet cost one round trip together (two for
   * days nobody touched: they are recorded with this process's layout).
   * @throws FreshetError `STORE_UNAVAILABLE` when Redis fails.
   */
  async forDays(stamps: readonly string[], nowMs: number): Promise<DayReads[]> {
    const layouts = await this.layouts(stamps, nowMs, false);
    const legacy = this.legacy ? await this.legacyReads(stamps, nowMs) : stamps.map(() => false);
    return layouts.map((write, i) => ({ write, legacy: legacy[i]! }));
  }

  /**
   * The layout a day is written under (recording it when no process touched the day).
   * @throws FreshetError `STORE_UNAVAILABLE` when Redis fails.
   */
  async layoutOf(day: string, nowMs: number): Promise<SeenLayout> {
    return (await this.layouts([day], nowMs, true))[0]!;
  }

  /** The layout of a day this process knows, if it does (the checkpoints' journals name days). */
  knownLayout(day: string): SeenLayout | undefined {
    return this.known.get(day);
  }

  /**
   * Every layout the days of the window ending at `nowMs` are known here to use, the configured one,
   * and the legacy one: the shard sets the checkpoints visit.
   */
  inUse(): SeenLayout[] {
    const out = new Map<string, SeenLayout>([[this.configured.id, this.configured]]);
    for (const l of this.known.values()) out.set(l.id, l);
    if (this.legacy) out.set(this.legacy.id, this.legacy);
    return [...out.values()];
  }

  /** Forgets every day older than the window ending at `nowMs` (bounds the maps). */
  private evict(nowMs: number): void {
    const oldest = dayStamp(nowMs - (this.days + 1) * DAY_MS);
    for (const day of this.known.keys()) if (day < oldest) this.known.delete(day);
    for (const day of this.legacyProbes.keys()) if (day < oldest) this.legacyProbes.delete(day);
  }

  /**
   * The layouts of `stamps`, fetching or recording the unknown ones. When Redis refuses to record (a
   * write: out of memory, a read-only replica), a read (`record` false) gets what is recorded and null
   * for the days with nothing (not remembered: asked again next time); a write fails.
   */
  private async layouts(stamps: readonly string[], nowMs: number, record: true): Promise<SeenLayout[]>;
  private async layouts(stamps: readonly string[], nowMs: number, record: boolean): Promise<(SeenLayout | null)[]>;
  private async layouts(stamps: readonly string[], nowMs: number, record: boolean): Promise<(SeenLayout | null)[]> {
    const missing = stamps.filter((day) => !this.known.has(day) && !this.pending.has(day));
    if (missing.length > 0) {
      this.evict(nowMs);
      const batch = this.fetch(missing, nowMs).catch((err: unknown) => {
        if (!writeRefused(err)) throw err;
        return this.recorded(missing);
      });
      missing.forEach((day, i) => {
        const one = batch.then((all) => all[i]!);
        this.pending.set(day, one);
        void one.then(
          (l) => {
            if (l) this.known.set(day, l);
            this.pending.delete(day);
          },
          () => this.pending.delete(day),
        );
      });
    }
    const out = await Promise.all(stamps.map((day) => this.known.get(day) ?? this.pending.get(day)!));
    if (!record || out.every((l) => l !== null)) return out;
    // a write needs every day's layout recorded: the error of a refused record goes to the caller
    const unrecorded = stamps.filter((_, i) => out[i] === null);
    const fetched = await this.fetch(unrecorded, nowMs);
    unrecorded.forEach((day, i) => this.known.set(day, fetched[i]!));
    return stamps.map((day) => this.known.get(day)!);
  }

  /** What Redis has recorded for `days` (null: none), recording nothing. */
  private async recorded(days: readonly string[]): Promise<(SeenLayout | null)[]> {
    const held = await redisCall(this.redis.mget(...days.map((d) => this.keys.seenLayout(d))));
    return held.map((id) => (id === null ? null : this.parse(id)));
  }

  /**
   * The days' layouts, recording this process's for the days that have none: one script. With the
   * checkpoints, the layouts Redis has are read first, and a day without one gets its checkpoints'.
   */
  private async fetch(days: readonly string[], nowMs: number): Promise<SeenLayout[]> {
    const candidates = days.map(() => this.configured.id);
    if (this.records) {
      const held = await redisCall(this.redis.mget(...days.map((d) => this.keys.seenLayout(d))));
      const missing = days.filter((_, i) => held[i] === null);
      const recorded = missing.length > 0 ? await this.records.layoutsOfDays(missing) : new Map<string, string>();
      days.forEach((day, i) => {
        const id = held[i] ?? recorded.get(day);
        if (id && this.parseOrNull(id)) candidates[i] = id;
      });
    }
    const args = days.flatMap((day, i) => [
      candidates[i]!,
      Math.max(1, Math.floor(seenDayEnd(dayStartMs(day), this.days) - nowMs)),
    ]);
    const ids = (await this.lua.seenLayout(
      days.map((d) => this.keys.seenLayout(d)),
      args,
    )) as string[];
    return ids.map((id) => this.parse(String(id)));
  }

  /** A recorded id as a layout; an id this version cannot read (malformed) is read as the configured layout. */
  private parse(id: string): SeenLayout {
    return this.parseOrNull(id) ?? this.configured;
  }

  private parseOrNull(id: string): SeenLayout | null {
    if (id === this.configured.id) return this.configured;
    return parseLayout(id, this.configured.geometry.windowRate, this.days);
  }

  /** Per day, whether its legacy keys are read: present (probed) or checkpointed. */
  private async legacyReads(stamps: readonly string[], nowMs: number): Promise<boolean[]> {
    const today = dayStamp(nowMs);
    const now = performance.now();
    const stale = stamps.filter((day) => {
      const p = this.legacyProbes.get(day);
      if (!p) return true;
      return !p.present && day >= today && now - p.at >= LEGACY_PROBE_MS;
    });
    if (stale.length > 0) await Promise.all(stale.map((day) => this.probe(day)));
    return stamps.map((day) => this.legacyProbes.get(day)!.present || (this.records?.legacyCheckpointed(day) ?? false));
  }

  /** Whether any legacy shard key of the day exists (remembered with the time of the probe). */
  private async probe(day: string): Promise<void> {
    const legacy = this.legacy!;
    const found = await Promise.all(
      Array.from({ length: legacy.shards }, (_, s) =>
        redisCall(this.redis.exists(this.keys.legacySeenDays(legacy.shards, s).day(day))),
      ),
    );
    this.legacyProbes.set(day, { present: found.some((n) => n > 0), at: performance.now() });
  }
}
