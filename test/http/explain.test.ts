/**
 * The explain API over HTTP (`GET /v1/feeds/{feed}/explain`, docs/explain.md), on both store pairs:
 * PGlite + in-process stores, and PostgreSQL + Redis. Calls go through `freshet-engine/client` (on
 * `app.inject`). Each rule is produced by the real write that causes it (a view, an engagement, a
 * preference, a served page), and explain must name exactly that rule; explain itself must change
 * nothing a refresh reads afterwards.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ExplainData, FreshetClient } from '../../src/client/index.js';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { Redis } from 'ioredis';
import { T0, item, startTestApp, type TestApp } from '../support/app.js';
import { TEST_REDIS_URL } from '../support/env.js';
import type { MemorySeenFilter } from '../../src/seen/memory-seen-filter.js';
import type { MemoryReaderSeenFilter } from '../../src/seen/memory-reader-seen-filter.js';
import { failure } from '../support/client.js';
import { settle, withWorker } from '../support/following.js';

const setups = [
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const;

/** Items each by an author of its own (no author cap at play), 1 h apart, popularity falling with age. */
const PLAIN = 12;

describe.each(setups)('explain on $name', ({ hot, db }) => {
  let t: TestApp;
  let svc: FreshetClient;
  let n = 0;
  let reader: string;
  /** The service key acting for this test's reader at the virtual time. */
  let as: FreshetClient;

  beforeAll(async () => {
    t = withWorker(await startTestApp({ hot, db }));
    svc = t.client({ now: () => t.clock.now() });
    const plain = Array.from({ length: PLAIN }, (_, i) =>
      item(`p_${i}`, (i + 1) * HOUR_MS, { author_id: `au_${i}`, popularity: 3 * (PLAIN - i), lang: 'en' }),
    );
    await svc.items.publish([
      ...plain,
      item('x_spoiler', 30 * HOUR_MS, { author_id: 'au_s', title: 'The spoiler of the week', lang: 'en' }),
      item('x_french', 31 * HOUR_MS, { author_id: 'au_f', title: 'Le fromage', lang: 'fr' }),
      item('x_gone', 32 * HOUR_MS, { author_id: 'au_g', lang: 'en' }),
      item('x_old', 100 * HOUR_MS, { author_id: 'au_o', lang: 'en' }),
    ]);
    await svc.items.delete('x_gone');
  });
  afterAll(async () => t?.close());
  beforeEach(() => {
    reader = `rx_${hot}_${++n}`;
    t.clock.set(T0);
    as = svc.as(reader, () => t.clock.now());
  });

  const explain = (id: string, feed: 'for-you' | 'hot' | 'discover' | 'following' = 'for-you') => as.explain(feed, id);
  const rules = (e: ExplainData) => e.rules.map((r) => r.rule);

  it('an eligible item: no rule, the score parts for-you multiplies, a rank, and the wire fields', async () => {
    const e = await explain('p_0');
    expect(e).toMatchObject({
      feed: 'for-you',
      reader_id: reader,
      item_id: 'p_0',
      eligible: true,
      rules: [],
      notes: [],
    });
    expect(e.at_ms).toBe(T0);
    expect(e.rank).toBe(1);
    const parts = e.score!.parts as Record<string, number>;
    expect(Object.keys(parts).sort()).toEqual(['author_penalty', 'decay', 'popularity', 'relevance', 'source']);
    expect(parts.source).toBe('fill'); // inside the decay window, no interests: the fill score orders it
    expect(parts.relevance).toBe(0);
    expect(parts.author_penalty).toBe(1);
    expect(parts.popularity).toBeCloseTo(Math.log(2 + 3 * PLAIN), 10);
    expect(e.score!.value).toBeCloseTo(parts.decay! * parts.popularity!, 12);
  });

  it('each rule is reported alone, with its own fields and one sentence', async () => {
    await svc.items.publish([item('x_mine', 40 * HOUR_MS, { author_id: reader, lang: 'en' })]);
    await as.engagements.record({ item_id: 'p_1', kind: 'like' });
    await as.feedback.notInterested('p_2');
    await svc.views.record({ item_id: 'p_3', visitor_id: reader });
    await svc.users.muteAuthor(reader, 'au_4');
    await svc.users.muteWord(reader, { phrase: 'spoiler' });
    await svc.users.updatePreferences(reader, { languages: ['en'] });
    await svc.blocks.block(reader, 'au_5');
    const expected: [string, string, Record<string, unknown>][] = [
      ['x_mine', 'own', {}],
      ['p_1', 'engaged', {}],
      ['p_2', 'not_interested', {}],
      ['p_3', 'recently_viewed', {}],
      ['p_4', 'muted_author', {}],
      ['x_spoiler', 'muted_word', { phrase: 'spoiler', action: 'hide' }],
      ['x_french', 'language', { lang: 'fr' }],
      ['p_5', 'blocked_author', {}],
      ['x_gone', 'deleted', {}],
    ];
    for (const [id, rule, fields] of expected) {
      const e = await explain(id);
      expect(rules(e), id).toEqual([rule]);
      expect(e.rules[0], id).toMatchObject(fields);
      expect(e.rules[0]!.reason, id).toMatch(/^[A-Z].*\.$/);
      expect(e.eligible, id).toBe(false);
      expect(e.rank, id).toBeNull();
    }
    expect((await explain('x_gone')).score).toBeNull();
    expect((await explain('p_1')).score).not.toBeNull(); // inside the window: still scored
  });

  it('seen: the day of the rolling filter and its false-positive rate; two rules in the feed order', async () => {
    const page = await as.forYou.refresh({ limit: 3 });
    const served = page.items.map((i) => i.id);
    expect(served).toEqual(['p_0', 'p_1', 'p_2']);
    const e = await explain('p_1');
    expect(rules(e)).toEqual(['seen']);
    expect(e.rules[0]).toMatchObject({ day: '2026-03-06' });
    expect(e.rules[0]!.fpr).toBeGreaterThan(0);
    expect(e.rules[0]!.fpr).toBeLessThan(0.01);
    expect(e.rules[0]!.reason).toContain('2026-03-06');
    expect(e.score).not.toBeNull(); // a card already served still says why it ranked there
    await svc.users.muteWord(reader, { phrase: 'Item p_1' });
    await as.engagements.record({ item_id: 'p_1', kind: 'share' });
    expect(rules(await explain('p_1'))).toEqual(['engaged', 'seen', 'muted_word']);
  });

  it('a served card says when it was served and why it ranked: its rank were it not served yet, its score as if unseen', async () => {
    expect((await explain('p_1')).served).toBeNull(); // never served
    const page = await as.forYou.refresh({ limit: 3 });
    expect(page.items.map((i) => i.id)).toEqual(['p_0', 'p_1', 'p_2']);
    const e = await explain('p_1');
    expect(rules(e)).toEqual(['seen']);
    // p_0 and p_2 were served too: were p_1 alone unseen, a refresh now would put it first
    expect(e.served).toEqual({ day: '2026-03-06', rank_if_unseen: 1 });
    expect(e.score!.parts.source).toBe('fill');
    // an item past the decay window is served newest first: its score says so, not a decay near 0
    await svc.items.publish([item('x_older', 300 * HOUR_MS, { author_id: 'au_older', lang: 'en' })]);
    const older = await explain('x_older');
    expect(older.served).toBeNull();
    expect(older.score!.parts).toMatchObject({ source: 'older', published_at_ms: T0 - 300 * HOUR_MS });
    const all = await as.forYou.refresh({ limit: 50 });
    expect(all.items.map((i) => i.id)).toContain('x_older');
    const servedOlder = await explain('x_older');
    expect(servedOlder.served).toMatchObject({ day: '2026-03-06' });
    expect(servedOlder.served!.rank_if_unseen).toBeGreaterThanOrEqual(1);
    // another rule besides seen: no rank were it unseen (it would stay out)
    await as.engagements.record({ item_id: 'p_2', kind: 'like' });
    expect((await explain('p_2')).served).toEqual({ day: '2026-03-06', rank_if_unseen: null });
  });

  it("seen in the reader's own filter: an item served older than the decay window, once the rolling days forgot it", async () => {
    await svc.items.publish([item('x_ancient', 200 * HOUR_MS, { author_id: 'au_a', lang: 'en' })]);
    // past the decay window: served after the window's items, newest first (its score does not order it)
    expect((await explain('x_ancient')).score!.parts.source).toBe('older');
    const served = (await as.forYou.refresh({ limit: 50 })).items.map((i) => i.id);
    expect(served).toContain('x_ancient');
    expect((await explain('x_ancient')).rules).toEqual([expect.objectContaining({ rule: 'seen', day: '2026-03-06' })]);
    t.clock.advance(8 * 24 * HOUR_MS); // past the 7 rolling days
    const e = await explain('x_ancient');
    expect(rules(e)).toEqual(['seen']);
    expect(e.rules[0]).toMatchObject({ sub_filter: 0 });
    expect(e.rules[0]).not.toHaveProperty('day');
    expect(e.rules[0]!.fpr).toBeGreaterThan(0);
    expect(e.rules[0]!.reason).toContain('sub-filter 0');
    expect(rules(await explain('p_0'))).toEqual([]); // served while fresh: forgotten with the rolling days
  });

  it('a warn muted word is a note: the item stays eligible', async () => {
    await svc.users.muteWord(reader, { phrase: 'spoiler', action: 'warn' });
    const e = await explain('x_spoiler');
    expect(e.eligible).toBe(true);
    expect(e.notes).toEqual([expect.objectContaining({ rule: 'muted_word', phrase: 'spoiler', action: 'warn' })]);
  });

  it('writes nothing: the next refresh serves what explain ranked, in that order, by falling score', async () => {
    const before = await Promise.all(Array.from({ length: PLAIN }, (_, i) => explain(`p_${i}`)));
    // explaining again answers the same: no seen mark, no cursor, no view was written
    const again = await Promise.all(before.map((e) => explain(e.item_id)));
    expect(again).toEqual(before);
    const page = await as.forYou.refresh({ limit: 6 });
    const byRank = [...before].sort((a, b) => a.rank! - b.rank!).map((e) => e.item_id);
    expect(page.items.map((i) => i.id)).toEqual(byRank.slice(0, 6));
    const values = byRank.map((id) => before.find((e) => e.item_id === id)!.score!.value);
    expect(values).toEqual([...values].sort((a, b) => b - a));
    // the rest of that refresh is still in the cache: explain popped nothing
    const next = await as.forYou.loadMore({ limit: 6 });
    expect(next.items.map((i) => i.id)).toEqual(byRank.slice(6, 12));
  });

  // the in-process pair: the seen filters' bitmaps, the reader's page cache and cursor are the same after explains
  if (hot === 'memory')
    it('writes nothing in process: the seen bitmaps, the page cache and the cursor are unchanged', async () => {
      await as.forYou.refresh({ limit: 5 });
      const rolling = t.f.seen as MemorySeenFilter;
      const own = t.f.readerSeen as MemoryReaderSeenFilter;
      const state = async () => ({
        days: [...rolling.dayFilters()].map(([k, d]) => [k, Buffer.from(d.bitmap).toString('hex')]),
        own: own.saved(reader) && Buffer.from(own.saved(reader)!.bitmap).toString('hex'),
        ownActive: own.saved(reader)?.lastActive ?? null,
        cursor: await t.f.cache.getCursor(reader),
      });
      const before = await state();
      for (const feed of ['for-you', 'hot', 'discover', 'following'] as const)
        for (const id of ['p_0', 'p_1', 'p_2', 'x_old']) await explain(id, feed);
      expect(await state()).toEqual(before);
      const next = await as.forYou.loadMore({ limit: 2 }); // the cache still holds the refresh's rest
      expect(next.items).toHaveLength(2);
      expect(await state()).not.toEqual(before); // and the check sees a page's impressions
    });

  // Redis only (registered there alone): the in-process stores are checked by what the next refresh serves
  if (hot === 'redis')
    it('writes no Redis key: every key under the prefix holds the same bytes after explains of every feed', async () => {
      await as.forYou.refresh({ limit: 5 }); // a reader with a seen filter, a page cache and a cursor
      await svc.follows.follow(reader, 'au_0');
      await settle(t);
      const redis = new Redis(TEST_REDIS_URL);
      try {
        // every key's bytes (DUMP), but the days' layout records, which any first look at a day writes,
        // and BullMQ's stalled-check stamp, which the fan-out worker's own timer rewrites (a full run
        // once crossed it between the two snapshots)
        const snapshot = async () => {
          const keys = (await redis.keys(`${t.config.keyPrefix}*`))
            .filter((k) => !k.includes('{seen-layout}') && !k.endsWith(':stalled-check'))
            .sort();
          return Object.fromEntries(
            await Promise.all(keys.map(async (k) => [k, (await redis.dumpBuffer(k))?.toString('hex')])),
          );
        };
        const before = await snapshot();
        for (const feed of ['for-you', 'hot', 'discover', 'following'] as const)
          for (const id of ['p_0', 'p_1', 'p_2', 'x_old']) await explain(id, feed);
        expect(await snapshot()).toEqual(before);
      } finally {
        redis.disconnect();
      }
    });

  it('auth, unknown items and bad input answer with the documented codes', async () => {
    const token = await t.token('someone_else');
    const other = t.client({ token, reader });
    expect(await failure(other.explain('for-you', 'p_0'))).toMatchObject({ status: 403, code: 40301 });
    const own = t.client({ token });
    expect((await own.explain('for-you', 'p_0')).reader_id).toBe('someone_else');
    expect(await failure(explain('no_such_item'))).toMatchObject({ status: 404, code: 40401 });
    expect(await failure(explain('bad id!'))).toMatchObject({ status: 400, code: 40002 });
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/feeds/trending/explain?item_id=p_0',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 40001 });
    const missing = await t.app.inject({
      method: 'GET',
      url: '/v1/feeds/for-you/explain',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ code: 40001 });
    // explains share the feed pages' rate budget (FRESHET_RATE_READER, 30 per window)
    const greedy = t.client({ token: await t.token(`greedy_${hot}`) });
    const codes: number[] = [];
    for (let i = 0; i < 31; i++)
      codes.push(
        await greedy.explain('hot', 'p_0').then(
          () => 200,
          (e: { status: number }) => e.status,
        ),
      );
    expect(codes.slice(0, 30).every((c) => c === 200)).toBe(true);
    expect(codes[30]).toBe(429);
    // the library: the same answer, the same errors
    const lib = await t.f.explain({ feed: 'for-you', readerId: reader, itemId: 'p_0' });
    expect(lib).toMatchObject({ feed: 'for-you', readerId: reader, itemId: 'p_0', eligible: true, atMs: T0 });
    expect(lib.rank).toBe((await explain('p_0')).rank);
    await expect(t.f.explain({ feed: 'trending', readerId: reader, itemId: 'p_0' })).rejects.toMatchObject({
      code: 40001,
    });
    await expect(t.f.explain({ feed: 'hot', readerId: reader, itemId: 'nope' })).rejects.toMatchObject({ code: 40401 });
    await expect(t.f.explain({ feed: 'hot', readerId: 'a b', itemId: 'p_0' })).rejects.toMatchObject({ code: 40002 });
  });

  it("hot: note 2's score taken apart, the rank in the snapshot, and its rules in order", async () => {
    for (const v of ['v1', 'v2', 'v3']) await svc.views.record({ item_id: 'p_6', visitor_id: v });
    await svc.views.record({ item_id: 'p_7', visitor_id: 'v1' });
    await svc.views.record({ item_id: 'x_old', visitor_id: 'v1' });
    t.f.hot.invalidate(); // the snapshot of an earlier test at this virtual time is stale
    const top = await as.hot.top({ limit: 50 });
    const listed = top.items.map((i) => i.id);
    const e = await explain('p_6', 'hot');
    expect(e).toMatchObject({ feed: 'hot', eligible: true, rules: [] });
    expect(e.rank).toBe(listed.indexOf('p_6') + 1);
    expect((await explain('p_7', 'hot')).rank).toBe(listed.indexOf('p_7') + 1);
    const row = top.items.find((i) => i.id === 'p_6')!;
    expect(e.score!.value).toBe(row.score); // the same function, the same double
    expect(e.score!.parts).toMatchObject({ pv: row.pv, uv: row.uv, age_hours: 7 });
    const parts = e.score!.parts as Record<string, number>;
    expect(parts.weighted_views! * parts.decay!).toBeCloseTo(row.score, 12);
    expect(rules(await explain('p_8', 'hot'))).toEqual(['not_ranked']);
    expect(rules(await explain('x_old', 'hot'))).toEqual(['outside_window']);
    expect((await explain('x_old', 'hot')).score).toBeNull();
    // the range the reader's hot list shows (the explorer's Hot page sends its own): over 7 days x_old is ranked
    const week = await as.explain('hot', 'x_old', { range: '7d' });
    expect(week).toMatchObject({ eligible: true, rules: [] });
    expect(week.rank).toBe((await as.hot.top({ range: '7d', limit: 50 })).items.findIndex((i) => i.id === 'x_old') + 1);
    expect(await failure(as.explain('for-you', 'x_old', { range: '7d' }))).toMatchObject({ status: 400, code: 40001 });
    expect(await failure(as.explain('hot', 'x_old', { range: '9w' }))).toMatchObject({ status: 400 });
    await svc.users.muteAuthor(reader, 'au_6');
    await svc.users.muteWord(reader, { phrase: 'Item p_6' });
    expect(rules(await explain('p_6', 'hot'))).toEqual(['muted_author', 'muted_word']);
    expect(rules(await explain('p_8', 'hot'))).toEqual(['not_ranked']); // for-you's own rules do not apply
    // no view was counted by explaining
    expect((await svc.hot.item('p_6')).pv).toBe(3);
  });

  it('following: the position from the newest, not_followed and blocked_author, the preferences; no score', async () => {
    for (const a of ['au_0', 'au_1', 'au_9', 'au_10']) await svc.follows.follow(reader, a);
    await settle(t);
    const shown = (await as.following.page({ limit: 20 })).items.map((i) => i.id);
    expect(shown).toEqual(['p_0', 'p_1', 'p_9', 'p_10']);
    for (const [i, id] of shown.entries()) {
      const e = await explain(id, 'following');
      expect(e, id).toMatchObject({ feed: 'following', eligible: true, rules: [], score: null, rank: i + 1 });
    }
    expect(rules(await explain('p_2', 'following'))).toEqual(['not_followed']);
    await svc.blocks.block(reader, 'au_1');
    expect(rules(await explain('p_1', 'following'))).toEqual(['blocked_author']);
    await svc.users.muteWord(reader, { phrase: 'Item p_9' });
    await svc.users.muteAuthor(reader, 'au_9');
    expect(rules(await explain('p_9', 'following'))).toEqual(['muted_author', 'muted_word']);
    expect((await explain('p_10', 'following')).rank).toBe(2); // p_1 and p_9 no longer shown above it
    // the timeline's rules only: a recent view does not hide an item from it
    await svc.views.record({ item_id: 'p_0', visitor_id: reader });
    expect(rules(await explain('p_0', 'following'))).toEqual([]);
  });

  it('discover: the phase and position of a fresh session, read only; a served item keeps its phase', async () => {
    const ids = Array.from({ length: PLAIN }, (_, i) => `p_${i}`);
    const before = await Promise.all(ids.map((id) => explain(id, 'discover')));
    const page = await as.discover.page(undefined, { limit: 20 });
    for (const e of before) {
      const at = page.items.findIndex((i) => i.id === e.item_id);
      // an item the first page does not reach has no rank; the explain's pass is the page's own code
      expect(e, e.item_id).toMatchObject({ feed: 'discover', eligible: true, rules: [], rank: at < 0 ? null : at + 1 });
      if (at >= 0) expect(e.score!.parts.phase, e.item_id).toBe(page.sources[at]);
    }
    const served = page.items[0]!.id;
    const e = await explain(served, 'discover');
    expect(rules(e)).toEqual(['seen']);
    expect(e.rank).toBeNull();
    expect(e.score!.parts.phase).toBe(page.sources[0]);
    // served (the reader's own filter keeps no day), and where a fresh session would put it were it alone
    // unseen: first, as it was served
    expect(e.served).toEqual({ day: null, rank_if_unseen: 1 });
    await as.engagements.record({ item_id: 'p_11', kind: 'like' });
    const liked = await explain('p_11', 'discover');
    expect(rules(liked)).toEqual(['engaged', 'seen']); // served above, then liked
    expect(liked.score!.parts.phase).toBe(page.sources[page.items.findIndex((i) => i.id === 'p_11')]);
  });
});
