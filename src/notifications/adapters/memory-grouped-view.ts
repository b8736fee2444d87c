/**
 * GroupedView in process (the embedded default, and the executable spec the Redis adapter is tested
 * against): one small record per recipient, at most `maxRecipients` recipients (least recently used
 * first out: a dropped view is rebuilt from PostgreSQL on its next read, as a lost Redis view is).
 */
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { withActor, type NotificationEvent, type NotificationGroup } from '../domain.js';
import type { GroupedView, ViewPage } from '../grouped-view.js';

interface View {
  state: 'building' | 'dirty' | 'ready';
  token: string;
  truncated: boolean;
  groups: Map<string, NotificationGroup>;
}

/** Settings of the view: groups kept per recipient, recipients kept in process. */
export interface GroupedViewSettings {
  maxGroups: number;
  /** Most recipients whose views this process keeps (memory adapter only). */
  maxRecipients?: number;
}

export class MemoryGroupedView implements GroupedView {
  private readonly views: LRUCache<string, View>;

  constructor(private readonly settings: GroupedViewSettings) {
    this.views = new LRUCache({ max: settings.maxRecipients ?? 100_000 });
  }

  async add(e: NotificationEvent): Promise<boolean> {
    const v = this.views.get(e.recipientId);
    if (!v) return false;
    if (v.state !== 'ready') {
      v.state = 'dirty';
      return false;
    }
    const g = v.groups.get(e.groupKey);
    v.groups.set(e.groupKey, {
      groupKey: e.groupKey,
      type: e.type,
      itemId: e.itemId,
      actors: withActor(g?.actors ?? [], e.actorId),
      actorCount: (g?.actorCount ?? 0) + 1,
      latestId: Math.max(g?.latestId ?? 0, e.id),
      latestAt: Math.max(g?.latestAt ?? 0, e.atMs),
    });
    this.trim(v);
    return true;
  }

  async remove(e: NotificationEvent): Promise<'ok' | 'refill' | 'absent'> {
    const v = this.views.get(e.recipientId);
    if (!v) return 'absent';
    if (v.state !== 'ready') {
      v.state = 'dirty';
      return 'absent';
    }
    const g = v.groups.get(e.groupKey);
    if (!g) return 'ok';
    if (g.actorCount <= 1) {
      v.groups.delete(e.groupKey);
      return 'ok';
    }
    const actors = g.actors.filter((a) => a !== e.actorId);
    v.groups.set(e.groupKey, { ...g, actorCount: g.actorCount - 1, actors });
    return actors.length < Math.min(g.actors.length, g.actorCount - 1) || e.id >= g.latestId ? 'refill' : 'ok';
  }

  async refill(
    recipientId: string,
    group: Pick<NotificationGroup, 'groupKey' | 'actors' | 'latestId' | 'latestAt'>,
  ): Promise<void> {
    const v = this.views.get(recipientId);
    const g = v?.state === 'ready' ? v.groups.get(group.groupKey) : undefined;
    if (v && g)
      v.groups.set(group.groupKey, { ...g, actors: group.actors, latestId: group.latestId, latestAt: group.latestAt });
  }

  async page(recipientId: string, beforeId: number | null, limit: number): Promise<ViewPage | null> {
    const v = this.views.get(recipientId);
    if (v?.state !== 'ready') return null;
    const groups = [...v.groups.values()]
      .filter((g) => beforeId === null || g.latestId < beforeId)
      .sort((a, b) => b.latestId - a.latestId)
      .slice(0, limit);
    return { groups: groups.map((g) => ({ ...g, actors: [...g.actors] })), truncated: v.truncated };
  }

  async countAfter(recipientId: string, afterId: number): Promise<{ count: number; truncated: boolean } | null> {
    const v = this.views.get(recipientId);
    if (v?.state !== 'ready') return null;
    let count = 0;
    for (const g of v.groups.values()) if (g.latestId > afterId) count++;
    return { count, truncated: v.truncated };
  }

  async beginRebuild(recipientId: string): Promise<string> {
    const token = randomUUID();
    this.views.set(recipientId, { state: 'building', token, truncated: false, groups: new Map() });
    return token;
  }

  async completeRebuild(
    recipientId: string,
    token: string,
    groups: readonly NotificationGroup[],
    truncated: boolean,
  ): Promise<boolean> {
    const v = this.views.get(recipientId);
    if (v?.state !== 'building' || v.token !== token) return false;
    v.state = 'ready';
    v.truncated = truncated;
    for (const g of groups.slice(0, this.settings.maxGroups)) v.groups.set(g.groupKey, { ...g, actors: [...g.actors] });
    if (groups.length > this.settings.maxGroups) v.truncated = true;
    return true;
  }

  async forget(recipientId: string): Promise<void> {
    this.views.delete(recipientId);
  }

  /** Drops the oldest groups past `maxGroups` (the view is then truncated). */
  private trim(v: View): void {
    if (v.groups.size <= this.settings.maxGroups) return;
    const oldest = [...v.groups.values()].sort((a, b) => a.latestId - b.latestId);
    for (const g of oldest.slice(0, v.groups.size - this.settings.maxGroups)) v.groups.delete(g.groupKey);
    v.truncated = true;
  }
}
