/**
 * The explorer's Overview and Health pages in a real browser (Debian's Chromium driven by
 * playwright-core) on PostgreSQL + Redis: signing in lands on Overview, whose tiles show figures; after
 * items are published and views and a feed read recorded through the API, its charts move; every chart
 * has labelled axes with units; Health's latency of each interval stays flat at 0 while no API request
 * arrives, rises in the interval of one and falls back after it; Health's figures count the page's last
 * minutes (not the requests before it opened), and its table shows them by route. Both pages work at 375 px (no
 * horizontal scroll); screenshots at 1440 and 375 px go to test-results/ui/. The pages sample every
 * 300 ms here (`<html data-sample-ms>`), and the store readings of /metrics are not cached.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../scripts/build-ui.mjs';
import { SERVICE_KEY, item, startTestApp, type TestApp } from '../support/app.js';
import { SCREENSHOTS, openBrowser, openPage, sameOriginOnly } from '../support/explorer.js';

const OUT = SCREENSHOTS;
const READER = 'ov_ui_reader';
const svc = { authorization: `Bearer ${SERVICE_KEY}`, 'content-type': 'application/json' };

let t: TestApp;
let browser: Browser;
let page: Page;
let base: string;

/** A call of the API with the service key; fails the test unless it answers 200. */
async function api(method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { method, headers: { ...svc, ...headers }, body: JSON.stringify(body) });
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBe(200);
}

/** The values a tile's chart draws (`data-values`; null for a gap). */
async function chartValues(selector: string): Promise<(number | null)[]> {
  const raw = (await page.locator(`${selector} svg.chart`).last().getAttribute('data-values')) ?? '';
  return raw ? raw.split(',').map((v) => (v === '-' ? null : Number(v))) : [];
}

const figure = (id: string) => page.locator(`[data-tile="${id}"] .figure`).first().textContent();

beforeAll(async () => {
  const [app] = await Promise.all([
    startTestApp({ db: 'postgres', hot: 'redis', env: { FRESHET_METRICS_STORE_READ_S: '0' } }),
    buildUi(),
  ]);
  t = app;
  ({ base, browser } = await openBrowser(t));
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await sameOriginOnly(page, base);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the explorer Overview', () => {
  it('is the landing page; its tiles show figures, and its charts move with publishes, views and reads', async () => {
    await page.goto(`${base}/ui/`);
    await page.evaluate(() => {
      document.documentElement.dataset.sampleMs = '300';
    });
    await page.getByLabel('Key or token').fill(SERVICE_KEY);
    await page.getByLabel(/Reader id/).fill(READER);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('main h2').first().textContent(), { timeout: 10_000 }).toBe('Overview');
    expect(new URL(page.url()).hash).toBe('#/overview');
    const first = page.getByRole('navigation', { name: 'Pages' }).getByRole('link').first();
    expect(await first.textContent()).toBe('Overview');
    expect(await first.getAttribute('aria-current')).toBe('page');

    await expect.poll(() => figure('catalog'), { timeout: 10_000 }).toBe('0 items');
    expect(await figure('readers-1h')).toBe('0 readers');
    expect(await figure('database')).toMatch(/^PostgreSQL \d+(\.\d+)? MB$/);
    expect(await figure('memory')).toMatch(/^Redis \d+(\.\d+)? MB$/);
    expect(await page.locator('[data-tile="stores"] li').allTextContents()).toEqual(['postgres: up', 'redis: up']);

    await api('POST', '/v1/items', [item('ov1', 60_000), item('ov2', 120_000), item('ov3', 180_000)]);
    const views = ['ov1', 'ov1', 'ov2'].map((id, i) => ({ item_id: id, visitor_id: `ov_visitor_${i}` }));
    await api('POST', '/v1/views', views);
    await api('POST', '/v1/feeds/for-you', { action: 'refresh', limit: 3 }, { 'x-freshet-reader': READER });

    await expect.poll(() => figure('catalog'), { timeout: 10_000 }).toBe('3 items');
    await expect.poll(() => figure('readers-1h'), { timeout: 10_000 }).toBe('4 readers');
    expect((await chartValues('[data-tile="catalog"]')).at(-1)).toBe(3);
    // the intervals of the publish and the views show a rate above 0 (the chart keeps the last 60 samples)
    await expect
      .poll(async () => Math.max(...(await chartValues('[data-tile="publishes"]')).map(Number)), { timeout: 10_000 })
      .toBeGreaterThan(0);
    expect(Math.max(...(await chartValues('[data-tile="views"]')).map(Number))).toBeGreaterThan(0);
    expect((await chartValues('[data-tile="seen-fill"]')).at(-1)).toBeGreaterThan(0);
    expect(await figure('views')).toMatch(/ · 3 since start$/);

    // every chart has y ticks with its unit and an x axis from the window's start to now
    const axes = await page.locator('.tile svg.chart').evaluateAll((els) =>
      els.map((e) => ({
        unit: e.getAttribute('data-unit')!,
        y: [...e.querySelectorAll('text.tick:not(.xtick)')].map((x) => x.textContent!),
        x: [...e.querySelectorAll('text.xtick')].map((x) => x.textContent!),
      })),
    );
    expect(axes.length).toBe(12);
    for (const a of axes) {
      expect(a.y.length).toBe(3);
      for (const label of a.y) expect(label.endsWith(a.unit), `${label} in ${a.unit}`).toBe(true);
      expect(a.x).toEqual(['−18 s', '−9 s', 'now']); // 60 samples × 300 ms
    }
    await page.screenshot({ path: `${OUT}overview-1440.png`, fullPage: true });

    await page.setViewportSize({ width: 375, height: 812 });
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), { timeout: 10_000 })
      .toBeLessThanOrEqual(0);
    const lefts = await page.locator('.tile').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().left));
    expect(new Set(lefts).size).toBe(1); // the tiles stack in one column
    await page.screenshot({ path: `${OUT}overview-375.png`, fullPage: true });
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  it("Health charts each interval's mean API latency: flat at 0 with no request, up in the interval of one, back after", async () => {
    await openPage(page, 'Health');
    const latency = () => chartValues('.metric:first-child');
    await expect.poll(async () => (await latency()).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
    const idle = await latency();
    expect(idle).toEqual(idle.map(() => 0));
    const axis = await page.locator('.metric:first-child svg.chart').last().locator('text.tick').allTextContents();
    expect(axis.filter((x) => x.endsWith(' ms')).length).toBe(3);
    await page.screenshot({ path: `${OUT}health-1440.png`, fullPage: true });

    // the figures are the page's last minutes, not the server's life (which holds the Overview test's requests)
    const latencyFigure = () => page.locator('.metric:first-child .figure').textContent();
    expect(await latencyFigure()).toMatch(/^Nothing observed in the last \d+(\.\d+)? s\. · \d+ since start$/);
    await api('POST', '/v1/views', [{ item_id: 'ov3', visitor_id: 'ov_visitor_late' }]);
    await expect.poll(async () => Math.max(...(await latency()).map(Number)), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await latencyFigure()).toMatch(/^1 in the last \d+(\.\d+)? s · mean .* · \d+ since start$/);
    // per route: the one request of the window, on its route
    const routes = page.locator('.metric:first-child table.routes tr[data-route]');
    expect(
      await routes.evaluateAll((rows) => rows.map((r) => [...r.children].slice(0, 2).map((c) => c.textContent))),
    ).toEqual([['POST /v1/views', '1']]);
    // the next intervals hold no request: the line comes back to 0 (a running mean would stay up)
    await expect.poll(async () => (await latency()).at(-1), { timeout: 10_000 }).toBe(0);

    await page.setViewportSize({ width: 375, height: 812 });
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), { timeout: 10_000 })
      .toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${OUT}health-375.png`, fullPage: true });
    await page.setViewportSize({ width: 1440, height: 900 });
  });
});
