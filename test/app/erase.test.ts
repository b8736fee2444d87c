/**
 * Erase and export a user (GDPR Art. 17, 15/20; src/app/personal-data.ts), on both store pairs: a user with a
 * full history — items, follows both ways, blocks both ways, views, a like, feedback, preferences (and a
 * reader who mutes them), interests, an inbox, a discover seen filter, a for-you page, notifications, a
 * checkpoint — is exported (the document validates against the published schema and equals what the API
 * shows), then erased: no PostgreSQL row and no Redis key (name or value, every master) and no file of the
 * data folder holds their id afterwards, except the documented hashed structures; the follower counts of the
 * users they followed are exact; their items are gone from another reader's feeds. An erase that fails at any
 * step and is run again ends in the same state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import AjvModule from 'ajv';
import type { FreshetClient } from '../../src/client/index.js';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { SERVICE_KEY, T0, item, startTestApp, type TestApp } from '../support/app.js';
import { failure } from '../support/client.js';
import { settle, withWorker } from '../support/following.js';
import { fileTraces, redisTraces, sqlTraces } from '../support/traces.js';

const Ajv = AjvModule as unknown as typeof AjvModule.default;

const setups = [
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const;

describe.each(setups)('erase and export on $name', ({ hot, db }) => {
  let t: TestApp;
  let svc: FreshetClient;

  beforeAll(async () => {
    t = withWorker(await startTestApp({ hot, db }));
    svc = t.client();
    const others = ['au1', 'au2', 'fa1', 'fa2', 'bk1', 'bk2', 'mu1'];
    for (const u of others) await svc.users.register(u);
    await svc.items.publish([
      item('o_1', HOUR_MS, { author_id: 'au1', title: 'rust compilers' }),
      item('o_2', 2 * HOUR_MS, { author_id: 'au2', title: 'bloom filters' }),
      item('o_3', 3 * HOUR_MS, { author_id: 'au1', title: 'postgres tuning' }),
    ]);
  });
  afterAll(async () => t?.close());

  /** A user with a full history (see the module doc); returns their items' ids. */
  async function fullHistory(u: string): Promise<string[]> {
    await svc.users.register(u);
    const tag = Math.floor(Math.random() * 1e9);
    const mine = [`ep${tag}a`, `ep${tag}b`]; // item ids of their own, not holding the user id
    await svc.items.publish(mine.map((id, i) => item(id, (i + 1) * 60_000, { author_id: u, title: `my post ${i}` })));
    await svc.follows.follow(u, 'au1');
    await svc.follows.follow(u, 'au2');
    await svc.follows.follow('fa1', u);
    await svc.follows.follow('fa2', u);
    await svc.blocks.block(u, 'bk1');
    await svc.blocks.block('bk2', u);
    await settle(t);
    const rd = t.client({ token: await t.token(u) });
    for (const id of ['o_1', 'o_2', 'o_3']) await rd.views.record({ item_id: id });
    await rd.engagements.record({ item_id: 'o_1', kind: 'like' });
    await svc.as('fa1').engagements.record({ item_id: mine[0]!, kind: 'like' });
    await rd.feedback.notInterested('o_2');
    await svc.users.setPreferences(u, { muted_words: [{ phrase: 'secret word' }] });
    await svc.users.setPreferences('mu1', { muted_authors: [{ author_id: u }, { author_id: 'au2' }] });
    await svc.users.setInterests(u, ['rust', 'postgres']);
    await rd.following.page({ limit: 20 });
    await rd.discover.page(null, { limit: 5 });
    await rd.forYou.refresh({ limit: 2 });
    await svc.as('fa1').following.page({ limit: 20 });
    const groups = await rd.notifications.page();
    if (groups.groups[0]) await svc.markers.setNotifications(u, groups.groups[0].latest_id);
    const tl = (await rd.following.page({ limit: 1 })).items[0];
    if (tl) await svc.markers.setFollowing(u, tl.timeline_id);
    await t.f.seenCheckpointer?.checkpoint();
    return mine;
  }

  it('exports what the API shows, valid against the published schema; 404 for a stranger, 403 for another reader', async () => {
    const u = `zq_exp_${hot}`;
    const mine = await fullHistory(u);
    const res = await t.app.inject({
      method: 'GET',
      url: `/v1/users/${u}/export`,
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
    });
    expect(res.statusCode).toBe(200);
    const doc = res.json().data;
    const spec = (await t.app.inject({ url: '/docs/json' })).json();
    const schema =
      spec.paths['/v1/users/{id}/export'].get.responses['200'].content['application/json'].schema.properties.data;
    const validate = new Ajv({ strict: false }).compile(schema);
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc.following.map((e: { id: string }) => e.id).sort()).toEqual(['au1', 'au2']);
    expect(doc.followers.map((e: { id: string }) => e.id).sort()).toEqual(['fa1', 'fa2']);
    expect(doc.blocks.map((e: { id: string }) => e.id)).toEqual(['bk1']);
    expect(doc.engagements).toEqual([expect.objectContaining({ item_id: 'o_1', kind: 'like' })]);
    expect(doc.feedback).toEqual([
      expect.objectContaining({ item_id: 'o_2', kind: 'not_interested', author_id: 'au2' }),
    ]);
    expect(doc.interests).toEqual(await svc.users.interests(u).then((r) => r.terms));
    expect({ reader_id: u, ...doc.preferences }).toEqual(await svc.users.preferences(u));
    expect(doc.items.map((i: { id: string }) => i.id).sort()).toEqual([...mine].sort());
    expect(doc.notifications.map((e: { type: string; actor_id: string }) => `${e.type}:${e.actor_id}`).sort()).toEqual([
      'follow:fa1',
      'follow:fa2',
      'like:fa1',
    ]);
    const stranger = await t.app.inject({
      method: 'GET',
      url: '/v1/users/nobody_at_all/export',
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
    });
    expect([stranger.statusCode, stranger.json().code]).toEqual([404, 40401]);
    const other = t.client({ token: await t.token('fa1') });
    expect((await failure(other.users.export(u))).status).toBe(403);
  });

  it('erases everything: no row, key, value or file holds the id; follower counts exact; their items leave every feed', async () => {
    const u = `zq_erase_${hot}`;
    const mine = await fullHistory(u);
    const before = await t.sql.query<{ id: string; followers: number }>(
      "SELECT id, followers FROM users WHERE id IN ('au1', 'au2') ORDER BY id",
    );
    const erased = await svc.users.erase(u);
    expect(erased.removed.graph).toMatchObject({ following: 2, followers: 2, blocks: 2, user: 1 });
    expect(erased.removed.items).toEqual({ items: 2 });
    expect(erased.kept.length).toBeGreaterThan(0);
    expect(await sqlTraces(t.sql, u)).toEqual({});
    if (hot === 'redis') expect(await redisTraces(t.f.redis!.redis, t.config.keyPrefix, u)).toEqual([]);
    const after = await t.sql.query<{ id: string; followers: number }>(
      "SELECT id, followers FROM users WHERE id IN ('au1', 'au2') ORDER BY id",
    );
    expect(after.map((r) => r.followers)).toEqual(before.map((r) => r.followers - 1));
    const mu1 = await svc.users.preferences('mu1');
    expect(mu1.muted_authors.map((m) => m.author_id)).toEqual(['au2']);
    // their items are gone from another reader's feeds
    const fa1 = svc.as('fa1');
    const shown = [
      ...(await fa1.following.page({ limit: 50 })).items.map((i) => i.id),
      ...(await fa1.forYou.refresh({ limit: 50 })).items.map((i) => i.id),
      ...(await fa1.discover.page(null, { limit: 50 })).items.map((i) => i.id),
    ];
    for (const id of mine) expect(shown).not.toContain(id);
    expect((await fa1.notifications.page()).groups).toEqual([]); // fa1 liked u's item: fa1 got nothing; u's view of it is gone
    // idempotent
    const again = await svc.users.erase(u);
    expect(again.removed.graph).toMatchObject({ following: 0, followers: 0, blocks: 0, user: 0 });
  });

  it('an erase that fails at any step, run again, ends in the same state', async () => {
    const personal = (t.f.useCases as unknown as { deps: { personal: Record<string, Record<string, unknown>> } }).deps
      .personal;
    const steps: [string, string][] = [
      ['graph', 'forgetUser'],
      ['timeline', 'forgetUser'],
      ['exclusions', 'forgetUser'],
      ['readerSeen', 'forget'],
      ['embeddings', 'forgetReader'],
      ['hotCounters', 'forgetVisitor'],
    ];
    for (const [room, method] of steps) {
      const u = `zq_fail_${room}_${hot}`;
      await fullHistory(u);
      const target = personal[room]!;
      const real = target[method] as (...a: unknown[]) => Promise<unknown>;
      target[method] = async () => {
        throw new Error(`${room} died`);
      };
      try {
        await expect(t.f.useCases.eraseUser(u, 'delete', T0)).rejects.toThrow(`${room} died`);
      } finally {
        target[method] = real;
      }
      await t.f.useCases.eraseUser(u, 'delete', T0);
      expect(await sqlTraces(t.sql, u), room).toEqual({});
      if (hot === 'redis') expect(await redisTraces(t.f.redis!.redis, t.config.keyPrefix, u), room).toEqual([]);
    }
  });
});

describe('erase on the embedded default, files included', () => {
  it('the data folder keeps no trace once the closing app has written its snapshots', async () => {
    const t = withWorker(await startTestApp());
    const svc = t.client();
    try {
      for (const a of ['fa1', 'au1']) await svc.users.register(a);
      await svc.items.publish([item('f_1', HOUR_MS, { author_id: 'au1' })]);
      const u = 'zq_files_memory';
      await svc.users.register(u);
      await svc.follows.follow(u, 'au1');
      const rd = t.client({ token: await t.token(u) });
      await rd.discover.page(null, { limit: 5 });
      await rd.views.record({ item_id: 'f_1' });
      await svc.users.erase(u);
      await t.f.close(); // a clean stop writes every snapshot of the data folder
      expect(fileTraces(t.config.dataDir, u)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
