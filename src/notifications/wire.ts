/**
 * Wiring of the notifications, called by src/compose/open.ts: the PostgreSQL events and markers, the grouped
 * view (Redis when configured, else in process), the change channel (Redis pub/sub, else in process) and
 * the service.
 */
import type { Stores } from '../kernel/stores.js';
import type { Sql } from '../kernel/sql/sql.js';
import type { RetentionTask } from '../kernel/sql/retention.js';
import type { ExclusionSource } from '../kernel/exclusion-source.js';
import { InProcessChannel, type Channel } from '../kernel/channel.js';
import { PubSubChannel } from '../kernel/redis/pubsub-channel.js';
import { PostgresNotificationStore } from './adapters/postgres-notification-store.js';
import { MemoryGroupedView } from './adapters/memory-grouped-view.js';
import { RedisGroupedView } from './adapters/redis-grouped-view.js';
import { Notifications, PRUNE_BATCH, type NotificationSettings } from './service.js';
import type { NotificationStore } from './notification-store.js';

/** Settings of the notifications (`FRESHET_NOTIFICATION_*`); durations in ms. */
export interface NotificationWiring extends NotificationSettings {
  /** How long a recipient's grouped view lives in Redis after its last read or notification. */
  viewTtlMs: number;
}

/** The notifications of one Freshet instance. */
export interface WiredNotifications {
  notifications: Notifications;
  store: NotificationStore;
  /**
   * Calls `listener` with the recipient's id whenever its notifications or marker changed in any process
   * (at most once per change; a lost message only delays an announcement). Returns the unsubscribe.
   */
  onChange(listener: (recipientId: string) => void): () => void;
  close(): Promise<void>;
}

/** What the notifications read from other capabilities (ports the app fills). */
export interface NotificationPorts {
  exclusions: ExclusionSource;
  liveItems(ids: readonly string[]): Promise<Set<string>>;
}

/** Wires the notifications over the stores. */
export function wireNotifications(s: NotificationWiring, stores: Stores, ports: NotificationPorts): WiredNotifications {
  const store = new PostgresNotificationStore(stores.sql);
  const redis = stores.redis;
  const view = redis
    ? new RedisGroupedView(redis.redis, redis.keys, { maxGroups: s.maxGroups, ttlMs: s.viewTtlMs })
    : new MemoryGroupedView({ maxGroups: s.maxGroups });
  const channel: Channel = redis
    ? new PubSubChannel(redis.redis, redis.connectBlocking, redis.keys.notificationSignal(), stores.log, {
        publish: 'open streams announce it at their next change',
        subscribe: 'streams of this process announce no notification until it succeeds',
      })
    : new InProcessChannel();
  const notifications = new Notifications(
    {
      store,
      view,
      exclusions: ports.exclusions,
      liveItems: ports.liveItems,
      changed: (recipientId) => void channel.publish(recipientId),
      log: stores.log,
    },
    s,
  );
  return {
    notifications,
    store,
    onChange: (listener) => channel.listen({ message: listener }),
    close: () => channel.close(),
  };
}

/**
 * The notifications' part of the app's retention pass (src/use-cases/retention.ts): each step deletes up to
 * 5,000 events older than `FRESHET_NOTIFICATION_RETENTION_DAYS`, oldest first, on `sql`.
 */
export function notificationRetention(s: Pick<NotificationSettings, 'retentionMs'>, sql: Sql): RetentionTask {
  const store = new PostgresNotificationStore(sql);
  return {
    table: 'notification_events',
    async step(_after, nowMs) {
      const deleted = await store.prune(nowMs - s.retentionMs, PRUNE_BATCH);
      return { deleted, next: deleted < PRUNE_BATCH ? null : 'more' };
    },
  };
}
