/**
 * ItemChanges port: how the processes that share one catalog tell each other that items were written or
 * deleted, so that each can drop its in-process copies (the item cache of src/content/cached-content-store.ts).
 *
 * Delivery is at most once (Redis pub/sub): a listener is told `reset` whenever messages may have been
 * lost (its connection dropped), and `live` is false while they may be — a cache must then not serve
 * from memory. One process alone (the embedded default) needs no messages: {@link LocalItemChanges}.
 */

/** What a listener hears: ids written (new or edited) and ids deleted by another process. */
export interface ItemChangeListener {
  changed(writtenIds: readonly string[], deletedIds: readonly string[]): void;
  /** Messages may have been lost (a reconnect): forget every copy. */
  reset(): void;
}

export interface ItemChanges {
  /**
   * Whether every change published by another process since the last `reset` has been (or will be, in
   * order) delivered: false while the subscription is down or not yet confirmed.
   */
  readonly live: boolean;
  /**
   * Tells the other processes; resolves once the message is handed to every subscriber (Redis answers
   * `PUBLISH` after that). Never throws: a failure is logged by the implementation, and the other
   * processes' copies then lapse with their time to live.
   */
  publish(writtenIds: readonly string[], deletedIds: readonly string[]): Promise<void>;
  /** Adds a listener for other processes' changes (a process never hears its own). */
  subscribe(listener: ItemChangeListener): void;
  close(): Promise<void>;
}

/** One process, nobody else writes the catalog: always live, nothing to send. */
export class LocalItemChanges implements ItemChanges {
  readonly live = true;
  publish(): Promise<void> {
    return Promise.resolve();
  }
  subscribe(): void {}
  close(): Promise<void> {
    return Promise.resolve();
  }
}
