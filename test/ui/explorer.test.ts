/**
 * The web explorer in a real browser (Debian's Chromium driven by playwright-core): the app runs on a
 * loopback port with real HN posts; the test signs in with the service key, scrolls the for-you feed
 * across several pages with no item shown twice (the "N new" badge following the peek route), opens
 * discover (each item labelled with its source) and following, marks an item "not interested" and sees
 * it leave (and undoes it from Exclusions), follows an author (their items join the following page) and
 * unfollows them there (their cards leave at once), publishes through the form, sees the following
 * banner count a stream reset's entries, checks the hot, item and health pages, and saves screenshots
 * at 1440 px and 375 px wide under test-results/ui/. The bundle is built fresh first (scripts/build-ui.mjs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../scripts/build-ui.mjs';
import type { PublishInput } from '../../src/use-cases/verbs.js';
import { SERVICE_KEY, startTestApp, type TestApp } from '../support/app.js';
import {
  SCREENSHOTS,
  feedIds as shownIds,
  hnWindow,
  openBrowser,
  openPage,
  sameOriginOnly,
} from '../support/explorer.js';

const OUT = SCREENSHOTS;
const READER = 'ui_reader';

let t: TestApp;
let browser: Browser;
let page: Page;
let base: string;
let followed: string[];
/** The posts published, oldest first. */
let posts: PublishInput[];
/** How many items the followed authors published in the window (the timeline's length). */
let timelineLength: number;

/** Ids of the cards in the shown feed, in order. */
const cardIds = () =>
  page.locator('ul.feed > li.card').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id!));
/** The same once no page of the feed is loading (the list is `aria-busy` while one is). */
const feedIds = () => shownIds(page);

beforeAll(async () => {
  const [items] = await Promise.all([hnWindow(300), buildUi()]);
  posts = items;
  // real PostgreSQL (opens in ~1 s; PGlite takes ~10 s on a loaded machine); a reconnecting stream
  // replays at most 5 entries (more is a `reset`)
  t = await startTestApp({ db: 'postgres', env: { FRESHET_STREAM_REPLAY_MAX: '5' } });
  t.clock.set(items.at(-1)!.publishedAt + 3_600_000);
  await t.f.useCases.publishItems(items, t.clock.now());
  // the reader follows the authors of the newest posts, so following has a timeline
  followed = [...new Set(items.slice(-80).map((i) => i.authorId))].slice(0, 30);
  timelineLength = items.filter((i) => followed.includes(i.authorId)).length;
  for (const a of followed) await t.f.useCases.follow(READER, a, t.clock.now());
  await t.f.following.queue.idle(60_000);
  ({ base, browser } = await openBrowser(t));
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await sameOriginOnly(page, base);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the web explorer at /ui', () => {
  it('signs in with the service key and scrolls the for-you feed over several pages, never repeating an item', async () => {
    const res = await page.goto(`${base}/ui`);
    expect(res?.status()).toBe(200);
    expect(page.url()).toBe(`${base}/ui/`);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");
    await page.getByLabel('Key or token').fill(SERVICE_KEY);
    await page.getByLabel(/Reader id/).fill(READER);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await openPage(page, 'For you'); // signing in lands on the Overview
    await expect.poll(async () => (await cardIds()).length, { timeout: 10_000 }).toBe(20);
    let seen = await cardIds();
    for (let pageNo = 2; pageNo <= 4; pageNo++) {
      await page.locator('[data-action=load-more]').scrollIntoViewIfNeeded();
      await expect.poll(async () => (await cardIds()).length, { timeout: 10_000 }).toBe(pageNo * 20);
      seen = await cardIds();
    }
    expect(new Set(seen).size).toBe(80);
    await expect.poll(() => page.getByTestId('count').textContent()).toBe('80 items, none repeated');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${OUT}for-you-1440.png` });
  });

  it('shows the "N new" badge with what the peek route answers after the pages served', async () => {
    const res = await fetch(`${base}/v1/feeds/for-you/peek`, {
      headers: { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-reader': READER },
    });
    expect(res.status).toBe(200);
    const { count, capped } = ((await res.json()) as { data: { count: number; capped: boolean } }).data;
    expect(count).toBeGreaterThan(0); // 300 fresh posts, 80 served
    const badge = page.getByTestId('peek');
    // updated after each load_more: the 80 items served are no longer counted
    await expect.poll(() => badge.textContent(), { timeout: 10_000 }).toBe(`${count}${capped ? '+' : ''} new`);
    expect(await badge.isVisible()).toBe(true);
  });

  it('marks an item not interested: it leaves the list, does not come back on refresh, and can be undone', async () => {
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    const [victim] = await feedIds();
    await page.locator(`li.card[data-id="${victim}"] [data-action=not-interested]`).click();
    await expect.poll(async () => (await cardIds()).includes(victim!)).toBe(false);
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    const refreshed = await feedIds();
    expect(refreshed.length).toBeGreaterThan(1);
    expect(refreshed).not.toContain(victim);

    await openPage(page, 'Exclusions');
    const undo = page.getByRole('button', { name: `Undo ${victim}` });
    await undo.waitFor({ timeout: 10_000 });
    await page.screenshot({ path: `${OUT}exclusions-1440.png` });
    await undo.click();
    await expect.poll(() => undo.count()).toBe(0);
    const after = await fetch(`${base}/v1/exclusions`, {
      headers: { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-reader': READER },
    });
    expect(((await after.json()) as { data: { not_interested: unknown[] } }).data.not_interested).toEqual([]);
  });

  it("opens discover with each item labelled by its source, and following with the followed authors' items", async () => {
    await openPage(page, 'Discover');
    await expect.poll(async () => (await cardIds()).length, { timeout: 10_000 }).toBeGreaterThan(0);
    const sources = await page.locator('ul.feed .badge').allTextContents();
    expect(sources.length).toBe((await cardIds()).length);
    for (const s of sources) expect(['followed', 'trending', 'discovery', 'newest']).toContain(s);

    await openPage(page, 'Following');
    expect(timelineLength).toBeGreaterThan(20);
    await expect.poll(async () => (await cardIds()).length, { timeout: 10_000 }).toBe(20);
    const authors = await page.locator('ul.feed li.card .meta > span:first-child').allTextContents();
    for (const a of authors) expect(followed).toContain(a);
    await page.locator('[data-action=load-more]').click();
    await expect.poll(async () => (await cardIds()).length, { timeout: 10_000 }).toBe(Math.min(40, timelineLength));
    expect(new Set(await cardIds()).size).toBe((await cardIds()).length);
  });

  it('following: a new item of a followed author raises the "N new" banner, which shows it on top', async () => {
    await openPage(page, 'For you');
    await openPage(page, 'Following');
    await feedIds();
    // the page listens to GET /v1/feeds/following/stream: it says so once it has started watching, which
    // follows the first page's render by a turn of its own (read at once, it failed under a busy suite)
    await expect.poll(async () => page.getByTestId('new-source').textContent(), { timeout: 10_000 }).toBe('live');
    const fresh = {
      id: 'ui_new_1',
      authorId: followed[0]!,
      title: 'A fresh post from a followed author',
      text: '',
      url: null,
      tags: [],
      popularity: 1,
      publishedAt: t.clock.now(),
    };
    await t.f.useCases.publishItems([fresh], t.clock.now());
    const banner = page.getByTestId('new-banner');
    await expect.poll(() => banner.textContent(), { timeout: 10_000 }).toBe('1 new — show them');
    await banner.click();
    expect((await feedIds())[0]).toBe('ui_new_1');
    expect(await banner.isHidden(), (await banner.textContent()) ?? '').toBe(true);
    expect(await page.getByTestId('new-source').textContent()).toBe('live'); // still listening after the reload
  });

  it("follow and unfollow: a followed author's items join the following page; unfollowing there takes them out at once", async () => {
    // the newest post of an author the reader does not follow: on the timeline's first page once followed
    const post = posts.filter((i) => !followed.includes(i.authorId)).at(-1)!;
    const author = post.authorId;
    const cardsOf = page.locator(`ul.feed li.card[data-author="${author}"]`);
    await page.goto(`${base}/ui/#/item/${encodeURIComponent(post.id)}`);
    await page.getByRole('button', { name: `Follow ${author}`, exact: true }).click();
    await page.getByRole('button', { name: `Unfollow ${author}`, exact: true }).waitFor({ timeout: 10_000 });
    await openPage(page, 'Following');
    await expect.poll(() => cardsOf.count(), { timeout: 10_000 }).toBeGreaterThan(0);
    const before = await feedIds();
    const theirs = await cardsOf.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id!));
    expect(theirs).toContain(post.id);

    await cardsOf
      .first()
      .getByRole('button', { name: `Unfollow ${author}`, exact: true })
      .click();
    await expect.poll(() => cardsOf.count(), { timeout: 10_000 }).toBe(0);
    // at once: the other cards stay where they were, without a reload
    expect(await cardIds()).toEqual(before.filter((id) => !theirs.includes(id)));
    expect(await page.getByTestId('count').textContent()).toBe(`${before.length - theirs.length} items, none repeated`);
    // and the server agrees: a fresh load of the timeline has none of them
    await openPage(page, 'For you');
    await openPage(page, 'Following');
    await expect.poll(async () => (await feedIds()).length, { timeout: 10_000 }).toBe(20);
    expect(await cardsOf.count()).toBe(0);
  });

  it('following: unfollowing an author on the page takes their waiting entries off the "N new" banner at once', async () => {
    await openPage(page, 'For you');
    await openPage(page, 'Following');
    await feedIds();
    const gone = await page.locator('ul.feed > li.card').first().getAttribute('data-author');
    const stays = followed.find((a) => a !== gone)!;
    const at = t.clock.now();
    const post = (id: string, authorId: string) => ({
      id,
      authorId,
      title: id,
      text: '',
      url: null,
      tags: [],
      popularity: 1,
      publishedAt: at,
    });
    await t.f.useCases.publishItems([post('ui_wait_1', gone!), post('ui_wait_2', stays), post('ui_wait_3', stays)], at);
    const banner = page.getByTestId('new-banner');
    await expect.poll(() => banner.textContent(), { timeout: 10_000 }).toBe('3 new — show them');
    await page
      .locator(`ul.feed li.card[data-author="${gone}"]`)
      .first()
      .getByRole('button', { name: `Unfollow ${gone}`, exact: true })
      .click();
    await expect.poll(() => banner.textContent(), { timeout: 10_000 }).toBe('2 new — show them');
    await banner.click();
    expect((await feedIds()).slice(0, 2).sort()).toEqual(['ui_wait_2', 'ui_wait_3']);
    await t.f.useCases.follow(READER, gone!, t.clock.now()); // as before, for the tests after this one
  });

  it('following: entries missed beyond the stream\'s replay (a reset) are counted on the banner, not shown as "1 new"', async () => {
    await openPage(page, 'For you');
    // hold the page's stream request until more than FRESHET_STREAM_REPLAY_MAX (5) entries have arrived
    let held = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await page.route('**/v1/feeds/following/stream**', async (route) => {
      held++;
      await gate;
      await route.continue();
    });
    try {
      await openPage(page, 'Following');
      await feedIds();
      await expect.poll(() => held, { timeout: 10_000 }).toBe(1);
      const burst = Array.from({ length: 7 }, (_, i) => ({
        id: `ui_burst_${i}`,
        authorId: followed[2]!,
        title: `Burst ${i}`,
        text: '',
        url: null,
        tags: [],
        popularity: 1,
        publishedAt: t.clock.now(),
      }));
      await t.f.useCases.publishItems(burst, t.clock.now());
      await t.f.following.queue.idle(20_000);
      release();
      const banner = page.getByTestId('new-banner');
      await expect.poll(() => banner.textContent(), { timeout: 10_000 }).toBe('7 new — show them');
      await banner.click();
      expect((await feedIds()).slice(0, 7).sort()).toEqual(burst.map((b) => b.id).sort());
    } finally {
      release();
      await page.unroute('**/v1/feeds/following/stream**');
    }
  });

  it('following: "N unread" from the read marker; Catch up pages oldest first from it and moves it as the cards scroll into view', async () => {
    const api = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${base}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${SERVICE_KEY}`,
          'x-freshet-reader': READER,
          ...(init.body ? { 'content-type': 'application/json' } : {}),
        },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: any }).data;
    };
    // the timeline as the server has it, newest first; the marker 25 entries below the top (more than a page)
    const top = (await api('/v1/feeds/following?limit=100')).items as { id: string; timeline_id: string }[];
    expect(top.length).toBeGreaterThan(26);
    const unreadEntries = top.slice(0, 25).reverse(); // what catch-up shows, oldest first
    await api(`/v1/users/${READER}/markers/following`, {
      method: 'PUT',
      body: JSON.stringify({ last_read_id: top[25]!.timeline_id, force: true }),
    });
    await openPage(page, 'Hot'); // any other page: leaving Following stops its stream
    await openPage(page, 'Following');
    await expect.poll(() => page.getByTestId('timeline-unread').textContent(), { timeout: 10_000 }).toBe('25 unread');

    await page.getByRole('button', { name: 'Catch up' }).click();
    await expect
      .poll(async () => (await feedIds()).slice(0, 20), { timeout: 10_000 })
      .toEqual(unreadEntries.slice(0, 20).map((e) => e.id));
    await page.screenshot({ path: `${OUT}following-catch-up-1440.png` });
    await page.locator('[data-action=load-more]').scrollIntoViewIfNeeded();
    await expect.poll(() => cardIds(), { timeout: 10_000 }).toEqual(unreadEntries.map((e) => e.id));
    await expect.poll(() => page.getByText('You are caught up.').isVisible(), { timeout: 10_000 }).toBe(true);
    // the newest card is in view at the bottom: the marker reaches it, and the page says so
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await expect
      .poll(async () => (await api(`/v1/users/${READER}/markers`)).following.last_read_id, { timeout: 10_000 })
      .toBe(top[0]!.timeline_id);
    await expect.poll(() => page.getByTestId('timeline-unread').textContent(), { timeout: 10_000 }).toBe('all read');
    await page.getByRole('button', { name: 'Newest first' }).click();
    await expect.poll(async () => (await feedIds())[0], { timeout: 10_000 }).toBe(top[0]!.id);
  });

  it("publishes an item through the form: it has its own page and tops the following timeline of its author's followers", async () => {
    await openPage(page, 'Publish');
    await page.getByLabel('Id', { exact: true }).fill('ui_form_1');
    await page.getByLabel('Author', { exact: true }).fill(followed[1]!);
    await page.getByLabel('Title', { exact: true }).fill('Published from the explorer form');
    await page.getByLabel('Tags', { exact: true }).fill('explorer, test');
    // the server runs on the test's virtual clock; the form's default is the browser's
    await page.getByLabel(/^Published at/).fill(String(Math.floor(t.clock.now() / 1000)));
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await expect
      .poll(() => page.locator('main .status').textContent(), { timeout: 10_000 })
      .toContain('Published ui_form_1 (new)');
    await page.screenshot({ path: `${OUT}publish-1440.png` });
    await page.getByRole('link', { name: 'Open it' }).click();
    await expect
      .poll(() => page.locator('main h2').first().textContent(), { timeout: 10_000 })
      .toBe('Published from the explorer form');
    await t.f.following.queue.idle(20_000);
    await openPage(page, 'Following');
    expect((await feedIds())[0]).toBe('ui_form_1');
  });

  it('opens an item, records a view, and sees it in the hot ranking and the health page', async () => {
    const id = (await cardIds())[0]!;
    await page.locator(`li.card[data-id="${id}"] h3 a`).click();
    await page.getByRole('button', { name: 'Record a view' }).click();
    await expect.poll(() => page.locator('.counters').textContent(), { timeout: 10_000 }).toContain('PV1');
    await page.screenshot({ path: `${OUT}item-1440.png` });
    t.clock.advance(61_000); // the ranking is recomputed at most every refresh_s (60 s) of server time
    await openPage(page, 'Hot');
    await page.getByLabel('Published within').selectOption('30d');
    await expect.poll(() => page.locator(`table.hot tr[data-id="${id}"]`).count(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => page.locator('.params').textContent()).toContain('α = ');
    await page.screenshot({ path: `${OUT}hot-1440.png` });
    await openPage(page, 'Health');
    await expect.poll(() => page.locator('.ready').textContent(), { timeout: 10_000 }).toContain('Ready');
    await expect.poll(() => page.locator('.metric').count(), { timeout: 10_000 }).toBe(5);
    // every card charts from the first sample (a zero baseline), not from the third
    expect(
      await page
        .locator('.metric')
        .evaluateAll((els) => els.map((e) => e.querySelectorAll('svg.chart polyline').length > 0)),
    ).toEqual([true, true, true, true, true]);
    await page.screenshot({ path: `${OUT}health-1440.png` });
  });

  it('preferences: a warn word folds a card, Mute on a card takes the author out everywhere, Show less is undoable', async () => {
    const prefs = () => t.f.useCases.preferences(READER, t.clock.now());
    await openPage(page, 'Preferences');
    await page.getByLabel('Word or phrase').fill('!!!'); // no letter: refused with the server's sentence
    await page.getByRole('button', { name: 'Mute word' }).click();
    await expect
      .poll(() => page.locator('main .status').textContent(), { timeout: 10_000 })
      .toContain('add_muted_words[0].phrase');
    await page.getByLabel('Word or phrase').fill('Spoiler');
    await page.getByLabel('Action').selectOption('warn');
    await page.getByLabel('Hot').uncheck();
    await page.getByRole('button', { name: 'Mute word' }).click();
    await expect.poll(() => page.getByTestId('muted-words').textContent(), { timeout: 10_000 }).toContain('warn');
    expect((await prefs()).muted_words).toEqual([
      {
        phrase: 'Spoiler',
        whole_word: true,
        action: 'warn',
        expires_at: null,
        feeds: ['for-you', 'discover', 'following'],
      },
    ]);
    await page.screenshot({ path: `${OUT}preferences-1440.png`, fullPage: true });

    // a followed author's post holding the phrase arrives folded behind it in the timeline
    const author = followed[3]!;
    const spoiler = {
      id: 'ui_spoiler',
      authorId: author,
      title: 'SPOILER: the finale, explained',
      text: '',
      url: null,
      tags: [],
      popularity: 1,
      publishedAt: t.clock.now(),
    };
    await t.f.useCases.publishItems([spoiler], t.clock.now());
    await t.f.following.queue.idle(20_000);
    await openPage(page, 'Following');
    const card = page.locator('li.card[data-id="ui_spoiler"]');
    await expect.poll(() => card.getByTestId('filtered').textContent(), { timeout: 10_000 }).toContain('“Spoiler”');
    expect(await card.locator('h3').isVisible()).toBe(false);
    await page.screenshot({ path: `${OUT}following-filtered-1440.png` });
    await card.getByRole('button', { name: 'Show anyway' }).click();
    expect(await card.locator('h3').textContent()).toBe(spoiler.title);

    // Mute on a card: every card of the author leaves at once, and the server agrees
    await card.getByRole('button', { name: `Mute ${author}`, exact: true }).click();
    await expect.poll(() => page.locator(`li.card[data-author="${author}"]`).count(), { timeout: 10_000 }).toBe(0);
    expect((await prefs()).muted_authors.map((a) => a.author_id)).toEqual([author]);
    await openPage(page, 'Hot'); // away and back (for-you pages are kept for later tests)
    await openPage(page, 'Following');
    await expect.poll(async () => (await feedIds()).length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.locator(`li.card[data-author="${author}"]`).count()).toBe(0);

    // Show less on a for-you card folds it into a note; Undo brings it back and removes the signal
    await openPage(page, 'For you');
    const [first] = await feedIds();
    const forYouCard = page.locator(`li.card[data-id="${first}"]`);
    await forYouCard.getByRole('button', { name: 'Show less like this' }).click();
    await expect.poll(() => forYouCard.getByTestId('show-less-note').count(), { timeout: 10_000 }).toBe(1);
    expect((await t.f.exclusions.list(READER, t.clock.now())).showLess?.map((x) => x.itemId)).toEqual([first]);
    await forYouCard.getByRole('button', { name: 'Undo' }).click();
    await expect.poll(() => forYouCard.locator('h3 a').count(), { timeout: 10_000 }).toBe(1);
    expect((await t.f.exclusions.list(READER, t.clock.now())).showLess).toEqual([]);

    // undo both from the preferences page
    await openPage(page, 'Preferences');
    await page.getByRole('button', { name: `Unmute ${author}` }).click();
    await page.getByRole('button', { name: 'Unmute “Spoiler”' }).click();
    await expect.poll(async () => (await prefs()).muted_words.length + (await prefs()).muted_authors.length).toBe(0);
  });

  it('notifications: grouped, counted live on the badge, paged with max_id, marked read up to the newest', async () => {
    await openPage(page, 'Hot');
    const badge = page.getByTestId('unread');
    expect(await badge.isHidden()).toBe(true);
    const at = t.clock.now();
    const own = Array.from({ length: 22 }, (_, i) => ({
      id: `ui_own_${i}`,
      authorId: READER,
      title: `My post number ${i}`,
      text: '',
      url: null,
      tags: [],
      popularity: 1,
      publishedAt: at - (22 - i) * 60_000,
    }));
    await t.f.useCases.publishItems(own, at);
    for (let i = 0; i < 22; i++) await t.f.useCases.recordEngagement(`fan_${i}`, `ui_own_${i}`, 'like', at);
    for (const fan of ['fan_a', 'fan_b', 'fan_c']) await t.f.useCases.recordEngagement(fan, 'ui_own_21', 'like', at);
    for (const fan of ['fan_x', 'fan_y']) await t.f.useCases.follow(fan, READER, at);
    // 22 like groups + 1 follow group, announced on the shell's stream as they happen
    await expect.poll(() => badge.textContent(), { timeout: 10_000 }).toBe('23');

    await openPage(page, 'Notifications');
    const rows = page.locator('ul.notes > li.note');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(20);
    expect(await rows.nth(0).textContent()).toContain('fan_y and fan_x followed you');
    expect(await rows.nth(1).textContent()).toContain('fan_c and 3 others liked your post “My post number 21”');
    expect(await page.locator('ul.notes > li.note.unread').count()).toBe(20);
    await page.screenshot({ path: `${OUT}notifications-1440.png` });
    await page.locator('[data-action=load-more]').click(); // max_id paging
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(23);
    const keys = await rows.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.group));
    expect(new Set(keys).size).toBe(23);

    await page.getByRole('button', { name: 'Mark all read' }).click();
    await expect.poll(() => page.locator('ul.notes > li.note.unread').count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => badge.isHidden(), { timeout: 10_000 }).toBe(true);
    expect((await t.f.notifications.notifications.marker(READER)).unread.count).toBe(0);

    // one more while the page is open: the badge and the banner say so; the banner shows it
    await t.f.useCases.recordEngagement('fan_late', 'ui_own_3', 'reply', t.clock.now());
    await expect.poll(() => badge.textContent(), { timeout: 10_000 }).toBe('1');
    const banner = page.getByTestId('new-notifications');
    await expect.poll(() => banner.textContent(), { timeout: 10_000 }).toContain('fan_late replied to your post');
    await banner.click();
    await expect.poll(() => rows.first().textContent(), { timeout: 10_000 }).toContain('fan_late replied');
    expect(await rows.first().getAttribute('class')).toContain('unread');

    await page.setViewportSize({ width: 375, height: 812 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.screenshot({ path: `${OUT}notifications-375.png` });
    await openPage(page, 'Preferences');
    await page.getByLabel('Word or phrase').waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.screenshot({ path: `${OUT}preferences-375.png`, fullPage: true });
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  it('is keyboard-usable and readable at 375 px', async () => {
    await openPage(page, 'For you');
    await page.reload(); // the session survives a reload (sessionStorage)
    await expect.poll(async () => (await cardIds()).length, { timeout: 10_000 }).toBe(20);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.setViewportSize({ width: 375, height: 812 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.screenshot({ path: `${OUT}for-you-375.png` });
    await page.setViewportSize({ width: 1440, height: 900 });
    await openPage(page, 'Discover');
    await expect.poll(async () => (await cardIds()).length, { timeout: 10_000 }).toBeGreaterThan(0);
    await page.screenshot({ path: `${OUT}discover-1440.png` });
  });

  it('signs in with a reader token too: the header names its reader, a wrong token is refused', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    try {
      const p = await ctx.newPage();
      await p.route('**/*', (route) => (route.request().url().startsWith(base) ? route.continue() : route.abort()));
      await p.goto(`${base}/ui/`);
      await p.getByLabel('Sign in with').selectOption('reader');
      await p.getByLabel('Key or token').fill('not-a-token');
      await p.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => p.getByRole('alert').textContent()).toContain('not a reader token');
      await p.getByLabel('Key or token').fill(await t.token(READER));
      await p.getByRole('button', { name: 'Sign in' }).click();
      await expect
        .poll(() => p.locator('header .picker').textContent(), { timeout: 10_000 })
        .toBe(`Reader ${READER} (token)`);
      await openPage(p, 'For you');
      await expect.poll(() => p.locator('ul.feed > li.card').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    } finally {
      await ctx.close();
    }
  });
});
