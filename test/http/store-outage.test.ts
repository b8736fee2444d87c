/**
 * A store that does not answer: `/readyz` names it with 503, feed requests answer 503 with code
 * 50301 (STORE_UNAVAILABLE) instead of hanging or a 500, and `/healthz` still answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_KEY, startTestApp, type TestApp } from '../support/app.js';

describe('Redis unreachable', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Port 1 on loopback: nothing listens there, connections are refused at once.
    t = await startTestApp({ hot: 'memory', env: { FRESHET_REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  afterAll(async () => t?.close());

  it('/readyz is 503 naming redis; /healthz is 200', async () => {
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ code: 50301, data: { stores: { postgres: true, redis: false } } });
    expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });

  it('a feed request gets 503 with code 50301', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/feeds/for-you',
      payload: { action: 'load_more', limit: 5 },
      headers: { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-reader': 'alice' },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 50301, data: null });
  });
});
