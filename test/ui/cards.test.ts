/**
 * The explorer's cards and what goes with them, in Debian's Chromium (playwright-core) over real HN posts:
 * a card says how long ago its item was published (the date past 30 days, the exact UTC time in the
 * `<time>`), shows its link's host once and links its title to the item's URL; For you keeps its items when
 * the reader goes elsewhere and comes back (no refresh is sent) and across a reload; a second tab of the
 * origin is signed in without asking and a sign-out in one signs the other out; "Why?" on a card shows the
 * item's explain (the seen rule, the score's parts) and the "Why not?" page names the muted word that
 * removes an item. Screenshots at 1440 × 900 and 375 × 812 go to test-results/ui/ (no horizontal scroll at
 * 375 px). One browser, one app, about 100 posts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildUi } from '../../scripts/build-ui.mjs';
import { ago, plural } from '../../src/ui/dom.js';
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
const READER = 'cards_reader';
/** A second reader, who mutes a word of one post (the "Why not?" case). */
const MUTER = 'cards_muter';

let t: TestApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let base: string;
/** The posts published, by id. */
let posts: Map<string, PublishInput>;

/** Ids of the cards of the feed shown on `p` (the main page by default), once none of it is loading. */
const feedIds = (p: Page = page) => shownIds(p);

/** Signs `p` in with the service key for {@link READER}. */
async function signIn(p: Page): Promise<void> {
  await p.getByLabel('Key or token').fill(SERVICE_KEY);
  await p.getByLabel(/Reader id/).fill(READER);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 10_000 });
}

beforeAll(async () => {
  const [items] = await Promise.all([hnWindow(100), buildUi()]);
  posts = new Map(items.map((i) => [i.id, i]));
  t = await startTestApp({ db: 'postgres' });
  t.clock.set(items.at(-1)!.publishedAt + 3_600_000);
  await t.f.useCases.publishItems(items, t.clock.now());
  for (const a of [...new Set(items.slice(-30).map((i) => i.authorId))].slice(0, 10))
    await t.f.useCases.follow(READER, a, t.clock.now());
  await t.f.following.queue.idle(60_000);
  // views by other visitors, so hot has rows (the reader's own views would leave its feeds)
  await t.f.useCases.recordViews(
    items.slice(-5).map((i, n) => ({ itemId: i.id, visitorId: `cards_visitor_${n}`, nowMs: t.clock.now() })),
  );
  ({ base, browser } = await openBrowser(t));
  context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await sameOriginOnly(context, base);
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('explorer cards', () => {
  it('ages read "just now", "12 min ago", "3 h ago", "29 d ago", then the date; counts are singular at one', () => {
    const now = Date.UTC(2026, 10, 28, 12, 0, 0);
    const at = (agoMs: number) => ago((now - agoMs) / 1000, now);
    expect([at(59_000), at(12 * 60_000), at(3 * 3_600_000 + 59 * 60_000), at(29 * 86_400_000)]).toEqual([
      'just now',
      '12 min ago',
      '3 h ago',
      '29 d ago',
    ]);
    expect(at(30 * 86_400_000 + 1000)).toBe('29 Oct 2026');
    expect(ago(Date.UTC(2016, 1, 29, 23, 4) / 1000, now)).toBe('29 Feb 2016');
    expect(at(-60_000)).toBe('just now'); // a time ahead of the browser's clock
    expect([plural(1, 'item'), plural(0, 'item'), plural(2, 'repeat')]).toEqual(['1 item', '0 items', '2 repeats']);
  });

  it('a card shows its age (the date past 30 days, the exact UTC time in the <time>), its host once and links its title to the URL', async () => {
    await page.goto(`${base}/ui/#/for-you`); // signing in keeps the page asked for (else the Overview)
    await signIn(page);
    const ids = await feedIds();
    expect(ids.length).toBe(20);
    const withUrl = ids.filter((id) => posts.get(id)!.url);
    expect(withUrl.length).toBeGreaterThan(0);
    for (const id of withUrl) {
      const post = posts.get(id)!;
      const card = page.locator(`li.card[data-id="${id}"]`);
      const time = card.locator('.meta time');
      // the sample is from 2016: "29 Feb 2016", not "9 y ago"
      expect(await time.textContent()).toMatch(/^\d{1,2} (Jan|Feb) 2016$/);
      expect(await time.getAttribute('datetime')).toBe(new Date(post.publishedAt).toISOString());
      expect(await time.getAttribute('title')).toMatch(/^2016-0[12]-\d\d \d\d:\d\d UTC$/);
      const host = new URL(post.url!).hostname.replace(/^www\./, '');
      const meta = (await card.locator('.meta').textContent())!;
      expect(meta.split(host).length - 1).toBe(1); // the host tag is not repeated
      expect(meta).not.toContain('www.');
      const title = card.locator('h3 a.out');
      expect(await title.getAttribute('href')).toBe(post.url);
      expect(await title.getAttribute('rel')).toBe('noopener noreferrer');
      expect(await card.locator('h3 a.item-link').getAttribute('href')).toBe(`#/item/${encodeURIComponent(id)}`);
    }
    const pop = posts.get(ids[0]!)!.popularity ?? 0;
    if (pop > 0)
      expect(await page.locator(`li.card[data-id="${ids[0]}"] .pop`).textContent()).toBe(
        `▲ ${pop} point${pop === 1 ? '' : 's'}`,
      );
    await page.screenshot({ path: `${OUT}for-you-1440.png` });
  });

  it('For you keeps its items and scroll when the reader goes to Hot and back, and across a reload: no refresh is sent', async () => {
    const first = await feedIds();
    const sent: string[] = [];
    const count = (r: { method(): string; url(): string; postData(): string | null }) => {
      if (r.method() === 'POST' && r.url().endsWith('/v1/feeds/for-you')) sent.push(r.postData() ?? '');
    };
    page.on('request', count);
    await page.evaluate(() => window.scrollTo(0, 400));
    await openPage(page, 'Hot');
    await page.locator('table.hot').waitFor();
    await openPage(page, 'For you');
    expect(await feedIds()).toEqual(first);
    expect(await page.evaluate(() => window.scrollY)).toBe(400);
    await page.reload();
    expect(await feedIds()).toEqual(first);
    page.off('request', count);
    expect(sent).toEqual([]);
  });

  it('a second tab is signed in without asking; signing out in it signs the first tab out', async () => {
    const second = await context.newPage();
    await second.goto(`${base}/ui/#/hot`);
    await second.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 10_000 });
    expect(await second.locator('#pick-reader').inputValue()).toBe(READER);
    expect(await second.getByLabel('Key or token').count()).toBe(0);
    await second.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Key or token').waitFor({ timeout: 10_000 });
    expect(await page.locator('form.signin [role=alert]').textContent()).toBe('Signed out in another tab.');
    expect(await page.evaluate(() => sessionStorage.getItem('freshet.session'))).toBeNull();
    await second.close();
    await signIn(page);
  });

  it('"Why?" on a served card shows the seen rule, the score parts and the rank; on a hot row, its rank', async () => {
    await openPage(page, 'For you');
    const [id] = await feedIds();
    const card = page.locator(`li.card[data-id="${id}"]`);
    await card.locator('[data-action=why]').click();
    const explain = card.locator('[data-testid=explain]');
    await explain.waitFor({ timeout: 10_000 });
    expect(await explain.getAttribute('data-eligible')).toBe('false');
    expect(await explain.locator('[data-rule=seen]').textContent()).toMatch(
      /Served to you on \d{1,2} [A-Z][a-z]{2} 2016; it will not come back\..*false-positive rate/,
    );
    // why it was shown: its rank were it not served yet; the score's parts as rows of a table under its
    // value (or, past the decay window, the newest-first order it was served in), and the rank (none now)
    expect(await explain.locator('[data-testid=explain-served]').textContent()).toMatch(
      /^Why it was shown: were it not served yet, it would rank #\d+ in for-you now/,
    );
    expect(await explain.locator('[data-testid=explain-score] caption').textContent()).toMatch(
      /^(Score \d|Older than the decay window: served newest first \(published 2016-)/,
    );
    expect(await explain.locator('[data-testid=explain-score] tbody tr').count()).toBeGreaterThan(0);
    expect(await explain.locator('[data-testid=explain-rank]').textContent()).toMatch(/^Not ranked now\./);
    await page.screenshot({ path: `${OUT}for-you-why-1440.png` });
    // a hot row's Why?: the hot score taken apart, and the item's rank in the ranking
    await openPage(page, 'Hot');
    const row = page.locator('table.hot tbody tr').first();
    await row.locator('[data-action=why]').click();
    await row.locator('[data-testid=explain]').waitFor({ timeout: 10_000 });
    expect(await row.locator('[data-testid=explain-score] tbody tr').count()).toBeGreaterThan(0);
    expect(await row.locator('[data-testid=explain-rank]').textContent()).toMatch(/^Rank 1 in hot\./);
    await page.screenshot({ path: `${OUT}hot-why-1440.png` });
  });

  it('"Why?" answers on Discover and Following cards too (the feed of the page)', async () => {
    for (const feed of ['Discover', 'Following']) {
      await openPage(page, feed); // the page of this feed, not the previous page's list
      // (the count, then the page's status line: a failed load says why there)
      const shown = async () =>
        `${(await feedIds()).length} cards; ${(await page.locator('main p.status').first().textContent()) ?? ''}`;
      await expect.poll(shown, { timeout: 20_000 }).toMatch(/^[1-9]/);
      const [id] = await feedIds();
      const card = page.locator(`li.card[data-id="${id}"]`);
      await card.locator('[data-action=why]').click();
      const explain = card.locator('[data-testid=explain]');
      await explain.waitFor({ timeout: 10_000 });
      const f = feed.toLowerCase(); // "Eligible: following can serve …" or "… from cards_reader's discover."
      expect(await explain.locator('.verdict').textContent()).toMatch(new RegExp(`: ${f} can serve |'s ${f}\\.$`));
    }
  });

  it('"Why not?" names the muted word that removes an item for a reader', async () => {
    const victim = [...posts.values()].find((p) => /^[A-Za-z]{5,}\b/.test(p.title))!;
    const word = /^[A-Za-z]{5,}/.exec(victim.title)![0];
    await t.f.useCases.patchPreferences(MUTER, { add_muted_words: [{ phrase: word }] }, t.clock.now());
    await page.getByRole('link', { name: 'Why not?' }).click();
    await page.getByLabel('Reader id').fill(MUTER);
    await page.getByLabel('Item id').fill(victim.id);
    await page.getByLabel('Feed').selectOption('for-you');
    await page.getByRole('button', { name: 'Explain' }).click();
    const rule = page.locator('[data-testid=why-answer] [data-rule=muted_word]');
    await rule.waitFor({ timeout: 10_000 });
    expect(await rule.textContent()).toContain(word);
    await page.getByLabel('Item id').fill('no_such_item');
    await page.getByRole('button', { name: 'Explain' }).click();
    await expect
      .poll(() => page.locator('[data-testid=explain-error]').textContent(), { timeout: 10_000 })
      .toMatch(/^404 · /);
  });

  it('saves each page at 1440 × 900 and 375 × 812, with no horizontal scroll at 375 px', async () => {
    const item = [...posts.keys()].at(-1)!;
    const pages = ['for-you', 'discover', 'following', 'hot', `item/${item}`, `why/${item}`];
    for (const width of [1440, 375]) {
      await page.setViewportSize({ width, height: width === 1440 ? 900 : 812 });
      for (const p of pages) {
        await page.goto(`${base}/ui/#/${p}`);
        await page.locator('main h2').first().waitFor({ timeout: 10_000 });
        if (['for-you', 'discover', 'following'].includes(p)) await feedIds();
        if (p === 'hot') await page.locator('table.hot tbody tr').first().waitFor({ timeout: 10_000 });
        if (p.startsWith('item/')) await page.locator('.why-box').waitFor({ timeout: 10_000 });
        if (p.startsWith('why/')) {
          // the page opened on an item explains it for the reader in the box: the screenshot shows an answer
          await page.locator('main form.why-not').getByRole('button', { name: 'Explain' }).click();
          await page.locator('main [data-testid=why-answer] [data-testid=explain]').waitFor({ timeout: 10_000 });
        }
        if (width === 375)
          expect(await page.evaluate(() => document.documentElement.scrollWidth), p).toBeLessThanOrEqual(375);
        await page.screenshot({ path: `${OUT}${p.split('/')[0]}-${width}.png` });
      }
    }
  });
});
