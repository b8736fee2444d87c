/**
 * What the explorer's browser tests share: the HN window they publish, the test app listening on a free
 * loopback port, Debian's Chromium (playwright-core) launched headless, and a page or context that may
 * reach that origin only (nothing is downloaded at run time). Screenshots go to {@link SCREENSHOTS}.
 */
import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { parseHn } from '../../src/cli/import-hn.js';
import type { PublishInput } from '../../src/use-cases/verbs.js';
import type { TestApp } from './app.js';
import { dataFile } from './env.js';

/** Where the browser tests save their screenshots (not committed). */
export const SCREENSHOTS = new URL('../../test-results/ui/', import.meta.url).pathname;
/** Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it when missing). */
const CHROMIUM = '/usr/bin/chromium';

/** The newest `n` posts of the HN sample published before 2016-03-01 (a dense, real window), oldest first. */
export async function hnWindow(n: number): Promise<PublishInput[]> {
  const all: PublishInput[] = [];
  for await (const batch of parseHn(dataFile('hn/hn_posts_2015-09_to_2016-09_sample.csv.gz'), { batchSize: 5000 }))
    all.push(...batch.items);
  const cut = Date.UTC(2016, 2, 1);
  return all
    .filter((i) => i.publishedAt < cut)
    .sort((a, b) => a.publishedAt - b.publishedAt)
    .slice(-n);
}

/**
 * Starts `t`'s server on a free loopback port and Chromium, and makes the screenshot folder. Answers the
 * server's base URL (`http://127.0.0.1:<port>`) and the browser (the caller closes both).
 */
export async function openBrowser(t: TestApp): Promise<{ base: string; browser: Browser }> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return { base, browser };
}

/** Lets `target` (a page or a context) reach `base` only: every other request is aborted. */
export async function sameOriginOnly(target: Page | BrowserContext, base: string): Promise<void> {
  await target.route('**/*', (route) => (route.request().url().startsWith(base) ? route.continue() : route.abort()));
}

/**
 * Clicks the navigation link `name` and waits until the explorer has routed to its page (the link is
 * marked `aria-current`, which happens as the previous page's content is replaced): the page changes on
 * the `hashchange` event after the click, so reading the page right after `click()` could still see the
 * previous one.
 */
export async function openPage(p: Page, name: string): Promise<void> {
  await p.locator('nav a[data-path]').first().waitFor({ timeout: 10_000 });
  const path = await p.evaluate(
    (label) =>
      [...document.querySelectorAll('nav a[data-path]')]
        .find((a) => a.firstChild?.textContent === label)
        ?.getAttribute('data-path'),
    name,
  );
  if (!path) throw new Error(`no navigation link "${name}"`);
  await p.locator(`nav a[data-path="${path}"]`).click();
  await p.locator(`nav a[data-path="${path}"][aria-current="page"]`).waitFor({ timeout: 10_000 });
}

/** Ids of the cards of the feed shown on `p`, in order, once no page of it is loading (`aria-busy`). */
export async function feedIds(p: Page): Promise<string[]> {
  await p.locator('ul.feed[aria-busy="false"]').waitFor({ timeout: 10_000 });
  return p.locator('ul.feed > li.card').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id!));
}
