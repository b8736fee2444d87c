/**
 * Which layout (layout.ts) each day of the Redis rolling seen filter is written and read under, as
 * one process knows it: the day's layout key in Redis (`Keys.seenLayout`, set once by the first process
 * that touches the day, lua/seenLayout-N.lua), cached here for the day's life — a day's layout never
 * changes, so the cache is never stale.
 *
 * - A day no process has touched gets this process's layout — or, when Redis lost the day's key, the
 *   layout its PostgreSQL checkpoints name ({@link LayoutRecords}), so a restarted process never
 *   writes a day under a second layout.
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

/** What the PostgreSQL checkpoints know of days' layouts (seen-checkpointer.ts). */
export interface LayoutRecords {
  /** The layout ids recorded with the days' checkpoints (days without one are absent). One query. */
  layoutsOfDays(days: readonly string[]): Promise<Map<string, string>>;
}

/** How one day is read and written. */
export interface DayReads {
  /**
   * The day's layout: marks go there, checks read it. Null only when the day has none and Redis
   * refused to record one (out of memory, a read-only replica): nothing was written to the day under a
   * layout, so a check has nothing to read there.
   */
  write: SeenLayout | null;
}

/**
 * Whether Redis refused a write but serves reads (src/kernel/redis/errors.ts's reasons: out of memory under
 * `noeviction`, a read-only replica, writes stopped after a failed save, too few replicas).
 */
function writeRefused(err: unknown): boolean {
  return err instanceof FreshetError && /\((OOM|READONLY|MISCONF|NOREPLICAS)\)$/.test(err.message);
}

/** One process's view of the days' layouts on Redis (see the module doc). */
export class DayLayouts {
  private readonly known = new Map<string, SeenLayout>();
  private readonly pending = new Map<string, Promise<SeenLayout | null>>();
  private readonly lua;
  private records: LayoutRecords | undefined;

  /**
   * @param configured the layout this process gives a day nobody touched.
   * @param days the window D (a day's layout key lives as long as the day's keys).
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    readonly configured: SeenLayout,
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
    return layouts.map((write) => ({ write }));
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
   * Every layout the days of the window ending at `nowMs` are known here to use, and the configured one:
   * the shard sets the checkpoints visit.
   */
  inUse(): SeenLayout[] {
    const out = new Map<string, SeenLayout>([[this.configured.id, this.configured]]);
    for (const l of this.known.values()) out.set(l.id, l);
    return [...out.values()];
  }

  /** Forgets every day older than the window ending at `nowMs` (bounds the maps). */
  private evict(nowMs: number): void {
    const oldest = dayStamp(nowMs - (this.days + 1) * DAY_MS);
    for (const day of this.known.keys()) if (day < oldest) this.known.delete(day);
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
}
