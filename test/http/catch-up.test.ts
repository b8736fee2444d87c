/**
 * Catch up where you left off (docs/following.md "Catch-up"), on both store pairs: the following marker moves
 * forward only (two devices racing end at the newer one; `force` moves it back), the unread count is what a
 * read would show above it (deleted, blocked and muted entries left out), and a reader
 * 300 entries behind reads them oldest first, each exactly once, while 100 more are published during the scroll.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FreshetClient } from '../../src/client/index.js';
import { SERVICE_KEY, T0, startTestApp, type TestApp } from '../support/app.js';
import { MIN, publish, settle, withWorker } from '../support/following.js';

const setups = [
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const;

describe.each(setups)('catch-up on $name', ({ hot, db }) => {
  let t: TestApp;
  let svc: FreshetClient;
  let n = 0;
  let now = T0;
  const ids = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, i) => `${prefix}_${String(i).padStart(4, '0')}`);
  /** Publishes `count` items of `author` in one request a minute later, waits for fan-out; returns the ids in timeline order. */
  const post = async (author: string, prefix: string, count: number): Promise<string[]> => {
    const batch = ids(prefix, count);
    now += MIN;
    for (let i = 0; i < batch.length; i += 100) await publish(t, author, batch.slice(i, i + 100), now);
    await settle(t);
    return batch;
  };

  beforeAll(async () => {
    t = withWorker(await startTestApp({ hot, db }));
    svc = t.client({ now: () => now });
  });
  afterAll(async () => t?.close());

  /** A reader following `author`, with a marker on the newest of 5 read items. */
  async function readerWithMarker(): Promise<{ reader: string; author: string; rd: FreshetClient }> {
    n++;
    const reader = `cr${n}`;
    const author = `ca${n}`;
    await svc.users.register(author);
    await svc.follows.follow(reader, author);
    await post(author, `old${n}`, 5);
    const rd = svc.as(reader);
    const top = (await rd.following.page({ limit: 5 })).items[0]!;
    expect((await svc.markers.setFollowing(reader, top.timeline_id)).moved).toBe(true);
    return { reader, author, rd };
  }

  it('a reader 300 entries behind catches up oldest first, each entry once, while 100 more arrive; unread goes 300 → 0', async () => {
    const { reader, author, rd } = await readerWithMarker();
    const behind = await post(author, `b${n}`, 300);
    expect((await svc.markers.get(reader)).following).toMatchObject({ unread_count: 300, unread_capped: false });
    const late: string[] = [];
    const read: string[] = [];
    let page = await rd.following.catchUp({ limit: 25 });
    for (let round = 0; round < 40; round++) {
      read.push(...page.items.map((i) => i.id));
      const last = page.items[page.items.length - 1];
      if (last) await svc.markers.setFollowing(reader, last.timeline_id); // the reader's place moves as it reads
      if (round < 4) late.push(...(await post(author, `l${n}_${round}`, 25))); // 100 more during the scroll
      if (page.next_min_id === null) break;
      page = await rd.following.catchUp({ minId: page.next_min_id, limit: 25 });
    }
    expect(read).toEqual([...behind, ...late]);
    expect((await svc.markers.get(reader)).following).toMatchObject({ unread_count: 0 });
  });

  it('counts what a read would show: deleted, blocked and muted entries are not unread', async () => {
    const { reader, author } = await readerWithMarker();
    const fresh = await post(author, `u${n}`, 6);
    await svc.items.delete(fresh[0]!);
    await svc.users.setPreferences(reader, { muted_words: [{ phrase: fresh[1]! }] });
    expect((await svc.markers.get(reader)).following.unread_count).toBe(4);
    await svc.blocks.block(reader, author);
    expect((await svc.markers.get(reader)).following.unread_count).toBe(0);
  });

  it('two devices racing end at the newer marker; force moves it back; bad markers are refused, nothing stored', async () => {
    const { reader, author } = await readerWithMarker();
    await post(author, `m${n}`, 2);
    const page = (await svc.as(reader).following.page({ limit: 2 })).items;
    const [newer, older] = [page[0]!.timeline_id, page[1]!.timeline_id];
    await Promise.all([svc.markers.setFollowing(reader, newer), svc.markers.setFollowing(reader, older)]);
    expect((await svc.markers.get(reader)).following).toMatchObject({ last_read_id: newer, unread_count: 0 });
    expect(await svc.markers.setFollowing(reader, older, { force: true })).toMatchObject({
      moved: true,
      last_read_id: older,
      unread_count: 1,
    });
    for (const [value, msg] of [
      [String(Number(newer) * 2), /^last_read_id \d+ is not a timeline id at or below the newest/],
      ['12ab', /last_read_id/],
    ] as const) {
      const res = await t.app.inject({
        method: 'PUT',
        url: `/v1/users/${reader}/markers/following`,
        payload: { last_read_id: value },
        headers: { authorization: `Bearer ${SERVICE_KEY}` },
      });
      expect([res.statusCode, res.json().code, res.json().msg]).toEqual([400, 40001, expect.stringMatching(msg)]);
    }
    expect((await svc.markers.get(reader)).following.last_read_id).toBe(older);
  });
});
