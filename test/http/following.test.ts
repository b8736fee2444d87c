/**
 * The following timeline over HTTP, on both store pairs (in-process + PGlite, Redis + BullMQ +
 * PostgreSQL): every read rule of note 4 — push into every inbox that exists (whatever the publisher's
 * clock), celebrity merge, regeneration of a cold reader's inbox, trimming with a PostgreSQL fallback,
 * paging under concurrent publishes and late arrivals, unfollow / block / delete, follow backfill — each checked against the SQL truth.
 * Small limits make every rule reachable: celebrity above 3 followers, inboxes of 12, backfill 5, chunks of 2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { T0, startTestApp, type TestApp } from '../support/app.js';
import {
  DAY,
  MIN,
  follow,
  graphCall,
  page,
  pageAll,
  publish,
  register,
  settle,
  truth,
  withWorker,
} from '../support/following.js';

const ENV = {
  FRESHET_CELEBRITY_THRESHOLD: '3',
  FRESHET_INBOX_LENGTH: '12',
  FRESHET_OUTBOX_LENGTH: '12',
  FRESHET_FOLLOW_BACKFILL: '5',
  FRESHET_FANOUT_CHUNK: '2',
};

const ids = (prefix: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => `${prefix}${i + from}`);

for (const setup of [
  { name: 'in-process + PGlite', opts: {} },
  { name: 'Redis + BullMQ + PostgreSQL', opts: { hot: 'redis' as const, db: 'postgres' as const } },
]) {
  describe(`following timeline: ${setup.name}`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = withWorker(await startTestApp({ ...setup.opts, env: ENV }));
    });
    afterAll(async () => t?.close());

    it('pushes to active followers; a new reader gets a rebuilt, complete first page; pages never repeat', async () => {
      await register(t, 'p_a', 'p_b');
      await follow(t, 'p_r', 'p_a');
      await follow(t, 'p_r', 'p_b');
      expect(await page(t, 'p_r', T0)).toMatchObject({ ids: [], rebuilt: true }); // first read: rebuilt, empty, reader now active
      await publish(t, 'p_a', ['p1', 'p2'], T0 + MIN);
      await publish(t, 'p_b', ['p3'], T0 + 2 * MIN);
      await publish(t, 'p_x', ['p4'], T0 + 2 * MIN); // not followed
      await settle(t);
      const first = await page(t, 'p_r', T0 + 3 * MIN, { limit: 2 });
      expect(first.ids).toEqual(['p3', 'p2']);
      expect(first.rebuilt).toBe(false); // an active reader reads its inbox
      const second = await page(t, 'p_r', T0 + 3 * MIN, { limit: 2, max_id: first.next! });
      expect(second.ids).toEqual(['p1']);
      expect(second.next).toBeNull();
      expect(await pageAll(t, 'p_r', T0 + 3 * MIN, 1)).toEqual(await truth(t, 'p_r'));
      const newer = await page(t, 'p_r', T0 + 3 * MIN, { since_id: first.tids[1]! });
      expect(newer.ids).toEqual(['p3']);
    });

    it('merges celebrities from their outboxes (no push), deduplicated with what was pushed earlier', async () => {
      await register(t, 'c_star');
      await follow(t, 'c_r', 'c_star');
      await page(t, 'c_r', T0); // active
      await publish(t, 'c_star', ['c1'], T0 + MIN); // 1 follower: pushed
      await settle(t);
      for (const f of ['c_f1', 'c_f2', 'c_f3']) await follow(t, f, 'c_star'); // 4 followers > 3: celebrity
      await publish(t, 'c_star', ['c2', 'c3'], T0 + 2 * MIN);
      await settle(t);
      const info = await t.f.following.graph.authorInfo('c_star');
      expect(info.followers).toBe(4);
      expect(info.pullTid).not.toBeNull();
      const [c3] = await t.f.following.index.tidsOf(['c3']);
      const inbox = await t.f.following.store.readInbox('c_r', { hi: Infinity, lo: 0, count: 100 });
      expect(inbox.tids).not.toContain(c3); // pulled, not pushed
      expect((await page(t, 'c_r', T0 + 3 * MIN)).ids).toEqual(['c3', 'c2', 'c1']);
      expect(await pageAll(t, 'c_r', T0 + 3 * MIN, 1)).toEqual(['c3', 'c2', 'c1']);
    });

    it('a cold reader (inactive beyond 7 days) gets its inbox regenerated on the next read, complete', async () => {
      await register(t, 'g_a');
      await follow(t, 'g_r', 'g_a');
      await page(t, 'g_r', T0); // active at T0
      await publish(t, 'g_a', ['g1'], T0 + MIN);
      await settle(t);
      const later = T0 + 8 * DAY; // cold now
      t.clock.set(later); // a week passes (times past the clock + FRESHET_FUTURE_SKEW_S are refused)
      await publish(t, 'g_a', ['g2', 'g3'], later);
      await settle(t);
      expect(await page(t, 'g_r', later + MIN)).toMatchObject({ ids: ['g3', 'g2', 'g1'], rebuilt: true }); // complete on the first read
      await publish(t, 'g_a', ['g4'], later + 2 * MIN); // active again: pushed
      await settle(t);
      const [g4] = await t.f.following.index.tidsOf(['g4']);
      expect((await t.f.following.store.readInbox('g_r', { hi: Infinity, lo: 0, count: 100 })).tids).toContain(g4);
      t.clock.set(T0);
    });

    it("an inbox a read trusts holds every item, whatever the publisher's clock says (both sides of the active window)", async () => {
      // The reader reads at T0; items are published at T0 + 7 days (the edge of its active window) and 1 ms
      // past it, by a publisher whose clock runs ahead of the reader's server. A read at T0 + 1 min trusts
      // the inbox (the reader is active by its own clock): both items must be in it.
      await register(t, 'w_a');
      await follow(t, 'w_r', 'w_a');
      expect((await page(t, 'w_r', T0)).rebuilt).toBe(true);
      t.clock.set(T0 + 7 * DAY + MIN);
      await publish(t, 'w_a', ['w1'], T0 + 7 * DAY);
      await publish(t, 'w_a', ['w2'], T0 + 7 * DAY + 1);
      await settle(t);
      expect(await page(t, 'w_r', T0 + MIN)).toMatchObject({ ids: ['w2', 'w1'], rebuilt: false });
      expect(await page(t, 'w_r', T0 + 7 * DAY + 2)).toMatchObject({ ids: ['w2', 'w1'], rebuilt: true }); // cold by its own clock now
      expect(await pageAll(t, 'w_r', T0 + 7 * DAY + 3, 1)).toEqual(await truth(t, 'w_r'));
      t.clock.set(T0);
    });

    it('trims inboxes to their length and finishes deep pages from PostgreSQL', async () => {
      await register(t, 'd_a', 'd_b');
      await follow(t, 'd_r', 'd_a');
      await follow(t, 'd_r', 'd_b');
      await page(t, 'd_r', T0);
      for (let i = 0; i < 15; i++) await publish(t, i % 2 ? 'd_a' : 'd_b', [`d${i}`], T0 + (i + 1) * MIN);
      await settle(t);
      const inbox = await t.f.following.store.readInbox('d_r', { hi: Infinity, lo: 0, count: 100 });
      expect(inbox.tids).toHaveLength(12);
      expect(inbox.floor).toBeGreaterThan(0);
      const all = await pageAll(t, 'd_r', T0 + 20 * MIN, 5);
      expect(all).toEqual(ids('d', 15).reverse());
      expect(all).toEqual(await truth(t, 'd_r'));
    });

    it('follow backfills the newest items (floor below them); unfollow and block remove them; delete hides lazily', async () => {
      await register(t, 'f_a', 'f_b');
      await page(t, 'f_r', T0); // active, empty inbox
      await publish(t, 'f_a', ids('fa', 8), T0 + MIN);
      await publish(t, 'f_b', ['fb0', 'fb1'], T0 + 2 * MIN);
      await settle(t);
      await follow(t, 'f_r', 'f_a', T0 + 3 * MIN);
      await follow(t, 'f_r', 'f_b', T0 + 3 * MIN);
      const inbox = await t.f.following.store.readInbox('f_r', { hi: Infinity, lo: 0, count: 100 });
      expect(inbox.tids.length).toBe(7); // 5 of f_a (backfill) + 2 of f_b
      expect(await pageAll(t, 'f_r', T0 + 4 * MIN, 3)).toEqual(['fb1', 'fb0', ...ids('fa', 8).reverse()]); // older ones from SQL
      const del = await t.app.inject({
        method: 'DELETE',
        url: '/v1/items/fa7',
        headers: { authorization: 'Bearer test-service-key-0123456789' },
      });
      expect(del.statusCode).toBe(200);
      expect((await page(t, 'f_r', T0 + 5 * MIN, { limit: 3 })).ids).toEqual(['fb1', 'fb0', 'fa6']);
      const [fa7] = await t.f.following.index.tidsOf(['fa7']);
      expect((await t.f.following.store.readInbox('f_r', { hi: Infinity, lo: 0, count: 100 })).tids).not.toContain(fa7); // lazily removed
      expect((await graphCall(t, 'DELETE', '/v1/users/f_r/following/f_b')).json().data).toMatchObject({
        following: false,
        removed: true,
      });
      expect((await page(t, 'f_r', T0 + 6 * MIN, { limit: 2 })).ids).toEqual(['fa6', 'fa5']);
      expect((await graphCall(t, 'PUT', '/v1/users/f_r/blocks/f_a')).json().data).toMatchObject({
        blocking: true,
        created: true,
      });
      expect((await page(t, 'f_r', T0 + 7 * MIN)).ids).toEqual([]);
      expect((await t.f.following.store.readInbox('f_r', { hi: Infinity, lo: 0, count: 100 })).tids).toEqual([]);
      expect(await truth(t, 'f_r')).toEqual([]);
    });

    it('paging never skips or repeats while items are published meanwhile, late arrivals included (they come on top)', async () => {
      await register(t, 'l_a', 'l_b');
      await follow(t, 'l_r', 'l_a');
      await follow(t, 'l_r', 'l_b');
      await page(t, 'l_r', T0);
      for (let i = 0; i < 10; i++) await publish(t, i % 2 ? 'l_a' : 'l_b', [`l${i}`], T0 + (i + 1) * MIN);
      await settle(t);
      const seen: string[] = [];
      let p = await page(t, 'l_r', T0 + 20 * MIN, { limit: 3 });
      const top = p.tids[0]!;
      let round = 0;
      while (true) {
        seen.push(...p.ids);
        // meanwhile: a new item, and a late one whose published_at is older than everything paged so far
        await publish(t, 'l_a', [`lnew${round}`], T0 + (21 + round) * MIN);
        await publish(t, 'l_b', [`llate${round}`], T0 + (21 + round) * MIN, T0 - DAY);
        await settle(t);
        round++;
        if (!p.next) break;
        p = await page(t, 'l_r', T0 + 30 * MIN, { limit: 3, max_id: p.next });
      }
      expect(seen).toEqual(ids('l', 10).reverse()); // the pass down: complete, no repeats
      const fresh = await pageAll(t, 'l_r', T0 + 40 * MIN, 50);
      const newer: string[] = [];
      for (let q = await page(t, 'l_r', T0 + 40 * MIN, { since_id: top, limit: 2 }); ; ) {
        newer.push(...q.ids);
        if (!q.next) break;
        q = await page(t, 'l_r', T0 + 40 * MIN, { since_id: top, limit: 2, max_id: q.next });
      }
      expect(new Set(newer)).toEqual(
        new Set(Array.from({ length: round }, (_, i) => [`lnew${i}`, `llate${i}`]).flat()),
      );
      expect(fresh).toEqual([...newer, ...seen]);
      expect(fresh).toEqual(await truth(t, 'l_r'));
    });

    it('a concurrent burst: parallel publishes and reads end exactly at the SQL truth', async () => {
      const authors = ids('b_a', 5);
      await register(t, ...authors);
      for (const a of authors) await follow(t, 'b_r', a);
      await page(t, 'b_r', T0);
      await Promise.all([
        ...authors.map((a, k) => publish(t, a, ids(`b${k}_`, 6), T0 + MIN)),
        ...Array.from({ length: 5 }, () => page(t, 'b_r', T0 + MIN, { limit: 4 })),
      ]);
      await settle(t);
      const all = await pageAll(t, 'b_r', T0 + 2 * MIN, 4);
      expect(all).toHaveLength(30);
      expect(all).toEqual(await truth(t, 'b_r'));
    });
  });
}
