/**
 * Grouped notifications over HTTP, on both store pairs (PGlite + in-process, PostgreSQL + Redis): likes,
 * a follow and a reply become grouped notifications of the author with exact counts and actors; a like
 * moves its group to the top once; an unlike within the window takes it back; a blocked actor never
 * notifies; the grouped view lost is rebuilt equal to the SQL truth; markers move forward only (unless
 * forced) and give the unread count; bad input is refused naming the field, with nothing stored.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FreshetClient } from '../../src/client/index.js';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';
import { failure } from '../support/client.js';

const setups = [
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const;

describe.each(setups)('notifications on $name', ({ hot, db }) => {
  let t: TestApp;
  let svc: FreshetClient;
  let n = 0;
  /** This test's author and their post. */
  let bob: string;
  let post: string;

  beforeAll(async () => {
    t = await startTestApp({ hot, db });
    svc = t.client();
  });
  afterAll(async () => t?.close());
  beforeEach(async () => {
    n++;
    bob = `bob${n}`;
    post = `post${n}`;
    t.clock.set(T0);
    await svc.users.register(bob);
    expect(await svc.items.publish([item(post, HOUR_MS, { author_id: bob })])).toMatchObject({ inserted: 1 });
  });

  const like = (reader: string, itemId = post) => svc.as(reader).engagements.record({ item_id: itemId, kind: 'like' });
  const feed = (limit = 20, maxId?: string) => svc.as(bob).notifications.page({ limit, ...(maxId ? { maxId } : {}) });
  const summary = (groups: Awaited<ReturnType<typeof feed>>['groups']) =>
    groups.map((g) => [g.type, g.item_id, g.actor_count, g.actors]);

  it('3 likes, a follow and a reply are 3 groups with exact counts and actors; a 4th like moves its group to the top once', async () => {
    for (const r of ['al', 'bo', 'cy']) {
      await like(`${r}${n}`);
      t.clock.advance(1000);
    }
    await svc.follows.follow(`dee${n}`, bob);
    t.clock.advance(1000);
    await svc.as(`eve${n}`).engagements.record({ item_id: post, kind: 'reply' });
    let page = await feed();
    expect(summary(page.groups)).toEqual([
      ['reply', post, 1, [`eve${n}`]],
      ['follow', null, 1, [`dee${n}`]],
      ['like', post, 3, [`cy${n}`, `bo${n}`, `al${n}`]],
    ]);
    expect([page.unread_count, page.groups.every((g) => !g.read)]).toEqual([3, true]);
    await like(`fox${n}`);
    await like(`fox${n}`); // idempotent: counted once
    page = await feed();
    expect(summary(page.groups)[0]).toEqual(['like', post, 4, [`fox${n}`, `cy${n}`, `bo${n}`]]);
    expect(page.groups.filter((g) => g.type === 'like')).toHaveLength(1);
  });

  it('an unlike within the window decrements its group; nobody is notified of their own like; a blocked or muted liker never appears', async () => {
    await like(`al${n}`);
    await like(`bo${n}`);
    await svc.as(`al${n}`).engagements.undo(post, 'like');
    await like(bob); // the author's own like
    await svc.users.register(`mal${n}`);
    await svc.blocks.block(bob, `mal${n}`);
    await like(`mal${n}`);
    await svc.users.setPreferences(bob, { muted_authors: [{ author_id: `mut${n}` }] });
    await like(`mut${n}`);
    const page = await feed();
    expect(summary(page.groups)).toEqual([['like', post, 1, [`bo${n}`]]]);
  });

  it('a batch of engagements notifies as single ones do: once per liker and group, not of own or blocked likes', async () => {
    const other = `other${n}`;
    expect(await svc.items.publish([item(other, 2 * HOUR_MS, { author_id: bob })])).toMatchObject({ inserted: 1 });
    await feed(); // the grouped view is built: the batch's events are counted into it, not rebuilt from PostgreSQL
    const batch = (reader: string, ...items: string[]) =>
      svc.as(reader).engagements.recordBatch(items.map((item_id) => ({ item_id, kind: 'like' as const })));
    await batch(`al${n}`, post, other, post); // the repeat is not new
    await batch(`bo${n}`, post);
    await batch(`al${n}`, post); // idempotent
    await batch(bob, post, other); // the author's own likes
    await svc.users.register(`mal${n}`);
    await svc.blocks.block(bob, `mal${n}`);
    await batch(`mal${n}`, post, other);
    const page = await feed();
    expect(summary(page.groups)).toEqual([
      ['like', post, 2, [`bo${n}`, `al${n}`]],
      ['like', other, 1, [`al${n}`]],
    ]);
    await t.f.notifications.notifications.forgetView(bob); // rebuilt from PostgreSQL: the same groups
    expect(summary((await feed()).groups)).toEqual(summary(page.groups));
  });

  it('the grouped view lost is rebuilt from PostgreSQL, equal to the truth, unread count included', async () => {
    for (let i = 0; i < 5; i++) await like(`r${i}_${n}`);
    await svc.follows.follow(`f${n}`, bob);
    const before = await feed();
    await svc.markers.setNotifications(bob, before.groups[1]!.latest_id);
    const marked = await feed();
    await t.f.notifications.notifications.forgetView(bob); // what losing Redis does to this recipient
    const after = await feed();
    expect(after).toEqual(marked);
    expect([after.unread_count, after.groups.map((g) => g.read)]).toEqual([1, [false, true]]);
  });

  it('pages newest first with max_id, each group once, the last page saying next_max_id null', async () => {
    const items = Array.from({ length: 7 }, (_, i) => item(`${post}_x${i}`, HOUR_MS, { author_id: bob }));
    await svc.items.publish(items);
    for (const it of items) {
      await like(`pg${n}`, it.id);
      t.clock.advance(1000);
    }
    const seen: string[] = [];
    let maxId: string | undefined;
    for (let i = 0; i < 5; i++) {
      const page = await feed(3, maxId);
      seen.push(...page.groups.map((g) => g.item_id!));
      if (page.next_max_id === null) break;
      maxId = page.next_max_id;
    }
    expect(seen).toEqual(items.map((it) => it.id).reverse());
  });

  it('markers: two devices racing end at the newer one; force moves it back; GET /users/:id/markers has the unread count', async () => {
    await like(`m1${n}`);
    const older = (await feed()).groups[0]!.latest_id;
    await svc.as(`m2${n}`).engagements.record({ item_id: post, kind: 'share' });
    const newer = (await feed()).groups[0]!.latest_id;
    await Promise.all([svc.markers.setNotifications(bob, newer), svc.markers.setNotifications(bob, older)]);
    expect((await svc.markers.get(bob)).notifications).toMatchObject({ last_read_id: newer, unread_count: 0 });
    expect(await svc.markers.setNotifications(bob, older, { force: true })).toMatchObject({
      moved: true,
      last_read_id: older,
      unread_count: 1,
    });
    const token = await t.token(bob);
    const own = t.client({ token });
    expect((await own.markers.get(bob)).notifications.unread_count).toBe(1);
    expect(await failure(own.markers.get(`someone_else${n}`))).toMatchObject({ status: 403, code: 40301 });
  });

  it('an application notification (mention, app.<name>) is delivered and grouped; bad input is 400 naming the field, nothing stored', async () => {
    const sent = await svc.notifications.send({
      recipient_id: bob,
      type: 'app.order_shipped',
      actor_id: 'shop',
      data: { order: 42 },
    });
    expect(sent).toMatchObject({ delivered: true });
    await svc.notifications.send({ recipient_id: bob, type: 'mention', actor_id: `men${n}`, item_id: post });
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ recipient_id: bob, type: 'like', actor_id: 'x' }, /^type /],
      [{ recipient_id: bob, type: 'poke', actor_id: 'x' }, /^type /],
      [{ recipient_id: bob, type: 'mention', actor_id: bob }, /^actor_id /],
      [{ recipient_id: bob, type: 'mention', actor_id: 'x', data: { big: 'y'.repeat(5000) } }, /^data /],
    ];
    for (const [body, msg] of bad) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/notifications',
        payload: body,
        headers: { authorization: `Bearer ${SERVICE_KEY}` },
      });
      expect([res.statusCode, res.json().code, res.json().msg]).toEqual([400, 40001, expect.stringMatching(msg)]);
    }
    const newest = (await feed()).groups[0]!.latest_id;
    for (const [value, msg] of [
      [String(Number(newest) + 1), /above the newest notification id/],
      ['abc', /last_read_id/],
    ] as const) {
      const res = await t.app.inject({
        method: 'PUT',
        url: `/v1/users/${bob}/markers/notifications`,
        payload: { last_read_id: value },
        headers: { authorization: `Bearer ${SERVICE_KEY}` },
      });
      expect([res.statusCode, res.json().code, res.json().msg]).toEqual([400, 40001, expect.stringMatching(msg)]);
    }
    const page = await feed();
    expect(summary(page.groups)).toEqual([
      ['mention', post, 1, [`men${n}`]],
      ['app.order_shipped', null, 1, ['shop']],
    ]);
    expect((await svc.markers.get(bob)).notifications.last_read_id).toBe('0');
  });

  it("an application notification's data is in the feed (its group's newest event's), as in the export; Freshet's own groups have none", async () => {
    await svc.notifications.send({
      recipient_id: bob,
      type: 'app.order_shipped',
      actor_id: 'shop',
      data: { order: 41 },
    });
    t.clock.set(T0 + 60_000);
    await svc.notifications.send({
      recipient_id: bob,
      type: 'app.order_shipped',
      actor_id: 'shop2',
      data: { order: 42, lines: ['a', 'b'] },
    });
    await svc.notifications.send({
      recipient_id: bob,
      type: 'mention',
      actor_id: `men${n}`,
      item_id: post,
      data: 'hi',
    });
    await svc.notifications.send({ recipient_id: bob, type: 'app.ping', actor_id: 'shop' });
    await like(`liker${n}`);
    const groups = (await feed()).groups;
    const byType = Object.fromEntries(groups.map((g) => [g.type, g]));
    expect(byType['app.order_shipped']).toMatchObject({ actor_count: 2, data: { order: 42, lines: ['a', 'b'] } });
    expect(byType.mention).toMatchObject({ data: 'hi' });
    expect(byType['app.ping']!.data).toBeNull(); // sent without data
    expect('data' in byType.like!).toBe(false);
    // the rebuilt view answers the same
    await t.f.notifications.notifications.forgetView(bob);
    expect((await feed()).groups.find((g) => g.type === 'app.order_shipped')?.data).toEqual({
      order: 42,
      lines: ['a', 'b'],
    });
  });

  it('the retention sweep deletes events past FRESHET_NOTIFICATION_RETENTION_DAYS and keeps the newer ones', async () => {
    await like(`old${n}`);
    t.clock.advance(80 * 86_400_000);
    await like(`new${n}`);
    t.clock.advance(11 * 86_400_000); // the first like is 91 days old, the second 11
    expect(await t.f.notifications.notifications.prune(t.clock.now())).toBeGreaterThanOrEqual(1);
    const rows = await t.sql.query<{ actor_id: string }>(
      'SELECT actor_id FROM notification_events WHERE recipient_id = $1',
      [bob],
    );
    expect(rows.map((r) => r.actor_id)).toEqual([`new${n}`]);
  });
});
