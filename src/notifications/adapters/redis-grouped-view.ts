/**
 * GroupedView on Redis: per recipient a ZSET of group keys by their newest event id (`nt:{u:<r>}`) and a
 * HASH of each group's `count|newest at|actors` with the view's state (`nt:g:{u:<r>}`); one hash tag, so
 * every script touches one Cluster slot. Every step is one Lua script (src/notifications/lua/): see each
 * script's header. Both keys live `ttlMs` after the recipient's last read or notification (wall clock).
 */
import { randomUUID } from 'node:crypto';
import { parseGroupKey, type NotificationEvent, type NotificationGroup } from '../domain.js';
import type { GroupedView, ViewPage } from '../grouped-view.js';
import type { RedisClient } from '../../kernel/redis/client.js';
import { redisCall } from '../../kernel/redis/errors.js';
import type { Keys } from '../../kernel/redis/keys.js';
import { LuaScripts } from '../../kernel/redis/lua.js';

/** The view's scripts (src/notifications/lua/). */
export const NOTIFICATION_SCRIPTS = new LuaScripts(new URL('../lua/', import.meta.url), [
  'ntAdd-2',
  'ntRemove-2',
  'ntRefill-2',
  'ntPage-2',
  'ntCount-2',
  'ntBegin-2',
  'ntComplete-2',
]);

/** How long a rebuild may hold the building state, ms. */
const BUILD_LEASE_MS = 10_000;

/** Settings of the Redis view. */
export interface RedisGroupedViewSettings {
  /** Groups kept per recipient. */
  maxGroups: number;
  /** Time to live of a view after its recipient's last read or notification, ms. */
  ttlMs: number;
}

/** A group's data field: `count|newest at|actor actor actor`. */
function encode(g: Pick<NotificationGroup, 'actorCount' | 'latestAt' | 'actors'>): string {
  return `${g.actorCount}|${Math.floor(g.latestAt)}|${g.actors.join(' ')}`;
}

function decode(groupKey: string, latestId: number, data: string): NotificationGroup {
  const [count, at, actors] = data.split('|') as [string, string, string];
  return {
    groupKey,
    ...parseGroupKey(groupKey),
    actors: actors === '' ? [] : actors.split(' '),
    actorCount: Number(count),
    latestId,
    latestAt: Number(at),
  };
}

export class RedisGroupedView implements GroupedView {
  private readonly lua;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly settings: RedisGroupedViewSettings,
  ) {
    this.lua = NOTIFICATION_SCRIPTS.on(redis);
  }

  private pair(recipientId: string): [string, string] {
    return [this.keys.notificationGroups(recipientId), this.keys.notificationData(recipientId)];
  }

  async add(e: NotificationEvent): Promise<boolean> {
    const args = [e.groupKey, e.id, Math.floor(e.atMs), e.actorId, this.settings.maxGroups, this.settings.ttlMs];
    return (await redisCall(this.lua.ntAdd(this.pair(e.recipientId), args))) === 1;
  }

  async remove(e: NotificationEvent): Promise<'ok' | 'refill' | 'absent'> {
    return (await redisCall(this.lua.ntRemove(this.pair(e.recipientId), [e.groupKey, e.id, e.actorId]))) as
      | 'ok'
      | 'refill'
      | 'absent';
  }

  async refill(
    recipientId: string,
    g: Pick<NotificationGroup, 'groupKey' | 'actors' | 'latestId' | 'latestAt'>,
  ): Promise<void> {
    await redisCall(
      this.lua.ntRefill(this.pair(recipientId), [g.groupKey, g.latestId, Math.floor(g.latestAt), g.actors.join(' ')]),
    );
  }

  async page(recipientId: string, beforeId: number | null, limit: number): Promise<ViewPage | null> {
    const bound = beforeId === null ? '+inf' : `(${beforeId}`;
    const reply = (await redisCall(this.lua.ntPage(this.pair(recipientId), [bound, limit, this.settings.ttlMs]))) as
      | string[]
      | null;
    if (!reply) return null;
    const groups: NotificationGroup[] = [];
    for (let i = 1; i + 2 < reply.length; i += 3) {
      if (reply[i + 2] === '') continue; // a member without its data field (the scripts write both together)
      groups.push(decode(reply[i]!, Number(reply[i + 1]), reply[i + 2]!));
    }
    return { groups, truncated: reply[0] === '1' };
  }

  async countAfter(recipientId: string, afterId: number): Promise<{ count: number; truncated: boolean } | null> {
    const reply = (await redisCall(this.lua.ntCount(this.pair(recipientId), [afterId]))) as [number, string] | null;
    return reply ? { count: Number(reply[0]), truncated: reply[1] === '1' } : null;
  }

  async beginRebuild(recipientId: string): Promise<string> {
    const token = randomUUID();
    await redisCall(this.lua.ntBegin(this.pair(recipientId), [token, BUILD_LEASE_MS]));
    return token;
  }

  async completeRebuild(
    recipientId: string,
    token: string,
    groups: readonly NotificationGroup[],
    truncated: boolean,
  ): Promise<boolean> {
    const kept = groups.slice(0, this.settings.maxGroups);
    const args: (string | number)[] = [token, this.settings.ttlMs, truncated || groups.length > kept.length ? '1' : ''];
    for (const g of kept) args.push(g.groupKey, g.latestId, encode(g));
    return (await redisCall(this.lua.ntComplete(this.pair(recipientId), args))) === 1;
  }

  async forget(recipientId: string): Promise<void> {
    await redisCall(this.redis.del(...this.pair(recipientId)));
  }
}
