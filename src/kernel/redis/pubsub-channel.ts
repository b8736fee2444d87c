/**
 * PubSubChannel: one Redis pub/sub channel, for the messages processes send each other (the following
 * timeline's watermark signal, item changes). Publishes go on the shared request-path connection; a
 * dedicated subscriber connection (a subscribed connection can run no other command) opens at the first
 * `listen` and is shared by every listener of the channel.
 *
 * Delivery is at most once: pub/sub keeps nothing for a subscriber that is not connected. `live` says
 * whether every message published since the last `reset` reaches the listeners: it turns true when the
 * reply to our own `SUBSCRIBE` arrives (sent on every `ready`: the first connect and each reconnect), and
 * false when the connection closes; listeners are told `reset` at both moments, since messages sent in
 * between are gone. (ioredis resubscribes by itself too; our own `SUBSCRIBE` is what we can wait for.)
 */
import type { Logger } from '../observability.js';
import { closeRedis, type RedisClient } from './client.js';

/** A listener of the channel: every message's text, and when messages may have been lost. */
export interface ChannelListener {
  message(text: string): void;
  /** Messages may have been lost: the subscription closed, or was confirmed again after a loss. */
  reset?(): void;
}

/** What a failure costs, for the warning logged in its place (publish and subscribe never throw). */
export interface ChannelFailureNotes {
  /** e.g. "streams catch up at their next resync". */
  publish: string;
  /** e.g. "hydration reads the database until it succeeds". */
  subscribe: string;
}

export class PubSubChannel {
  private sub: RedisClient | null = null;
  private readonly listeners = new Set<ChannelListener>();
  private confirmed = false;
  private closed = false;

  /**
   * @param redis the shared connection (publishes, with its command deadline);
   * @param connect opens the dedicated subscriber connection (called once, at the first `listen`);
   * @param name the channel (from `Keys`);
   * @param notes what a failed publish or subscribe costs (logged with the warning).
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly connect: () => RedisClient,
    readonly name: string,
    private readonly log: Logger,
    private readonly notes: ChannelFailureNotes,
  ) {}

  /** True while every published message reaches the listeners (see the module doc). */
  get live(): boolean {
    return this.confirmed && !this.closed;
  }

  /** Publishes `text`; resolves once Redis answered (the message is then with every subscriber). Never throws. */
  async publish(text: string): Promise<void> {
    try {
      await this.redis.publish(this.name, text);
    } catch (err) {
      this.log.warn({ err, channel: this.name }, `pub/sub publish failed; ${this.notes.publish}`);
    }
  }

  /** Adds a listener (opening the subscriber connection the first time); returns its removal. */
  listen(listener: ChannelListener): () => void {
    this.listeners.add(listener);
    if (!this.sub && !this.closed) this.open();
    return () => void this.listeners.delete(listener);
  }

  /** Stops listening and closes the subscriber connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const sub = this.sub;
    this.sub = null;
    if (sub) await closeRedis(sub);
  }

  private open(): void {
    const sub = (this.sub = this.connect());
    sub.on('message', (channel: string, text: string) => {
      if (channel !== this.name) return;
      for (const l of this.listeners) l.message(text);
    });
    sub.on('ready', () => this.confirm(sub));
    sub.on('close', () => this.lost());
    sub.on('error', () => {}); // the request-path client logs outages; this one only follows them
    if (sub.status === 'ready') this.confirm(sub);
  }

  /** Sends our SUBSCRIBE; its reply means every later message reaches us: reset, then live. */
  private confirm(sub: RedisClient): void {
    sub.subscribe(this.name).then(
      () => {
        if (this.closed || sub.status !== 'ready') return;
        this.resetAll();
        this.confirmed = true;
      },
      (err: unknown) => this.log.warn({ err, channel: this.name }, `pub/sub subscribe failed; ${this.notes.subscribe}`),
    );
  }

  private lost(): void {
    if (!this.confirmed) return;
    this.confirmed = false;
    this.resetAll();
  }

  private resetAll(): void {
    for (const l of this.listeners) l.reset?.();
  }
}
