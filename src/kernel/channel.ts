/**
 * A channel on which processes tell each other something happened (a recipient's notifications changed,
 * a fan-out finished): Redis pub/sub across processes (src/kernel/redis/pubsub-channel.ts), or this
 * in-process one on the embedded default. Delivery is at most once; listeners must tolerate a lost message.
 */

/** What a channel offers its users (PubSubChannel has the same shape). */
export interface Channel {
  /** Sends `text` to every listener (of every process, on Redis). Never throws. */
  publish(text: string): Promise<void>;
  /** Adds a listener; returns its removal. */
  listen(listener: { message(text: string): void }): () => void;
  close(): Promise<void>;
}

/** A channel within one process: listeners hear each message synchronously, in order. */
export class InProcessChannel implements Channel {
  private readonly listeners = new Set<{ message(text: string): void }>();

  async publish(text: string): Promise<void> {
    for (const l of this.listeners) l.message(text);
  }

  listen(listener: { message(text: string): void }): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
