/**
 * TimelineSignal port: "the visibility watermark may have moved" — raised by the fan-out worker after
 * each finished job (src/following/wire.ts), heard by every process's stream hub (./stream-hub.ts),
 * which then re-reads the timelines of its connected readers. It carries no timeline content: a lost
 * signal delays delivery until the next one or the hub's periodic resync, it never loses an entry.
 *
 * Adapters: in process (the embedded default: worker and server share the process) and Redis pub/sub
 * (one channel, `Keys.timelineSignal()`, so workers and servers in different processes meet).
 */

/** Raises and hears watermark moves. */
export interface TimelineSignal {
  /** Tells every subscriber (of every process on the same Redis) that fan-out finished `tid`. Never throws. */
  publish(tid: number): void;
  /** Calls `listener` on every signal until the returned function is called. */
  subscribe(listener: (tid: number) => void): () => void;
  /** Stops listening and closes what `subscribe` opened. */
  close(): Promise<void>;
}
