/**
 * A store reading for a Prometheus gauge that a scrape may ask for as often as it likes: read at most
 * once per `maxAgeMs`, and never waited on for longer than `waitMs` — a stalled store leaves the scrape
 * with the last value read (or none) instead of stalling `/metrics`. One read runs at a time; a read
 * that outlives the wait still lands and serves the next scrape.
 */

import { waitAtMost } from './wait.js';

/** Options of {@link CachedReading}. */
export interface CachedReadingOptions {
  /** How long a value is served before the next scrape reads again (ms). */
  maxAgeMs: number;
  /** Longest a scrape waits for a read in flight before answering with the last value (ms). */
  waitMs: number;
  /** Clock of the cache ages (ms); default `performance.now` (monotonic wall time, not the virtual clock). */
  now?: () => number;
  /** Told of a failed read (the last value is kept; log it at debug). */
  onError?: (err: unknown) => void;
}

/** Scrape-time gauge value cache: see the module doc. */
export class CachedReading<T> {
  private value: T | undefined;
  private readAt = -Infinity;
  private inFlight: Promise<void> | undefined;
  private readonly now: () => number;

  /** @param read the store read (its cost is paid at most once per `maxAgeMs`). */
  constructor(
    private readonly read: () => Promise<T>,
    private readonly opts: CachedReadingOptions,
  ) {
    this.now = opts.now ?? (() => performance.now());
  }

  /**
   * The value to report now: the cached one while fresh; else the result of a new read if it lands
   * within `waitMs`, or the last value read (undefined when no read ever succeeded). Never throws.
   */
  async get(): Promise<T | undefined> {
    if (this.now() - this.readAt < this.opts.maxAgeMs) return this.value;
    this.inFlight ??= this.read().then(
      (v) => {
        this.value = v;
        this.readAt = this.now();
        this.inFlight = undefined;
      },
      (err: unknown) => {
        this.readAt = this.now(); // a failing store is asked again after maxAgeMs, not on every scrape
        this.inFlight = undefined;
        this.opts.onError?.(err);
      },
    );
    await waitAtMost(this.inFlight, this.opts.waitMs);
    return this.value;
  }

  /** Forgets the age of the value, so the next {@link get} reads again (tests, and after a write that moves it). */
  invalidate(): void {
    this.readAt = -Infinity;
  }
}
