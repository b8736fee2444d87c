/**
 * StreamHub: the realtime side of the following timeline — `GET /v1/feeds/following/stream` (Server-
 * Sent Events). Each connection is a {@link StreamSession} holding one cursor, the last timeline id it
 * sent; the hub wakes every session when a {@link TimelineSignal} says a fan-out finished (the
 * visibility watermark may have moved), and each session then reads its reader's timeline above its
 * cursor — the very read of `GET /v1/feeds/following` (`FollowingTimeline.page`), so the same
 * visibility and exclusion rules apply (followed authors only, blocked and deleted left out) — and
 * writes the new entries oldest first, each as `id: <timeline id>`, `event: item`.
 *
 * Why no gap: the timeline serves only tids below the watermark, and every tid below it is final; a
 * session always reads everything in (cursor, watermark), and the cursor only moves past what it wrote.
 * `Last-Event-ID` on a reconnect is that cursor. A lost signal (pub/sub is at-most-once) only delays
 * delivery until the next signal or the session's resync, which runs with every heartbeat.
 *
 * Bounds: connections per reader and per process (`TOO_MANY_STREAMS`, 429 / 42902); a replay of more
 * than `replayMax` entries is not sent — a `reset` event moves the cursor to the newest entry and the
 * client reloads by paging; nothing is queued per session beyond one page: a session writes only while
 * its socket drains, and a socket that does not drain within `drainTimeoutMs` is dropped.
 */
import { fail } from '../kernel/errors.js';
import type { Logger } from '../kernel/observability.js';
import { tidText } from './domain.js';
import { timelineItemJson } from './schemas.js';
import type { FollowingTimeline } from './service.js';
import type { TimelineIndex, TimelineItem } from './timeline-index.js';
import type { TimelineSignal } from './timeline-signal.js';
import type { TimelineMetrics } from './timeline-metrics.js';

/** Limits and timings of the stream (`FRESHET_STREAM_*`, src/compose/config.ts); durations in ms. */
export interface StreamSettings {
  /** Open streams per process (`FRESHET_STREAM_MAX_CONNECTIONS`, default 1000). */
  maxConnections: number;
  /** Open streams per reader in one process (`FRESHET_STREAM_MAX_PER_READER`, default 4). */
  maxPerReader: number;
  /** A comment line is written this often; each also resyncs the session (`FRESHET_STREAM_HEARTBEAT_S`, 15 s). */
  heartbeatMs: number;
  /** A socket that does not drain for this long is dropped (`FRESHET_STREAM_DRAIN_TIMEOUT_S`, 10 s). */
  drainTimeoutMs: number;
  /** Most entries one catch-up sends before a `reset` (`FRESHET_STREAM_REPLAY_MAX`, 1000). */
  replayMax: number;
}

/** Where a session writes: the response socket, seen as a Node writable. */
export interface SseSink {
  /** Writes; false when the socket's buffer is over its high-water mark (wait for `drain`). */
  write(chunk: string): boolean;
  /** True while a write returned false and `drain` has not come. */
  readonly writableNeedDrain: boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  end(): unknown;
  destroy(): unknown;
  /** True once the socket is gone (a `close` that came before the session listened). */
  readonly destroyed?: boolean;
}

/** The HTTP response a stream takes over (Node's `ServerResponse`): the sink, its socket and its head. */
export interface StreamResponse extends SseSink {
  readonly socket: { readonly destroyed: boolean } | null;
  writeHead(status: number, headers: Record<string, string>): unknown;
}

/** Whether a response's socket closed while its request was checked ({@link watchDrop}). */
export interface DropWatch {
  /** True once the socket's `close` came. */
  readonly gone: boolean;
  /** Removes the listener (the stream session attaches its own). */
  stop(): void;
}

/**
 * Watches the response's socket from the call on: `gone` turns true on its `close`. Start it before
 * the request's first await: a client that drops the socket meanwhile is then known.
 */
export function watchDrop(res: Pick<SseSink, 'once' | 'off'>): DropWatch {
  const state = {
    gone: false,
    stop: () => {
      res.off('close', onClose);
    },
  };
  const onClose = () => {
    state.gone = true;
  };
  res.once('close', onClose);
  return state;
}

/** Why a session ended. */
export type StreamEnd = 'client' | 'slow' | 'shutdown';

/** Entries per timeline read of a catch-up. */
const PAGE = 100;

/** One SSE frame of an entry: `id`, `event: item`, `data: {timeline_id, item}`. */
export function itemFrame(e: TimelineItem): string {
  const tid = tidText(e.tid);
  return `id: ${tid}\nevent: item\ndata: ${JSON.stringify({ timeline_id: tid, item: timelineItemJson(e) })}\n\n`;
}

/** One connected reader (see the module doc). */
export class StreamSession {
  private running = false;
  private dirty = false;
  private closed = false;
  private stalledSince: number | null = null;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly hub: StreamHub,
    readonly readerId: string,
    /** The last timeline id sent (or the client's `since_id` / `Last-Event-ID`). */
    public cursor: number,
    private readonly sink: SseSink,
    private readonly now: () => number,
  ) {
    this.timer = setInterval(() => this.heartbeat(), hub.settings.heartbeatMs);
    sink.once('close', () => this.close('client'));
  }

  /** Asks for a catch-up; runs at most one at a time (a wake during one runs another after it). */
  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.running = true;
    void this.pump();
  }

  /**
   * Writes one event frame that is not a timeline entry (a notification, a marker): no `id:` line, so the
   * stream's resume cursor is untouched. A socket over its buffer drops the frame (the client reads the
   * state on its next page; the heartbeat judges a stalled socket).
   */
  announce(event: string, data: unknown): void {
    if (this.closed || this.sink.writableNeedDrain) return;
    this.sink.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends the session (idempotent): stops the timer, leaves the hub, ends or drops the socket. */
  close(why: StreamEnd): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.hub.leave(this, why);
    if (why === 'slow') this.sink.destroy();
    else this.sink.end();
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.dirty = false;
        await this.catchUp();
      } while (this.dirty && !this.closed);
    } catch (err) {
      // a store failure: the next signal or heartbeat tries again from the same cursor
      this.hub.log.warn(
        { err, readerId: this.readerId },
        'stream catch-up failed; retrying at the next signal or heartbeat',
      );
    } finally {
      this.running = false;
    }
  }

  /** Reads every entry above the cursor (newest first, paged) and writes them oldest first. */
  private async catchUp(): Promise<void> {
    const pages: TimelineItem[][] = [];
    let count = 0;
    let maxId: number | undefined;
    for (;;) {
      const page = await this.hub.timeline.page(
        this.readerId,
        { limit: PAGE, sinceId: this.cursor, ...(maxId !== undefined ? { maxId } : {}) },
        this.now(),
      );
      if (this.closed) return;
      pages.push(page.items);
      count += page.items.length;
      if (count > this.hub.settings.replayMax) return this.reset(pages[0]![0]!.tid);
      if (page.nextMaxId === null || page.items.length === 0) break;
      maxId = page.nextMaxId;
    }
    const fresh = pages.flat().reverse();
    for (const e of fresh) {
      if (this.closed) return;
      const ok = this.sink.write(itemFrame(e));
      this.cursor = e.tid;
      if (!ok && !(await this.drained())) return this.close('slow');
    }
  }

  /** Too much to replay: moves the cursor to `newest` and says so; the client reloads by paging. */
  private async reset(newest: number): Promise<void> {
    const tid = tidText(newest);
    this.cursor = newest;
    if (
      !this.sink.write(`id: ${tid}\nevent: reset\ndata: ${JSON.stringify({ timeline_id: tid })}\n\n`) &&
      !(await this.drained())
    )
      this.close('slow');
  }

  /** Waits for `drain`; false when it does not come within the drain timeout or the socket closes. */
  private drained(): Promise<boolean> {
    if (!this.sink.writableNeedDrain) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.sink.off('drain', onDrain);
        this.sink.off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => done(false), this.hub.settings.drainTimeoutMs);
      this.sink.once('drain', onDrain);
      this.sink.once('close', onClose);
    });
  }

  /** Heartbeat: drops a socket stalled past the drain timeout, else writes a comment and resyncs. */
  private heartbeat(): void {
    if (this.sink.writableNeedDrain) {
      const now = Date.now(); // socket timing: wall clock, not the (possibly virtual) feed clock
      this.stalledSince ??= now;
      if (now - this.stalledSince >= this.hub.settings.drainTimeoutMs) this.close('slow');
      return;
    }
    this.stalledSince = null;
    this.sink.write(': heartbeat\n\n');
    this.wake();
  }
}

/** The sessions of one process, their limits, and the signal that wakes them. */
export class StreamHub {
  private readonly byReader = new Map<string, Set<StreamSession>>();
  private total = 0;
  private unsubscribe: (() => void) | null = null;
  private wakeQueued = false;
  /** Sessions ended, by why (tests, logs). */
  readonly ended: Record<StreamEnd, number> = { client: 0, slow: 0, shutdown: 0 };

  constructor(
    readonly timeline: FollowingTimeline,
    private readonly index: Pick<TimelineIndex, 'watermark'>,
    private readonly signal: TimelineSignal,
    readonly settings: StreamSettings,
    readonly log: Logger,
    private readonly metrics: Pick<TimelineMetrics, 'streams' | 'streamEnded'>,
  ) {}

  /** Open streams in this process. */
  get size(): number {
    return this.total;
  }

  /** Open streams of one reader in this process. */
  openFor(readerId: string): number {
    return this.byReader.get(readerId)?.size ?? 0;
  }

  /**
   * Sends an event that is not a timeline entry to every open stream of `readerId` in this process
   * (`event: notifications` when its notifications or marker changed, …; docs/api.md "The stream").
   */
  announce(readerId: string, event: string, data: unknown): void {
    for (const s of this.byReader.get(readerId) ?? []) s.announce(event, data);
  }

  /** The cursor of a stream opened without `since_id`: the newest visible tid (only later entries are sent). */
  async currentTid(): Promise<number> {
    return (await this.index.watermark()) - 1;
  }

  /**
   * Checks the limits for one more stream of `readerId` (call right before {@link open}, with no await between).
   * @throws FreshetError TOO_MANY_STREAMS.
   */
  admit(readerId: string): void {
    if (this.total >= this.settings.maxConnections)
      throw fail(
        'TOO_MANY_STREAMS',
        `this server holds its maximum of ${this.settings.maxConnections} open streams (FRESHET_STREAM_MAX_CONNECTIONS); retry later or on another server`,
      );
    if (this.openFor(readerId) >= this.settings.maxPerReader)
      throw fail(
        'TOO_MANY_STREAMS',
        `reader ${readerId} already has ${this.settings.maxPerReader} open streams on this server (FRESHET_STREAM_MAX_PER_READER); close one first`,
      );
  }

  /**
   * Takes `res` over and holds a session of `readerId` on it, from `since` or, without it, the newest
   * visible tid: the SSE head and a `retry` line, then the catch-up. A socket gone while the cursor was
   * read is closed, with nothing held and nothing counted against the reader. `dropped` was started
   * before the request's first await; `hijack` tells the framework the response is no longer its own.
   * @throws FreshetError TOO_MANY_STREAMS, before anything is written (the route answers its envelope).
   */
  async serve(
    readerId: string,
    since: number | undefined,
    res: StreamResponse,
    dropped: DropWatch,
    now: () => number,
    hijack: () => void,
  ): Promise<void> {
    const cursor = since ?? (await this.currentTid());
    dropped.stop();
    // gone while we waited: nothing to hold, nothing to count against the reader
    if (dropped.gone || res.destroyed || !res.socket || res.socket.destroyed) {
      hijack();
      res.destroy();
      return;
    }
    this.admit(readerId); // no await from here to open(): the limits hold
    hijack();
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(`retry: 1000\n: stream of ${readerId} after ${cursor}\n\n`);
    this.open(readerId, cursor, res, now);
  }

  /** Registers a session on `sink` (already admitted) and starts its catch-up from `cursor`. */
  open(readerId: string, cursor: number, sink: SseSink, now: () => number): StreamSession {
    const s = new StreamSession(this, readerId, cursor, sink, now);
    let set = this.byReader.get(readerId);
    if (!set) this.byReader.set(readerId, (set = new Set()));
    set.add(s);
    this.total++;
    this.metrics.streams(this.total);
    this.unsubscribe ??= this.signal.subscribe(() => this.wakeAll());
    // a socket that closed before the session listened never says so again: end the session now
    if (sink.destroyed) s.close('client');
    else s.wake();
    return s;
  }

  /** Called by a session as it ends. */
  leave(s: StreamSession, why: StreamEnd): void {
    const set = this.byReader.get(s.readerId);
    if (!set?.delete(s)) return;
    if (set.size === 0) this.byReader.delete(s.readerId);
    this.total--;
    this.ended[why]++;
    this.metrics.streams(this.total);
    this.metrics.streamEnded(why);
  }

  /** Ends every session (server shutdown) and stops listening. */
  async close(): Promise<void> {
    for (const set of [...this.byReader.values()]) for (const s of [...set]) s.close('shutdown');
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Wakes every session once per turn of the event loop, however many signals came in it. */
  private wakeAll(): void {
    if (this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      for (const set of this.byReader.values()) for (const s of set) s.wake();
    });
  }
}
