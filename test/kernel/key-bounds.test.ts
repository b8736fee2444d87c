/**
 * No Redis key without a time to live or a documented bound (issue 10.7): every capability is driven
 * over HTTP against a real Redis under its own prefix — publishes (pushed and pulled), follows and
 * backfills, following reads that rebuild an empty inbox and then receive pushes into it (the case that
 * once left inboxes for ever), for-you and discover pages, views (counted and suspicious), engagements,
 * feedback, readiness, a hot checkpoint — then every key under the prefix is SCANned and each must
 * belong to a family of src/kernel/redis/key-families.ts and have a time to live unless its family
 * names a bound. docs/operations.md carries that list's table.
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_FAMILIES, keyFamilyOf, keyFamilyTable } from '../../src/kernel/redis/key-families.js';
import { TEST_REDIS_URL } from '../support/env.js';
import { T0, startTestApp, type TestApp } from '../support/app.js';
import { MIN, follow, page, publish, register, settle, svc, withWorker } from '../support/following.js';

const ENV = {
  FRESHET_CELEBRITY_THRESHOLD: '2',
  FRESHET_INBOX_LENGTH: '12',
  FRESHET_OUTBOX_LENGTH: '12',
  FRESHET_FOLLOW_BACKFILL: '3',
};

describe('Redis keys: a time to live or a documented bound for every key', () => {
  let t: TestApp;
  let redis: Redis;
  beforeAll(async () => {
    t = withWorker(await startTestApp({ hot: 'redis', env: ENV }));
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    redis?.disconnect();
    await t?.close();
  });

  /** One request as the service, asserting 200. */
  async function call(method: 'GET' | 'POST' | 'PUT', url: string, nowMs: number, payload?: unknown, reader?: string) {
    const headers: Record<string, string> = {
      ...svc,
      'x-freshet-now': String(nowMs),
      ...(reader ? { 'x-freshet-reader': reader } : {}),
    };
    const res = await t.app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(200);
    return res.json() as { data: unknown };
  }

  it('every family has a time to live or a bound, and the operations page carries the table', () => {
    for (const f of KEY_FAMILIES) expect(f.ttl !== null || f.bound !== null, f.name).toBe(true);
    expect(readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8')).toContain(keyFamilyTable());
  });

  it('after a workload over every capability, SCAN finds no key without a time to live outside a bounded family', async () => {
    await register(t, 'k_a', 'k_star', 'k_b');
    for (const r of ['k_r1', 'k_r2', 'k_r3']) await follow(t, r, 'k_star'); // 3 followers > 2: pulled
    await follow(t, 'k_r1', 'k_a');
    await follow(t, 'k_r2', 'k_a');
    // first reads rebuild empty inboxes (no ZSET yet); the pushes below create them
    for (const r of ['k_r1', 'k_r2']) expect((await page(t, r, T0)).rebuilt).toBe(true);
    await publish(t, 'k_a', ['k1', 'k2'], T0 + MIN);
    await publish(t, 'k_star', ['k3'], T0 + MIN);
    await publish(t, 'k_b', ['k4', 'k5'], T0 + MIN);
    await settle(t);
    expect((await page(t, 'k_r1', T0 + 2 * MIN)).ids).toEqual(['k3', 'k2', 'k1']);
    await follow(t, 'k_r1', 'k_b', T0 + 2 * MIN); // backfill into a ready inbox
    await call('POST', '/v1/feeds/for-you', T0 + 3 * MIN, { action: 'refresh', limit: 3 }, 'k_r1');
    await call('POST', '/v1/feeds/for-you', T0 + 3 * MIN, { action: 'load_more', limit: 3 }, 'k_r1');
    await call('GET', '/v1/feeds/discover?limit=3', T0 + 3 * MIN, undefined, 'k_r2');
    const views = ['k1', 'k1', 'k2', 'k3'].map((item, i) => ({ item_id: item, visitor_id: `k_v${i % 2}` }));
    await call('POST', '/v1/views', T0 + 4 * MIN, views);
    await call('POST', '/v1/engagements', T0 + 4 * MIN, { item_id: 'k2', kind: 'like' }, 'k_r1');
    await call('POST', '/v1/feedback', T0 + 4 * MIN, { item_id: 'k4', kind: 'not_interested' }, 'k_r1');
    await call('GET', '/v1/feeds/discover?limit=3', T0 + 5 * MIN, undefined, 'k_r1');
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    await t.f.hotMaintenance.checkpoint(T0 + 5 * MIN);

    const prefix = t.config.keyPrefix;
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `${prefix}*`, count: 1000 })) keys.push(...(batch as string[]));
    const byFamily = new Map<string, { keys: number; withoutTtl: number }>();
    const offenders: string[] = [];
    for (const key of keys) {
      const rest = key.slice(prefix.length);
      const family = keyFamilyOf(rest);
      const ttl = await redis.pttl(key);
      if (ttl === -2) continue; // expired meanwhile (probe keys)
      if (!family) {
        offenders.push(`${rest}: no family in src/kernel/redis/key-families.ts`);
        continue;
      }
      const n = byFamily.get(family.name) ?? { keys: 0, withoutTtl: 0 };
      n.keys++;
      if (ttl === -1) {
        n.withoutTtl++;
        if (family.bound === null) offenders.push(`${rest}: no time to live, and ${family.name} has no bound`);
      }
      byFamily.set(family.name, n);
    }
    console.log(
      `${keys.length} keys in ${byFamily.size} families: ${[...byFamily].map(([name, n]) => `${name} ${n.keys}${n.withoutTtl ? ` (${n.withoutTtl} bounded)` : ''}`).join(', ')}`,
    );
    expect(offenders).toEqual([]);
    // the workload reached the families that matter here (else the scan proves little)
    for (const name of [
      'tl:in:{u:<r>}',
      'tl:in:meta:{u:<r>}',
      'tl:out:{u:<a>}',
      'tl:out:meta:{u:<a>}',
      'bf:{<s>}:<day>',
      'rsf:{u:<r>}',
      'rv:{u:<r>}',
      '{<h>}:counter:views:<item>',
      '{<q>}:fanout:<list>',
    ]) {
      expect(byFamily.has(name), name).toBe(true);
    }
    expect(byFamily.get('tl:in:{u:<r>}')!.keys).toBeGreaterThanOrEqual(2); // the inboxes the pushes created
  });
});
