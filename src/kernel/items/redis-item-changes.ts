/**
 * ItemChanges over Redis pub/sub: a writer `PUBLISH`es `{o, w, d}` (its origin token, written ids,
 * deleted ids) on `Keys.itemChanges()`; every process SUBSCRIBEs on a connection of its own, opened at
 * construction (a subscribed connection can run no other command).
 *
 * Liveness: the subscription is confirmed by the reply to our own `SUBSCRIBE`, sent on every `ready`
 * (the first connect and each reconnect); only then is `live` true, and listeners are told `reset` at
 * that moment, since messages published while the connection was down are gone (pub/sub keeps nothing).
 * The connection closing makes `live` false at once. A process ignores its own messages (it applied the
 * change before publishing).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability.js';
import { closeRedis, type RedisClient } from '../redis/client.js';
import type { ItemChangeListener, ItemChanges } from './item-changes.js';

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
  private readonly sub: RedisClient;
  private confirmed = false;
  private closed = false;

  /**
   * @param redis the shared request-path connection (publishes, with its command deadline);
   * @param connect opens the dedicated subscriber connection (called once, now);
   * @param channel `Keys.itemChanges()`.
   */
  constructor(
    private readonly redis: RedisClient,
    connect: () => RedisClient,
    private readonly channel: string,
    private readonly log: Logger,
  ) {
    const sub = (this.sub = connect());
    sub.on('message', (ch: string, raw: string) => {
      if (ch === this.channel) this.deliver(raw);
    });
    sub.on('ready', () => this.confirm());
    sub.on('close', () => this.lost());
    sub.on('error', () => {}); // the request-path client logs outages; this one only follows them
    if (sub.status === 'ready') this.confirm();
  }

  get live(): boolean {
    return this.confirmed && !this.closed;
  }

  async publish(writtenIds: readonly string[], deletedIds: readonly string[]): Promise<void> {
    if (writtenIds.length === 0 && deletedIds.length === 0) return;
    const message: Message = { o: this.origin, w: [...writtenIds], d: [...deletedIds] };
    try {
      await this.redis.publish(this.channel, JSON.stringify(message));
    } catch (err) {
      this.log.warn({ err, written: writtenIds.length, deleted: deletedIds.length }, 'item change publish failed; other processes drop their copies at the item cache ttl');
    }
  }

  subscribe(listener: ItemChangeListener): void {
    this.listeners.add(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await closeRedis(this.sub);
  }

  /** Sends our SUBSCRIBE; its reply means every later message reaches us: reset, then live. */
  private confirm(): void {
    this.sub.subscribe(this.channel).then(
      () => {
        if (this.closed || this.sub.status !== 'ready') return;
        for (const l of this.listeners) l.reset();
        this.confirmed = true;
      },
      (err: unknown) => this.log.warn({ err }, 'item change subscribe failed; hydration reads the database until it succeeds'),
    );
  }

  private lost(): void {
    if (!this.confirmed) return;
    this.confirmed = false;
    for (const l of this.listeners) l.reset();
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
