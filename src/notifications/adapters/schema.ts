/**
 * The SQL of the notifications migration (src/compose/migrations.ts lists it). Never edit it once released:
 * append a new migration instead.
 *
 * - `notification_events`: the truth of every notification (follows, likes, replies, shares of the
 *   recipient's items, and what an application sends: mentions and `app.<name>` events), with the group
 *   it joins (src/notifications/domain.ts). Freshet's own types are recorded once per (recipient, type,
 *   actor, item, group): a retried like is not counted twice. Pruned past `FRESHET_NOTIFICATION_RETENTION_DAYS`.
 * - `notification_markers`: how far each reader has read its notifications (`last_read_id`, an event id).
 * Recipients and actors need not be registered users (an application may notify anyone it knows), so no
 * foreign keys; an item of a notification may be deleted later (its groups leave the feed on read).
 */
import type { Migration } from '../../kernel/sql/migrations.js';

export const NOTIFICATIONS_SQL = `
  CREATE TABLE notification_events (
    id           bigserial PRIMARY KEY,
    recipient_id text NOT NULL CHECK (recipient_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    type         text NOT NULL CHECK (type ~ '^(follow|like|reply|share|mention|app\\.[a-z0-9_]{1,32})$'),
    actor_id     text NOT NULL CHECK (actor_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    item_id      text CHECK (item_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    group_key    text NOT NULL,
    data         jsonb,
    created_at   bigint NOT NULL                                   -- epoch ms (virtual time)
  );
  CREATE UNIQUE INDEX notification_events_once ON notification_events (recipient_id, group_key, actor_id)
    WHERE type IN ('follow', 'like', 'reply', 'share');
  CREATE INDEX notification_events_recipient_idx ON notification_events (recipient_id, id DESC);
  CREATE INDEX notification_events_group_idx ON notification_events (recipient_id, group_key, id DESC);
  CREATE INDEX notification_events_actor_idx ON notification_events (actor_id);
  CREATE INDEX notification_events_time_idx ON notification_events (created_at);

  CREATE TABLE notification_markers (
    reader_id    text PRIMARY KEY CHECK (reader_id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    last_read_id bigint NOT NULL CHECK (last_read_id >= 0),
    updated_at   bigint NOT NULL                                   -- epoch ms
  );
`;

/** The notifications migration, as src/compose/migrations.ts lists it. */
export const NOTIFICATIONS_MIGRATION: Migration = {
  version: 13,
  name: 'notifications: events and read markers',
  sql: NOTIFICATIONS_SQL,
};
