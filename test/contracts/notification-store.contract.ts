/**
 * The NotificationStore port contract (src/notifications/notification-store.ts), one suite for every SQL
 * engine: events recorded with increasing ids (Freshet's own types once per recipient, group and actor),
 * retracted newest first within a time bound, read grouped (newest group first, exact counts, the newest
 * distinct actors, a `max_id`-style cursor), counted past a marker; markers that move forward unless forced;
 * a user erased from what they received and caused; the export's events with their data; pruning by age.
 * A test file adopts it through test/support/contract.ts.
 */
import { describe, expect, it } from 'vitest';
import { groupKey, type NotificationType } from '../../src/notifications/domain.js';
import type { NewNotification, NotificationStore } from '../../src/notifications/notification-store.js';

/** A store over an empty database. */
export type NotificationStoreFactory = () => Promise<NotificationStore>;

const DAY = 86_400_000;
const T = Date.UTC(2026, 10, 27, 12);

/** An event of `type` to `recipient` by `actor` on `item` at `atMs`, in its day's group. */
function event(
  recipientId: string,
  actorId: string,
  itemId: string | null,
  type: NotificationType = 'like',
  atMs = T,
  data?: unknown,
): NewNotification {
  return {
    recipientId,
    actorId,
    itemId,
    type,
    atMs,
    groupKey: groupKey(type, itemId, atMs, DAY),
    ...(data !== undefined ? { data } : {}),
  };
}

export function notificationStoreContract(name: string, open: NotificationStoreFactory): void {
  describe(`NotificationStore contract: ${name}`, () => {
    it('records events with increasing ids; its own types once per recipient, group and actor; an app type each time', async () => {
      const s = await open();
      expect(await s.newestId('bob')).toBe(0);
      const a = await s.record(event('bob', 'al', 'p1'));
      const b = await s.record(event('bob', 'cy', 'p1'));
      expect(a).toMatchObject({ recipientId: 'bob', actorId: 'al', itemId: 'p1', type: 'like', atMs: T });
      expect(b!.id).toBeGreaterThan(a!.id);
      expect(await s.record(event('bob', 'al', 'p1', 'like', T + 1000))).toBeNull(); // a retried like: once
      expect(await s.newestId('bob')).toBe(b!.id);
      const m1 = await s.record(event('bob', 'al', 'p1', 'mention'));
      const m2 = await s.record(event('bob', 'al', 'p1', 'mention'));
      expect(m1).not.toBeNull();
      expect(m2!.id).toBeGreaterThan(m1!.id);
      expect(await s.newestId('bob')).toBe(m2!.id);
      expect(await s.newestId('nobody')).toBe(0);
    });

    it('retracts the newest matching event recorded at or after the bound, once', async () => {
      const s = await open();
      await s.record(event('bob', 'al', 'p1', 'mention', T));
      const later = await s.record(event('bob', 'al', 'p1', 'mention', T + 1000));
      await s.record(event('bob', 'al', 'p2', 'mention', T + 2000));
      expect(await s.retract('bob', 'mention', 'al', 'p1', T + 5000)).toBeNull(); // none that recent
      expect(await s.retract('bob', 'mention', 'al', 'p1', T)).toMatchObject({ id: later!.id });
      expect((await s.retract('bob', 'mention', 'al', 'p1', T))!.atMs).toBe(T);
      expect(await s.retract('bob', 'mention', 'al', 'p1', T)).toBeNull();
      // a follow carries no item: matched as null
      const f = await s.record(event('bob', 'dee', null, 'follow'));
      expect(await s.retract('bob', 'follow', 'dee', null, T)).toMatchObject({ id: f!.id, itemId: null });
    });

    it('reads groups newest first: exact counts, the newest three distinct actors, below a cursor, at most a limit', async () => {
      const s = await open();
      for (const a of ['a1', 'a2', 'a3', 'a4']) await s.record(event('bob', a, 'p1'));
      await s.record(event('bob', 'f1', null, 'follow'));
      const reply = await s.record(event('bob', 'a5', 'p2', 'reply'));
      await s.record(event('eve', 'a1', 'p9')); // another recipient's
      const groups = await s.groups('bob', null, 10);
      expect(groups.map((g) => [g.type, g.itemId, g.actorCount, g.actors])).toEqual([
        ['reply', 'p2', 1, ['a5']],
        ['follow', null, 1, ['f1']],
        ['like', 'p1', 4, ['a4', 'a3', 'a2']],
      ]);
      expect(groups[0]).toMatchObject({ latestId: reply!.id, latestAt: T, groupKey: reply!.groupKey });
      expect((await s.groups('bob', null, 1)).map((g) => g.type)).toEqual(['reply']);
      // the cursor: only groups whose newest event is below it
      expect((await s.groups('bob', reply!.id, 10)).map((g) => g.type)).toEqual(['follow', 'like']);
      expect(await s.group('bob', groups[2]!.groupKey)).toEqual(groups[2]);
      expect(await s.group('bob', 'like:nothing:1')).toBeNull();
    });

    it('counts the groups with an event after an id, up to a cap', async () => {
      const s = await open();
      const first = await s.record(event('bob', 'a1', 'p1'));
      for (const [a, p] of [
        ['a2', 'p1'],
        ['a1', 'p2'],
        ['a1', 'p3'],
        ['a1', 'p4'],
      ] as const)
        await s.record(event('bob', a, p));
      expect(await s.countGroupsAfter('bob', 0, 100)).toBe(4);
      expect(await s.countGroupsAfter('bob', first!.id, 100)).toBe(4); // p1 has a newer event
      expect(await s.countGroupsAfter('bob', 0, 2)).toBe(2);
      expect(await s.countGroupsAfter('bob', await s.newestId('bob'), 100)).toBe(0);
    });

    it('moves a marker forward only, unless forced', async () => {
      const s = await open();
      expect(await s.getMarker('bob')).toEqual({ lastReadId: 0, updatedAt: null });
      expect(await s.setMarker('bob', 5, T, false)).toEqual({ lastReadId: 5, updatedAt: T, moved: true });
      expect(await s.setMarker('bob', 3, T + 1, false)).toEqual({ lastReadId: 5, updatedAt: T, moved: false });
      expect(await s.setMarker('bob', 5, T + 2, false)).toMatchObject({ lastReadId: 5, moved: false });
      expect(await s.setMarker('bob', 3, T + 3, true)).toEqual({ lastReadId: 3, updatedAt: T + 3, moved: true });
      expect(await s.getMarker('bob')).toEqual({ lastReadId: 3, updatedAt: T + 3 });
      expect(await s.getMarker('eve')).toEqual({ lastReadId: 0, updatedAt: null });
    });

    it('erases a user: what they received and caused, and their marker; names the recipients they notified', async () => {
      const s = await open();
      await s.record(event('al', 'bob', 'p1'));
      await s.record(event('al', 'cy', 'p1'));
      await s.record(event('bob', 'al', 'p2'));
      await s.record(event('eve', 'al', 'p3', 'mention'));
      await s.setMarker('al', 1, T, false);
      const r = await s.forgetUser('al');
      expect({ ...r, recipients: [...r.recipients].sort() }).toEqual({
        received: 2,
        caused: 2,
        markers: 1,
        recipients: ['bob', 'eve'],
      });
      expect(await s.groups('al', null, 10)).toEqual([]);
      expect(await s.groups('bob', null, 10)).toEqual([]);
      expect(await s.getMarker('al')).toEqual({ lastReadId: 0, updatedAt: null });
      expect(await s.forgetUser('al')).toEqual({ received: 0, caused: 0, markers: 0, recipients: [] });
    });

    it("gives a reader's events newest first with their data (the export), and prunes by age in batches", async () => {
      const s = await open();
      await s.record(event('bob', 'al', 'p1', 'like', T - 2 * DAY));
      await s.record(event('bob', 'cy', 'p2', 'app.badge', T - DAY, { level: 3 }));
      await s.record(event('bob', 'dee', null, 'follow', T));
      const got = await s.received('bob', 10);
      expect(got.map((e) => [e.actorId, e.data])).toEqual([
        ['dee', null],
        ['cy', { level: 3 }],
        ['al', null],
      ]);
      expect((await s.received('bob', 1)).map((e) => e.actorId)).toEqual(['dee']);
      expect(await s.prune(T, 1)).toBe(1); // the oldest first
      expect((await s.received('bob', 10)).map((e) => e.actorId)).toEqual(['dee', 'cy']);
      expect(await s.prune(T, 10)).toBe(1);
      expect(await s.prune(T, 10)).toBe(0);
      expect((await s.received('bob', 10)).map((e) => e.actorId)).toEqual(['dee']);
    });
  });
}
