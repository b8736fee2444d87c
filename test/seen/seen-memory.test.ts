/**
 * A reader costs what they use (issue 20): a reader who opened one discover page of 20 holds at most
 * 2 KB of Redis — every key under its hash tag `{u:<reader>}` (its per-reader seen filter's first
 * sub-filter, state and journal, its cached exclusions), `MEMORY USAGE` summed — on a standalone
 * Redis and on a 3-master Cluster, through the HTTP app with default settings. Before issue 20 the
 * first impression allocated a 100,000-member sub-filter: 164 KB for those 20 items.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '../../src/kernel/redis/client.js';
import { SERVICE_KEY, T0, startTestApp, type TestApp } from '../support/app.js';
import { fileCluster } from '../support/redis-cluster.js';
import { fileRedis } from '../support/redis.js';

const cluster = fileCluster();
const standalone = fileRedis();
const svc = { authorization: `Bearer ${SERVICE_KEY}` };
const DIM = 8;
const BUDGET_BYTES = 2048;
const READER = 'light';

const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
});

/** Every key under `prefix` holding `{u:<reader>}`, with its `MEMORY USAGE` (SAMPLES 0), on every node. */
async function readerKeys(nodes: RedisClient[], prefix: string, reader: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', `${prefix}*{u:${reader}}*`, 'COUNT', 1000);
      cursor = next;
      for (const k of found) out.set(k, Number(await node.call('MEMORY', 'USAGE', k, 'SAMPLES', '0')));
    } while (cursor !== '0');
  }
  return out;
}

/** The app on a Redis, 40 items published, and `READER`'s one discover page of 20. */
async function onePage(env: Record<string, string>, hot: 'redis' | 'memory'): Promise<TestApp> {
  const t = await startTestApp({ hot, db: 'pglite', env: { FRESHET_EMBEDDING_DIM: String(DIM), ...env } });
  apps.push(t);
  const items = Array.from({ length: 40 }, (_, i) => ({
    id: `item${i}`,
    author_id: 'author',
    title: `Item ${i}`,
    published_at: Math.floor((T0 - (i + 1) * 60_000) / 1000),
    embedding: Array.from({ length: DIM }, (_, k) => (k === i % DIM ? 1 : 0.1)),
  }));
  expect((await t.app.inject({ method: 'POST', url: '/v1/items', payload: items, headers: svc })).statusCode).toBe(200);
  const res = await t.app.inject({
    method: 'GET',
    url: '/v1/feeds/discover?limit=20',
    headers: { ...svc, 'x-freshet-reader': READER, 'x-freshet-now': String(T0) },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect((res.json().data as { items: unknown[] }).items).toHaveLength(20);
  return t;
}

function expectWithinBudget(where: string, keys: Map<string, number>): void {
  const total = [...keys.values()].reduce((a, b) => a + b, 0);
  const listing = [...keys].map(([k, b]) => `${k.replace(/^.*?(rsf|ex|rv|feed|tl)/, '$1')} ${b}`).join(', ');
  console.log(`light reader on ${where}: ${total} B (${listing})`);
  // the filter itself is there (the page's impressions were recorded), and everything fits the budget
  expect(listing).toMatch(/rsf:\{u:light\} \d+/);
  expect(total, listing).toBeLessThanOrEqual(BUDGET_BYTES);
}

describe('a light reader’s Redis keys', () => {
  it('total at most 2 KB after one discover page of 20, on a standalone Redis', async () => {
    const prefix = standalone.nextPrefix();
    await onePage({ FRESHET_KEY_PREFIX: prefix }, 'redis');
    expectWithinBudget('Redis', await readerKeys([standalone.redis], prefix, READER));
  });

  it('total at most 2 KB after one discover page of 20, on a 3-master Cluster', async () => {
    const prefix = cluster.nextPrefix();
    const masters = cluster.redis.nodes('master');
    const nodes = masters.map((m) => `${m.options.host}:${m.options.port}`).join(',');
    // in-process hot stores for the harness; every Redis-backed capability goes to the Cluster
    await onePage({ FRESHET_KEY_PREFIX: prefix, FRESHET_REDIS_CLUSTER_NODES: nodes }, 'memory');
    expectWithinBudget('a Cluster', await readerKeys(masters, prefix, READER));
  });
});
