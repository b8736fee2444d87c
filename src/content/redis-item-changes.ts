/**
 * ItemChanges over Redis pub/sub (kernel/redis/pubsub-channel.ts): a writer publishes `{o, w, d}` (its
 * origin token, written ids, deleted ids) on `Keys.itemChanges()`; every process listens from construction
 * on. `live` and `reset` are the channel's: false and told while messages may be lost. A process ignores
 * its own messages (it applied the change before publishing).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../kernel/observability.js';
import type { RedisClient } from '../kernel/redis/client.js';
import { PubSubChannel } from '../kernel/redis/pubsub-channel.js';
import type { ItemChangeListener, ItemChanges } from '../kernel/items/item-changes.js';

/** The message on the channel. */
interface Message {
  /** The publishing process's origin token. */
  o: string;
  /** Written (new or edited) ids. */
  w: string[];
  /** Deleted ids. */
  d: string[];
}

export class RedisItemChanges implements ItemChanges {
  private readonly origin = randomUUID();
  private readonly listeners = new Set<ItemChangeListener>();
  private readonly channel: PubSubChannel;

  /**
   * @param redis the shared request-path connection (publishes, with its command deadline);
   * @param connect opens the dedicated subscriber connection (called once, now);
   * @param channel `Keys.itemChanges()`.
   */
  constructor(redis: RedisClient, connect: () => RedisClient, channel: string, log: Logger) {
    this.channel = new PubSubChannel(redis, connect, channel, log, {
      publish: 'other processes drop their copies at the item cache ttl',
      subscribe: 'hydration reads the database until it succeeds',
    });
    this.channel.listen({
      message: (raw) => this.deliver(raw),
      reset: () => {
        for (const l of this.listeners) l.reset();
      },
    });
  }

  get live(): boolean {
    return this.channel.live;
  }

  publish(writtenIds: readonly string[], deletedIds: readonly string[]): Promise<void> {
    if (writtenIds.length === 0 && deletedIds.length === 0) return Promise.resolve();
    const message: Message = { o: this.origin, w: [...writtenIds], d: [...deletedIds] };
    return this.channel.publish(JSON.stringify(message));
  }

  subscribe(listener: ItemChangeListener): void {
    this.listeners.add(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.channel.close();
  }

  private deliver(raw: string): void {
    let m: Message;
    try {
      m = JSON.parse(raw) as Message;
    } catch {
      return;
    }
    if (m.o === this.origin || !Array.isArray(m.w) || !Array.isArray(m.d)) return;
    for (const l of this.listeners) l.changed(m.w, m.d);
  }
}
