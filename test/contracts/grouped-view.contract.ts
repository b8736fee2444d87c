/**
 * The GroupedView port contract (src/notifications/grouped-view.ts), one suite run against the memory and
 * Redis adapters: only a ready view takes writes, counts are exact, the recent actors are the newest three
 * distinct ones, the view stays bounded, and a rebuild that raced a write does not complete.
 */
import { describe, expect, it } from 'vitest';
import { groupKey, type NotificationEvent, type NotificationGroup } from '../../src/notifications/domain.js';
import type { GroupedView } from '../../src/notifications/grouped-view.js';

/** What a factory hands the contract: an empty view holding at most `maxGroups` groups per recipient. */
export type GroupedViewFactory = (maxGroups: number) => Promise<GroupedView>;

const DAY = 86_400_000;
const T = Date.UTC(2026, 10, 27, 12);
let nextId = 1;

function ev(
  recipientId: string,
  actorId: string,
  itemId: string | null,
  type: NotificationEvent['type'] = 'like',
  atMs = T,
): NotificationEvent {
  return { id: nextId++, recipientId, type, actorId, itemId, atMs, groupKey: groupKey(type, itemId, atMs, DAY) };
}

/** A view for `r` made ready, empty. */
async function ready(view: GroupedView, r: string, groups: NotificationGroup[] = []): Promise<void> {
  const token = await view.beginRebuild(r);
  expect(await view.completeRebuild(r, token, groups, false)).toBe(true);
}

export function groupedViewContract(name: string, open: GroupedViewFactory): void {
  describe(`GroupedView contract: ${name}`, () => {
    it('takes nothing before it is built; a page of an absent view is null', async () => {
      const view = await open(10);
      expect(await view.add(ev('bob', 'al', 'p1'))).toBe(false);
      expect(await view.page('bob', null, 10)).toBeNull();
      expect(await view.countAfter('bob', 0)).toBeNull();
    });

    it('counts each event into its group: exact counts, the newest three distinct actors, newest group first', async () => {
      const view = await open(10);
      await ready(view, 'bob');
      for (const a of ['a1', 'a2', 'a3', 'a4']) await view.add(ev('bob', a, 'p1'));
      await view.add(ev('bob', 'f1', null, 'follow'));
      await view.add(ev('bob', 'a5', 'p2', 'reply'));
      const page = (await view.page('bob', null, 10))!;
      expect(page.groups.map((g) => [g.type, g.itemId, g.actorCount, g.actors])).toEqual([
        ['reply', 'p2', 1, ['a5']],
        ['follow', null, 1, ['f1']],
        ['like', 'p1', 4, ['a4', 'a3', 'a2']],
      ]);
      // a fourth like moves its group to the top, once
      const e = ev('bob', 'a6', 'p1');
      await view.add(e);
      const top = (await view.page('bob', null, 1))!.groups[0]!;
      expect([top.itemId, top.actorCount, top.latestId]).toEqual(['p1', 5, e.id]);
      expect((await view.countAfter('bob', e.id - 1))!.count).toBe(1);
    });

    it('pages below a cursor without repeating a group, even when one grows meanwhile', async () => {
      const view = await open(50);
      await ready(view, 'cy');
      for (let i = 0; i < 12; i++) await view.add(ev('cy', `u${i}`, `it${i}`));
      const first = (await view.page('cy', null, 5))!.groups;
      await view.add(ev('cy', 'late', 'it0')); // the oldest group grows: it moves to the top
      const rest: string[] = [];
      let cursor = first[first.length - 1]!.latestId;
      for (;;) {
        const p = (await view.page('cy', cursor, 5))!.groups;
        if (p.length === 0) break;
        rest.push(...p.map((g) => g.itemId!));
        cursor = p[p.length - 1]!.latestId;
      }
      const seen = [...first.map((g) => g.itemId!), ...rest];
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).not.toContain('it0'); // it moved above the scroll: shown once, on the next refresh
      expect((await view.page('cy', null, 1))!.groups[0]!.itemId).toBe('it0');
    });

    it('a removal counts down exactly, the group leaves at 0, and asks for a refill when it lost a shown actor', async () => {
      const view = await open(10);
      await ready(view, 'dee');
      const es = ['x1', 'x2', 'x3', 'x4'].map((a) => ev('dee', a, 'p9'));
      for (const e of es) await view.add(e);
      expect(await view.remove(es[1]!)).toBe('refill'); // x2 was among the three shown; x1 must come back
      await view.refill('dee', {
        groupKey: es[0]!.groupKey,
        actors: ['x4', 'x3', 'x1'],
        latestId: es[3]!.id,
        latestAt: T,
      });
      let g = (await view.page('dee', null, 1))!.groups[0]!;
      expect([g.actorCount, g.actors]).toEqual([3, ['x4', 'x3', 'x1']]);
      expect(await view.remove(es[0]!)).toBe('ok'); // two actors left, both shown
      expect(await view.remove(es[3]!)).toBe('refill'); // the newest event left: the group's place comes from the store
      g = (await view.page('dee', null, 1))!.groups[0]!;
      expect([g.actorCount, g.actors]).toEqual([1, ['x3']]);
      expect(await view.remove(es[2]!)).toBe('ok');
      expect((await view.page('dee', null, 5))!.groups).toEqual([]);
    });

    it('stays bounded: the oldest groups leave and the view says it was truncated', async () => {
      const view = await open(3);
      await ready(view, 'eve');
      for (let i = 0; i < 5; i++) await view.add(ev('eve', 'z', `q${i}`));
      const page = (await view.page('eve', null, 10))!;
      expect(page.groups.map((g) => g.itemId)).toEqual(['q4', 'q3', 'q2']);
      expect(page.truncated).toBe(true);
    });

    it('a rebuild raced by a write does not complete; the next one does', async () => {
      const view = await open(10);
      const token = await view.beginRebuild('fay');
      expect(await view.add(ev('fay', 'w', 'p1'))).toBe(false);
      expect(await view.completeRebuild('fay', token, [], false)).toBe(false);
      expect(await view.page('fay', null, 5)).toBeNull();
      const again = await view.beginRebuild('fay');
      const g: NotificationGroup = {
        groupKey: groupKey('like', 'p1', T, DAY),
        type: 'like',
        itemId: 'p1',
        actors: ['w'],
        actorCount: 1,
        latestId: 7,
        latestAt: T,
      };
      expect(await view.completeRebuild('fay', again, [g], false)).toBe(true);
      expect((await view.page('fay', null, 5))!.groups).toEqual([g]);
      await view.forget('fay');
      expect(await view.page('fay', null, 5)).toBeNull();
    });
  });
}
