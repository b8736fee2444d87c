/**
 * The injected clock (docs/architecture.md "Time"): scoring, day keys and windows read `now` from here,
 * never from `Date.now()` directly, so tests and replays of historical data run on virtual time.
 */

/** A source of the current time in epoch milliseconds. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that stays where it is set: for tests and replays. */
export class ManualClock implements Clock {
  constructor(private ms: number) {}
  now(): number {
    return this.ms;
  }
  /** Moves the clock to `ms` (epoch milliseconds). */
  set(ms: number): void {
    this.ms = ms;
  }
  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.ms += ms;
  }
}

export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** The UTC day of `ms` as `YYYYMMDD` (the day-key suffix of the for-you design, e.g. `20260306`). */
export function dayStamp(ms: number): string {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + 1;
  const day = d.getUTCDate();
  return `${y}${m < 10 ? '0' : ''}${m}${day < 10 ? '0' : ''}${day}`;
}

/** Epoch ms of the start (00:00 UTC) of the day containing `ms`. */
export function startOfDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}
