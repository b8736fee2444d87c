/**
 * Redis pub/sub TimelineSignal: `PUBLISH <Keys.timelineSignal()> <tid>` from the process that ran the
 * fan-out job; every process with a stream hub listens on the channel (kernel/redis/pubsub-channel.ts:
 * its own subscriber connection, opened at the first `subscribe`). Pub/sub is at-most-once: a message
 * lost while a subscriber reconnects only delays delivery until the hub's next resync.
 */
import type { Logger } from '../../kernel/observability.js';
import type { RedisClient } from '../../kernel/redis/client.js';
import { PubSubChannel } from '../../kernel/redis/pubsub-channel.js';
import type { TimelineSignal } from '../timeline-signal.js';

export class RedisTimelineSignal implements TimelineSignal {
  private readonly channel: PubSubChannel;

  /**
   * @param redis the shared connection (publishes);
   * @param connect opens the dedicated subscriber connection;
   * @param channel `Keys.timelineSignal()`.
   */
  constructor(redis: RedisClient, connect: () => RedisClient, channel: string, log: Logger) {
    this.channel = new PubSubChannel(redis, connect, channel, log, {
      publish: 'streams catch up at their next resync',
      subscribe: 'streams rely on their periodic resync',
    });
  }

  publish(tid: number): void {
    void this.channel.publish(String(tid));
  }

  subscribe(listener: (tid: number) => void): () => void {
    return this.channel.listen({ message: (text) => listener(Number(text)) });
  }

  close(): Promise<void> {
    return this.channel.close();
  }
}
