/**
 * Erase and export a user (GDPR Art. 17, 15/20; src/use-cases/personal-data.ts), on both store pairs: a user with a
 * full history — items, follows both ways, blocks both ways, views, a like, feedback, preferences (and a
 * reader who mutes them), interests, an inbox, a discover seen filter, a for-you page, notifications, a
 * checkpoint — is exported (the document validates against the published schema and equals what the API
 * shows), then erased: no PostgreSQL row and no Redis key (name or value, every master) and no file of the
 * data folder holds their id afterwards, except the documented hashed structures; the follower counts of the
 * users they followed are exact; their items are gone from another reader's feeds. An erase that fails at any
 * step and is run again ends in the same state; so does the real `freshet erase-user` killed with `kill -9`
 * after a random step. The Redis part runs on a 3-master Cluster too (every master
 * scanned).
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import AjvModule from 'ajv';
import type { FreshetClient } from '../../src/client/index.js';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { SERVICE_KEY, T0, embeddedDataDir, item, startTestApp, type TestApp } from '../support/app.js';
import { ERASE_STEPS } from '../../src/use-cases/personal-data.js';
import { embedText, quantize } from '../../src/discover/embedding.js';
import { onJsonLines, spawnCli } from '../support/cli.js';
import { failure } from '../support/client.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/env.js';
import { settle, withWorker } from '../support/following.js';
import { fileCluster } from '../support/redis-cluster.js';
import { fileTraces, redisTraces, sqlTraces, storedVectors, vectorTraces } from '../support/traces.js';

const Ajv = AjvModule as unknown as typeof AjvModule.default;

const cluster = fileCluster();

const setups = [
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite', onCluster: false },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres', onCluster: false },
  // every Redis-backed room on a 3-master Cluster: the keys of one user spread over the masters
  { name: 'PostgreSQL + a Redis Cluster', hot: 'cluster', db: 'postgres', onCluster: true },
] as const;

/** The other users and items every history refers to (`o_1`…`o_3` by au1 and au2). */
async function seedOthers(svc: FreshetClient): Promise<void> {
  for (const u of ['au1', 'au2', 'fa1', 'fa2', 'bk1', 'bk2', 'mu1']) await svc.users.register(u);
  await svc.items.publish([
    item('o_1', HOUR_MS, { author_id: 'au1', title: 'rust compilers' }),
    item('o_2', 2 * HOUR_MS, { author_id: 'au2', title: 'bloom filters' }),
    item('o_3', 3 * HOUR_MS, { author_id: 'au1', title: 'postgres tuning' }),
  ]);
}

/** A user with a full history (see the module doc); returns their items' ids. */
async function fullHistory(t: TestApp, svc: FreshetClient, u: string): Promise<string[]> {
  await svc.users.register(u);
  const tag = Math.floor(Math.random() * 1e9);
  const mine = [`ep${tag}a`, `ep${tag}b`]; // item ids of their own, not holding the user id
  await svc.items.publish(
    mine.map((id, i) => item(id, (i + 1) * 60_000, { author_id: u, title: `my post ${tag} ${i}` })),
  );
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

describe.each(setups)('erase and export on $name', ({ hot, db, onCluster }) => {
  let t: TestApp;
  let svc: FreshetClient;
  /** Where the user's Redis keys live (none on the in-process pair). */
  const onRedis = hot !== 'memory';

  beforeAll(async () => {
    const env = onCluster
      ? {
          FRESHET_KEY_PREFIX: cluster.nextPrefix(),
          FRESHET_REDIS_CLUSTER_NODES: cluster.redis
            .nodes('master')
            .map((m) => `${m.options.host}:${m.options.port}`)
            .join(','),
        }
      : undefined;
    t = withWorker(await startTestApp({ hot: onCluster ? 'memory' : hot, db, ...(env ? { env } : {}) }));
    svc = t.client();
    await seedOthers(svc);
  });
  afterAll(async () => t?.close());

  it('exports what the API shows, valid against the published schema; 404 for a stranger, 403 for another reader', async () => {
    const u = `zq_exp_${hot}`;
    const mine = await fullHistory(t, svc, u);
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

  it('exports a reader who only has preferences (a muted word, a language): not 404', async () => {
    const u = `zq_prefs_${hot}`;
    await svc.users.setPreferences(u, { muted_words: [{ phrase: 'kept word' }], languages: ['en'] });
    const res = await t.app.inject({
      method: 'GET',
      url: `/v1/users/${u}/export`,
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
    });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    const doc = res.json().data;
    expect(doc.preferences.muted_words.map((w: { phrase: string }) => w.phrase)).toEqual(['kept word']);
    expect(doc.preferences.languages).toEqual(['en']);
    expect(doc.profile).toBeNull();
    // once erased, it holds nothing again
    await svc.users.erase(u);
    const gone = await t.app.inject({
      method: 'GET',
      url: `/v1/users/${u}/export`,
      headers: { authorization: `Bearer ${SERVICE_KEY}` },
    });
    expect([gone.statusCode, gone.json().code]).toEqual([404, 40401]);
  });

  it('erases everything: no row, key, value or file holds the id; follower counts exact; their items leave every feed', async () => {
    const u = `zq_erase_${hot}`;
    const mine = await fullHistory(t, svc, u);
    const before = await t.sql.query<{ id: string; followers: number }>(
      "SELECT id, followers FROM users WHERE id IN ('au1', 'au2') ORDER BY id",
    );
    // the user's keys are there to erase (on a Cluster: on more than one master)
    if (onRedis) expect((await redisTraces(t.f.redis!.redis, t.config.keyPrefix, u)).length).toBeGreaterThan(3);
    // and the vectors derived from their items' text (cosine 1 with the titles' embeddings)
    const vectors = await storedVectors(t.sql, mine);
    expect(vectors).toHaveLength(2);
    expect(await vectorTraces(t.sql, null, vectors)).toEqual(mine.map((id) => `item_embeddings ${id}`).sort());
    const erased = await svc.users.erase(u);
    expect(erased.removed.graph).toMatchObject({ following: 2, followers: 2, blocks: 2, user: 1 });
    expect(erased.removed.items).toEqual({ items: 2 });
    expect(erased.kept.length).toBeGreaterThan(0);
    expect(await sqlTraces(t.sql, u)).toEqual({});
    if (onRedis) expect(await redisTraces(t.f.redis!.redis, t.config.keyPrefix, u)).toEqual([]);
    expect(await vectorTraces(t.sql, t.config.dataDir, vectors)).toEqual([]);
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
      // inside the items step: the hot counters of the user's items go before the items are tombstoned
      ['hot', 'itemDeleted'],
      ['graph', 'forgetUser'],
      ['timeline', 'forgetUser'],
      ['exclusions', 'forgetUser'],
      ['readerSeen', 'forget'],
      ['embeddings', 'forgetReader'],
      ['hotCounters', 'forgetVisitor'],
    ];
    for (const [room, method] of steps) {
      const u = `zq_fail_${room}_${hot}`;
      const mine = await fullHistory(t, svc, u);
      const vectors = await storedVectors(t.sql, mine);
      const counters = () => t.f.hotCounters.counters(mine);
      await svc.views.record({ item_id: mine[0]!, visitor_id: 'fa2' }); // their item is in the hot counters
      expect((await counters())[0]!.publishedAtMs).not.toBeNull();
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
      if (onRedis) expect(await redisTraces(t.f.redis!.redis, t.config.keyPrefix, u), room).toEqual([]);
      expect(await vectorTraces(t.sql, t.config.dataDir, vectors), room).toEqual([]);
      // no counter of their items is left behind by an item already reassigned to the erased author
      expect(await counters(), room).toEqual(mine.map(() => expect.objectContaining({ publishedAtMs: null })));
    }
  });

  it("deleting one item drops its vector: no row keeps the text's embedding, and the item's row keeps no text", async () => {
    const id = `zq_del_${hot}`;
    await svc.items.publish([item(id, HOUR_MS, { author_id: 'au1', title: 'a title to forget', text: 'its body' })]);
    const vectors = await storedVectors(t.sql, [id]);
    expect(vectors).toHaveLength(1);
    await svc.items.delete(id);
    expect(await vectorTraces(t.sql, null, vectors)).toEqual([]);
    // the row stays (empty) so every in-process index hears of the delete; discover never serves it
    const [row] = await t.sql.query<{ n: number }>(
      'SELECT octet_length(vec) AS n FROM item_embeddings WHERE item_id = $1',
      [id],
    );
    expect(Number(row?.n ?? 0)).toBe(0);
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

  // at the describe's level: its folder is removed after the file (an afterAll inside a test never runs)
  const folder = embeddedDataDir();
  it("the vector index's snapshot on disk holds their items' vectors before the erase, none after it (no restart)", async () => {
    const u = 'zq_snap_memory';
    let f = await folder.open();
    const publish = (items: ReturnType<typeof item>[]) =>
      f.useCases.publishItems(
        items.map((i) => ({
          ...i,
          authorId: i.author_id,
          publishedAt: i.published_at * 1000,
          url: null,
          tags: [],
          popularity: 0,
        })),
        T0,
      );
    await publish([
      item('sn_a', HOUR_MS, { author_id: u, title: 'snapshot secret alpha', text: 'words of the erased' }),
      item('sn_b', HOUR_MS, { author_id: u, title: 'snapshot secret beta', text: 'more words of theirs' }),
      item('sn_c', HOUR_MS, { author_id: 'sn_other', title: 'kept by another author', text: 'stays' }),
    ]);
    await f.discover.vectors.sync(); // the index holds them
    // the vectors of their text, as the built-in embedder made them
    const vectors = [
      ['snapshot secret alpha', 'words of the erased'],
      ['snapshot secret beta', 'more words of theirs'],
    ].map(([title, text]) => quantize(embedText({ title: title!, text: text!, tags: [] }, f.discover.vectors.dim)));
    await f.close(); // the private index writes its snapshot (discover-index/<generation>/codes.i8)
    f = await folder.open();
    try {
      expect((await vectorTraces(null, folder.dataDir, vectors)).length).toBe(2);
      await f.useCases.eraseUser(u, 'delete', T0);
      expect(await vectorTraces(null, folder.dataDir, vectors)).toEqual([]);
      expect(fileTraces(folder.dataDir, 'sn_a').filter((p) => p.includes('discover-index'))).toEqual([]);
      // the other author's item is still searchable from the rewritten snapshot after a restart
      await f.close();
      f = await folder.open();
      await f.discover.vectors.sync();
      expect(f.discover.vectors.stats().size).toBe(1);
    } finally {
      await f.close();
    }
  });
});

/**
 * Runs the real `freshet erase-user u` on `t`'s stores (its data folder `dir`), kills it with SIGKILL once it
 * logged step `killAfter`, then runs it again to its end.
 */
async function killAndRerun(t: TestApp, u: string, dir: string, killAfter: string): Promise<void> {
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${t.schema}`);
  const env = {
    ...process.env,
    LOG_LEVEL: 'debug',
    LOG_FORMAT: 'json',
    FRESHET_DATA_DIR: dir,
    FRESHET_DATABASE_URL: url.toString(),
    FRESHET_REDIS_URL: TEST_REDIS_URL,
    FRESHET_KEY_PREFIX: t.config.keyPrefix,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: 'erase-kill-secret-0123456789',
  };
  const first = spawnCli(['erase-user', u], env);
  const stepsDone: string[] = [];
  onJsonLines<{ msg?: string; step?: string }>(first.stderr!, (e) => {
    if (e.msg !== 'erase step done' || !e.step) return;
    stepsDone.push(e.step);
    if (e.step === killAfter) first.kill('SIGKILL');
  });
  const [code, signal] = (await once(first, 'exit')) as [number | null, string | null];
  expect(signal, `killed after ${killAfter}; steps logged: ${stepsDone.join(', ')}; exit ${code}`).toBe('SIGKILL');
  expect(stepsDone).not.toContain('edge'); // it died before the last step
  expect(await sqlTraces(t.sql, u), 'a killed erase leaves part of the user').not.toEqual({});

  const second = spawnCli(['erase-user', u], env);
  let out = '';
  second.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  const [again] = (await once(second, 'exit')) as [number | null];
  expect(again, out).toBe(0);
  expect(JSON.parse(out)).toMatchObject({ userId: u, items: 'delete' });
}

describe('erase killed with kill -9 and run again (the real command, PostgreSQL + Redis)', () => {
  it('a `freshet erase-user` killed after a random step, run again, leaves no trace', async () => {
    const t = withWorker(await startTestApp({ hot: 'redis', db: 'postgres' }));
    const dir = mkdtempSync(join(tmpdir(), 'freshet-erase-kill-'));
    try {
      const svc = t.client();
      await seedOthers(svc);
      const u = 'zq_kill_redis';
      const vectors = await storedVectors(t.sql, await fullHistory(t, svc, u));
      // a step of the first half: the rest (PostgreSQL transactions and Redis calls) is still to run when
      // the signal lands, so the command dies mid-erase
      await killAndRerun(t, u, dir, ERASE_STEPS[Math.floor(Math.random() * (ERASE_STEPS.length / 2))]!);
      expect(await sqlTraces(t.sql, u)).toEqual({});
      expect(await redisTraces(t.f.redis!.redis, t.config.keyPrefix, u)).toEqual([]);
      // no vector of their items: not in item_embeddings, not in the snapshot the command wrote at its close
      expect(await vectorTraces(t.sql, dir, vectors)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await t.close();
    }
  });

  it('killed after the graph step with fan-outs still queued: run again, the queued jobs bring no outbox back', async () => {
    const t = await startTestApp({ hot: 'redis', db: 'postgres' });
    const dir = mkdtempSync(join(tmpdir(), 'freshet-erase-kill-'));
    let worker = t.f.following.startWorker(2);
    try {
      const svc = t.client();
      await seedOthers(svc);
      const u = 'zq_kill_queued';
      const mine = await fullHistory(t, svc, u);
      await worker.stop();
      // posts no worker fans out yet: pending rows and queued jobs when the erase runs
      const queued = ['zq_q1', 'zq_q2', 'zq_q3'];
      await svc.items.publish(queued.map((id, i) => item(id, i * 60_000, { author_id: u, title: `queued ${id}` })));
      const vectors = await storedVectors(t.sql, [...mine, ...queued]);
      await killAndRerun(t, u, dir, 'graph');
      // a worker again: whatever of their fan-outs is still queued finds no pending row and writes nothing
      worker = t.f.following.startWorker(2);
      await settle(t);
      expect(await sqlTraces(t.sql, u)).toEqual({});
      expect(await redisTraces(t.f.redis!.redis, t.config.keyPrefix, u)).toEqual([]);
      expect(await vectorTraces(t.sql, dir, vectors)).toEqual([]);
    } finally {
      await worker.stop();
      rmSync(dir, { recursive: true, force: true });
      await t.close();
    }
  });
});
