/**
 * How `/ui` is served (src/server/explorer.ts) and the explorer's Prometheus reading (src/ui/prom.ts):
 * the built files with a same-origin CSP, `/ui` redirected to `/ui/`, an unbuilt bundle answered 503
 * with the way to build it (the API unaffected); totals, histograms and quantiles read from a real scrape.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app.js';
import { parseProm, quantile } from '../../src/ui/prom.js';
import { SERVICE_KEY, startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
const dir = mkdtempSync(join(tmpdir(), 'freshet-ui-'));
beforeAll(async () => {
  t = await startTestApp({ db: 'postgres' });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
  writeFileSync(join(dir, 'app.js'), 'export {};');
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('serving /ui', () => {
  it('serves the bundle under /ui/ with a same-origin CSP, and redirects /ui there', async () => {
    const app = await buildApp(t.f, { ui: { root: dir }, closeStores: false, logger: false });
    try {
      const redirect = await app.inject({ url: '/ui' });
      expect([redirect.statusCode, redirect.headers.location]).toEqual([302, '/ui/']);
      const root = await app.inject({ url: '/' }); // the printed URL opens the explorer
      expect([root.statusCode, root.headers.location]).toEqual([302, '/ui/']);
      const icon = await app.inject({ url: '/favicon.ico' }); // no 404 on every page load
      expect([icon.statusCode, icon.headers['content-type']]).toEqual([200, 'image/svg+xml']);
      const index = await app.inject({ url: '/ui/' });
      expect(index.statusCode).toBe(200);
      expect(index.headers['content-type']).toContain('text/html');
      expect(index.headers['content-security-policy']).toContain("default-src 'self'");
      const js = await app.inject({ url: '/ui/app.js' });
      expect([js.statusCode, js.body]).toEqual([200, 'export {};']);
      expect((await app.inject({ url: '/ui/../package.json' })).statusCode).not.toBe(200);
      // the API keeps its own headers: no CSP outside /ui
      expect((await app.inject({ url: '/healthz' })).headers['content-security-policy']).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('answers 503 with how to build it when the bundle is missing, and the API still answers', async () => {
    const app = await buildApp(t.f, { ui: { root: join(dir, 'missing') }, closeStores: false, logger: false });
    try {
      const res = await app.inject({ url: '/ui/' });
      expect(res.statusCode).toBe(503);
      expect(res.body).toContain('npm run build');
      const api = await app.inject({ url: '/v1/hot', headers: { authorization: `Bearer ${SERVICE_KEY}` } });
      expect(api.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('the health page reads /metrics', () => {
  it('sums counters over labels and histograms bucket by bucket, from a real scrape', async () => {
    for (const [route, s] of [
      ['/a', 0.003],
      ['/a', 0.02],
      ['/b', 0.2],
      ['/b', 3],
    ] as const) {
      t.f.metrics.httpDuration.observe({ method: 'GET', route, status: '200' }, s);
    }
    t.f.metrics.seenDropped('for_you', 5);
    t.f.metrics.seenDropped('discover', 2);
    const scrape = parseProm(await t.f.metrics.registry.metrics());
    expect(scrape.values.get('freshet_seen_filter_dropped_total')).toBe(7);
    const h = scrape.histograms.get('freshet_http_request_duration_seconds')!;
    expect(h.count).toBeGreaterThanOrEqual(4);
    expect(h.buckets.at(-1)).toEqual({ le: Infinity, count: h.count });
    expect(h.buckets.find((b) => b.le === 0.005)!.count).toBeGreaterThanOrEqual(1);
  });

  it('estimates quantiles inside the bucket (linear), and says null for an empty histogram', () => {
    const h = {
      buckets: [
        { le: 1, count: 0 },
        { le: 2, count: 10 },
        { le: Infinity, count: 10 },
      ],
      sum: 15,
      count: 10,
    };
    expect(quantile(h, 0.5)).toBeCloseTo(1.5);
    expect(quantile(h, 1)).toBe(2);
    expect(quantile({ buckets: [{ le: Infinity, count: 0 }], sum: 0, count: 0 }, 0.5)).toBeNull();
    const tail = {
      buckets: [
        { le: 1, count: 1 },
        { le: Infinity, count: 3 },
      ],
      sum: 9,
      count: 3,
    };
    expect(quantile(tail, 0.9)).toBe(1); // in +Inf: the last finite bound
  });
});
