/**
 * NotificationStore on PostgreSQL (PGlite or a server, through `Sql`): the events and markers of the
 * notifications migration (./schema.ts). Times are epoch ms (`bigint`); event ids are a `bigserial`,
 * below 2^53 for any realistic life of a deployment, read as JavaScript numbers.
 */
import {
  GROUP_ACTORS,
  parseGroupKey,
  type NotificationEvent,
  type NotificationGroup,
  type NotificationType,
} from '../domain.js';
import type { NewNotification, NotificationMarker, NotificationStore } from '../notification-store.js';
import { moveMarker, readMarker } from '../../kernel/sql/read-markers.js';
import type { Sql } from '../../kernel/sql/sql.js';

interface EventRow {
  id: number | string;
  recipient_id: string;
  type: string;
  actor_id: string;
  item_id: string | null;
  group_key: string;
  created_at: number | string;
}

interface GroupRow {
  group_key: string;
  n: number | string;
  latest_id: number | string;
  latest_at: number | string;
  actors: string[];
}

const EVENT_COLUMNS = 'id, recipient_id, type, actor_id, item_id, group_key, created_at';

function toEvent(r: EventRow): NotificationEvent {
  return {
    id: Number(r.id),
    recipientId: r.recipient_id,
    type: r.type as NotificationType,
    actorId: r.actor_id,
    itemId: r.item_id,
    groupKey: r.group_key,
    atMs: Number(r.created_at),
  };
}

/** Distinct actors, in order, at most {@link GROUP_ACTORS}. */
function distinctActors(actors: readonly string[]): string[] {
  return [...new Set(actors)].slice(0, GROUP_ACTORS);
}

function toGroup(r: GroupRow): NotificationGroup {
  return {
    groupKey: r.group_key,
    ...parseGroupKey(r.group_key),
    actors: distinctActors(r.actors),
    actorCount: Number(r.n),
    latestId: Number(r.latest_id),
    latestAt: Number(r.latest_at),
  };
}

/** The store; it shares the caller's `Sql` handle and never closes it. */
export class PostgresNotificationStore implements NotificationStore {
  constructor(private readonly sql: Sql) {}

  async record(e: NewNotification): Promise<NotificationEvent | null> {
    const rows = await this.sql.query<EventRow>(
      `INSERT INTO notification_events (recipient_id, type, actor_id, item_id, group_key, data, created_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::bigint)
       ON CONFLICT DO NOTHING RETURNING ${EVENT_COLUMNS}`,
      [
        e.recipientId,
        e.type,
        e.actorId,
        e.itemId,
        e.groupKey,
        e.data === undefined ? null : JSON.stringify(e.data),
        Math.floor(e.atMs),
      ],
    );
    return rows[0] ? toEvent(rows[0]) : null;
  }

  /**
   * One INSERT … SELECT over the batch in order: the returned rows, by id, are the inserted elements in
   * batch order, so each is matched to the next element of the same event (a skipped one matches nothing).
   */
  async recordMany(events: readonly NewNotification[]): Promise<(NotificationEvent | null)[]> {
    if (events.length === 0) return [];
    const rows = await this.sql.query<EventRow>(
      `INSERT INTO notification_events (recipient_id, type, actor_id, item_id, group_key, data, created_at)
       SELECT r, t, a, i, g, d::jsonb, c FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
         $6::text[], $7::bigint[]) WITH ORDINALITY AS v (r, t, a, i, g, d, c, ord)
       ORDER BY ord
       ON CONFLICT DO NOTHING RETURNING ${EVENT_COLUMNS}`,
      [
        events.map((e) => e.recipientId),
        events.map((e) => e.type),
        events.map((e) => e.actorId),
        events.map((e) => e.itemId),
        events.map((e) => e.groupKey),
        events.map((e) => (e.data === undefined ? null : JSON.stringify(e.data))),
        events.map((e) => Math.floor(e.atMs)),
      ],
    );
    const inserted = rows.map(toEvent).sort((x, y) => x.id - y.id);
    const same = (e: NewNotification, x: NotificationEvent) =>
      x.recipientId === e.recipientId &&
      x.type === e.type &&
      x.actorId === e.actorId &&
      x.itemId === e.itemId &&
      x.groupKey === e.groupKey;
    let next = 0;
    return events.map((e) => (next < inserted.length && same(e, inserted[next]!) ? inserted[next++]! : null));
  }

  async retract(
    recipientId: string,
    type: NotificationType,
    actorId: string,
    itemId: string | null,
    sinceMs: number,
  ): Promise<NotificationEvent | null> {
    const rows = await this.sql.query<EventRow>(
      `DELETE FROM notification_events WHERE id = (
         SELECT id FROM notification_events
         WHERE recipient_id = $1 AND type = $2 AND actor_id = $3 AND item_id IS NOT DISTINCT FROM $4 AND created_at >= $5::bigint
         ORDER BY id DESC LIMIT 1)
       RETURNING ${EVENT_COLUMNS}`,
      [recipientId, type, actorId, itemId, Math.floor(sinceMs)],
    );
    return rows[0] ? toEvent(rows[0]) : null;
  }

  async groups(recipientId: string, beforeId: number | null, limit: number): Promise<NotificationGroup[]> {
    // no WHERE on id: a group whose newest event is above the cursor was served above it, whole
    const rows = await this.sql.query<GroupRow>(
      `SELECT group_key, count(*) AS n, max(id) AS latest_id, max(created_at) AS latest_at,
              (array_agg(actor_id ORDER BY id DESC))[1:${GROUP_ACTORS * 4}] AS actors
       FROM notification_events WHERE recipient_id = $1
       GROUP BY group_key HAVING $2::bigint IS NULL OR max(id) < $2::bigint
       ORDER BY latest_id DESC LIMIT $3`,
      [recipientId, beforeId, limit],
    );
    return rows.map(toGroup);
  }

  async group(recipientId: string, groupKey: string): Promise<NotificationGroup | null> {
    const rows = await this.sql.query<GroupRow>(
      `SELECT group_key, count(*) AS n, max(id) AS latest_id, max(created_at) AS latest_at,
              (array_agg(actor_id ORDER BY id DESC))[1:${GROUP_ACTORS * 4}] AS actors
       FROM notification_events WHERE recipient_id = $1 AND group_key = $2 GROUP BY group_key`,
      [recipientId, groupKey],
    );
    return rows[0] ? toGroup(rows[0]) : null;
  }

  async countGroupsAfter(recipientId: string, afterId: number, cap: number): Promise<number> {
    const rows = await this.sql.query<{ n: number | string }>(
      `SELECT count(*) AS n FROM (SELECT DISTINCT group_key FROM notification_events
         WHERE recipient_id = $1 AND id > $2::bigint LIMIT $3) g`,
      [recipientId, afterId, cap],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async newestId(recipientId: string): Promise<number> {
    const rows = await this.sql.query<{ id: number | string | null }>(
      'SELECT max(id) AS id FROM notification_events WHERE recipient_id = $1',
      [recipientId],
    );
    return Number(rows[0]?.id ?? 0);
  }

  async getMarker(readerId: string): Promise<NotificationMarker> {
    return readMarker(this.sql, 'notification_markers', readerId);
  }

  async setMarker(
    readerId: string,
    lastReadId: number,
    nowMs: number,
    force: boolean,
  ): Promise<NotificationMarker & { moved: boolean }> {
    return moveMarker(this.sql, 'notification_markers', readerId, lastReadId, nowMs, force);
  }

  async forgetUser(
    userId: string,
  ): Promise<{ received: number; caused: number; markers: number; recipients: string[] }> {
    return this.sql.transaction(async (tx) => {
      const received = await tx.query('DELETE FROM notification_events WHERE recipient_id = $1 RETURNING 1', [userId]);
      const caused = await tx.query<{ recipient_id: string }>(
        'DELETE FROM notification_events WHERE actor_id = $1 RETURNING recipient_id',
        [userId],
      );
      const markers = await tx.query('DELETE FROM notification_markers WHERE reader_id = $1 RETURNING 1', [userId]);
      return {
        received: received.length,
        caused: caused.length,
        markers: markers.length,
        recipients: [...new Set(caused.map((r) => r.recipient_id))],
      };
    });
  }

  async dataOf(recipientId: string, ids: readonly number[]): Promise<Map<number, unknown>> {
    if (ids.length === 0) return new Map();
    const rows = await this.sql.query<{ id: string | number; data: unknown }>(
      `SELECT id, data FROM notification_events
       WHERE id = ANY($1::bigint[]) AND recipient_id = $2 AND data IS NOT NULL`,
      [ids, recipientId],
    );
    return new Map(rows.map((r) => [Number(r.id), r.data]));
  }

  async received(readerId: string, limit: number): Promise<(NotificationEvent & { data: unknown })[]> {
    const rows = await this.sql.query<EventRow & { data: unknown }>(
      `SELECT ${EVENT_COLUMNS}, data FROM notification_events WHERE recipient_id = $1 ORDER BY id DESC LIMIT $2`,
      [readerId, limit],
    );
    return rows.map((r) => ({ ...toEvent(r), data: r.data ?? null }));
  }

  async prune(beforeMs: number, batch: number): Promise<number> {
    const rows = await this.sql.query<{ n: number | string }>(
      `WITH gone AS (DELETE FROM notification_events WHERE id IN (
         SELECT id FROM notification_events WHERE created_at < $1::bigint ORDER BY created_at LIMIT $2) RETURNING 1)
       SELECT count(*) AS n FROM gone`,
      [Math.floor(beforeMs), batch],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
