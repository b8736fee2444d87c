/**
 * Online quality in /metrics (docs/learning.md "Online quality"): impressions per feed as pages are
 * served, and the clicks (counted views) and engagements the client attributes to a feed with `feed`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_KEY, item, startTestApp, type TestApp } from '../support/app.js';

const svc = { authorization: `Bearer ${SERVICE_KEY}` };

/** The value of one sample of `/metrics` (0 when absent). */
function sample(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('online quality', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    const items = Array.from({ length: 6 }, (_, k) => item(`q${k}`, 60_000 * (k + 1), { author_id: `au${k}` }));
    expect((await t.app.inject({ method: 'POST', url: '/v1/items', payload: items, headers: svc })).statusCode).toBe(
      200,
    );
  });
  afterAll(() => t?.close());

  it('counts each feed’s impressions, and the clicks a client attributes to it', async () => {
    const token = await t.token('reader_q');
    const auth = { authorization: `Bearer ${token}` };
    const page = await t.app.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: { action: 'refresh', limit: 4 },
      headers: auth,
    });
    expect(page.json().data.items).toHaveLength(4);
    await t.app.inject({ method: 'GET', url: '/v1/feeds/discover?limit=2', headers: auth });
    const clicked = page.json().data.items[0].id as string;
    const view = await t.app.inject({
      method: 'POST',
      url: '/v1/views',
      payload: { item_id: clicked, feed: 'for-you' },
      headers: auth,
    });
    expect(view.json().data.verdict).toBe('counted');
    const bad = await t.app.inject({
      method: 'POST',
      url: '/v1/views',
      payload: { item_id: clicked, feed: 'inbox' },
      headers: auth,
    });
    expect(bad.statusCode).toBe(400);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(sample(metrics, 'freshet_feed_impressions_total', 'feed="for_you"')).toBe(4);
    expect(sample(metrics, 'freshet_feed_impressions_total', 'feed="discover"')).toBe(2);
    expect(sample(metrics, 'freshet_feed_clicks_total', 'feed="for_you"')).toBe(1);
    expect(sample(metrics, 'freshet_feed_clicks_total', 'feed="discover"')).toBe(0);
  });
});
