/**
 * What the following stream announces besides timeline entries (docs/api.md "Realtime"): a reader's
 * notifications changed (`event: notifications`), or a reader moved its following-timeline marker
 * (`event: marker`) — on any process, so two open devices stay in step. Each change reaches every process
 * on a channel (Redis pub/sub, or in process on the embedded default); a process with an open stream of
 * that reader reads the new state and writes it to its streams. A lost message only delays an
 * announcement: the state is always read from the stores.
 */
import { InProcessChannel, type Channel } from '../kernel/channel.js';
import type { Logger } from '../kernel/observability.js';
import { PubSubChannel } from '../kernel/redis/pubsub-channel.js';
import type { Stores } from '../kernel/stores.js';
import type { Following } from '../following/wire.js';
import { timelineMarkerJson } from '../following/schemas.js';
import type { WiredNotifications } from '../notifications/wire.js';
import { groupJson } from '../notifications/schemas.js';

/** Wires the announcements; returns what closes them. */
export function wireAnnouncements(
  stores: Stores,
  following: Following,
  notifications: WiredNotifications,
  now: () => number,
  log: Logger,
): { close(): Promise<void> } {
  const redis = stores.redis;
  const markers: Channel = redis
    ? new PubSubChannel(redis.redis, redis.connectBlocking, redis.keys.timelineMarkerSignal(), log, {
        publish: "other devices' streams hear of it at their next change",
        subscribe: 'streams of this process announce no marker until it succeeds',
      })
    : new InProcessChannel();
  const stream = following.stream;
  const announce = (readerId: string, event: string, read: () => Promise<unknown>) => {
    if (stream.openFor(readerId) === 0) return;
    read()
      .then((data) => stream.announce(readerId, event, data))
      .catch((err: unknown) => log.warn({ err, readerId, event }, 'stream announcement failed'));
  };
  notifications.onChange((recipientId) =>
    announce(recipientId, 'notifications', async () => {
      const p = await notifications.notifications.page(recipientId, { limit: 1 });
      return {
        unread_count: p.unread.count,
        unread_capped: p.unread.capped,
        latest: p.groups[0] ? groupJson(p.groups[0]) : null,
      };
    }),
  );
  following.timeline.onMarkerMoved((readerId) => void markers.publish(readerId));
  markers.listen({
    message: (readerId) =>
      announce(readerId, 'marker', async () => ({
        timeline: 'following',
        ...timelineMarkerJson(await following.timeline.marker(readerId, now())),
      })),
  });
  return { close: () => markers.close() };
}
