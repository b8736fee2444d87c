/**
 * Redis pub/sub TimelineSignal: `PUBLISH <Keys.timelineSignal()> <tid>` from the process that ran the
 * fan-out job; every process with a stream hub SUBSCRIBEs on a connection of its own, opened at the
 * first `subscribe` (a subscribed connection can run no other command). Pub/sub is at-most-once: a
 * message lost while a subscriber reconnects only delays delivery until the hub's next resync.
 */
import type { Logger } from '../../kernel/observability.js';
import { closeRedis, type RedisClient } from '../../kernel/redis/client.js';
import type { TimelineSignal } from '../timeline-signal.js';

export class RedisTimelineSignal implements TimelineSignal {
  private sub: RedisClient | null = null;
  private readonly listeners = new Set<(tid: number) => void>();

  /**
   * @param redis the shared connection (publishes);
   * @param connect opens the dedicated subscriber connection;
   * @param channel `Keys.timelineSignal()`.
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly connect: () => RedisClient,
    private readonly channel: string,
    private readonly log: Logger,
  ) {}

  publish(tid: number): void {
    this.redis.publish(this.channel, String(tid)).catch((err: unknown) => this.log.warn({ err }, 'timeline signal publish failed; streams catch up at their next resync'));
  }

  subscribe(listener: (tid: number) => void): () => void {
    this.listeners.add(listener);
    if (!this.sub) {
      const sub = (this.sub = this.connect());
      sub.on('message', (channel: string, message: string) => {
        if (channel !== this.channel) return;
        const tid = Number(message);
        for (const l of this.listeners) l(tid);
      });
      sub.subscribe(this.channel).catch((err: unknown) => this.log.warn({ err }, 'timeline signal subscribe failed; streams rely on their periodic resync'));
    }
    return () => void this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    const sub = this.sub;
    this.sub = null;
    if (sub) await closeRedis(sub);
  }
}
