/**
 * The main job on real input: HN posts imported through the service API, then MIND reader sessions
 * replayed against the running HTTP service on virtual time (`runSimulate`), on both store pairs.
 * A reader must never be served the same item twice within 7 days, and no request may fail.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHn } from '../../src/cli/import/hn.js';
import { runSimulate, type SimulateReport } from '../../src/cli/simulate.js';
import { SERVICE_KEY, startTestApp, type TestApp } from '../support/app.js';

const HN = fileURLToPath(new URL('../../../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz', import.meta.url));
const MIND = fileURLToPath(new URL('../../../shared/data/mind/MINDsmall_train_sample_behaviors.tsv.gz', import.meta.url));

describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const)('replay of MIND sessions over HN items on $name', ({ hot, db }) => {
  let t: TestApp;
  let report: SimulateReport;

  beforeAll(async () => {
    t = await startTestApp({ hot, db });
    for await (const batch of parseHn(HN, { batchSize: 1000 })) await t.f.content.upsertItems(batch.items, t.clock.now());
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    report = await runSimulate({
      url: `http://127.0.0.1:${port}`,
      serviceKey: SERVICE_KEY,
      behaviorsPath: MIND,
      sessions: 400,
      concurrency: 4,
      loadMores: 4,
      limit: 20,
      progress: false,
      out: () => {},
    });
  }, 240_000);
  afterAll(async () => t?.close());

  it('serves real pages to both kinds of reader without a single failed request', () => {
    expect(report.sessions).toBe(400);
    expect(report.requests).toBe(400 * 5);
    expect(report.errors).toEqual({});
    expect(report.readersWithInterests).toBeGreaterThan(0);
    expect(report.readersWithInterests).toBeLessThan(report.distinctReaders);
    // ~55 HN posts a day inside a 5.4-day horizon: every session's refresh finds a full page.
    expect(report.itemsServed).toBeGreaterThan(400 * 20);
  });

  it('never serves a reader the same item twice within 7 days', () => {
    expect(report.duplicateExamples).toEqual([]);
    expect(report.duplicates).toBe(0);
    expect(report.exitCode).toBe(0);
  });

  it('drops candidates the readers have seen (repeat readers exist in the sample)', () => {
    expect(report.seenFilterDropped).toBeGreaterThan(0);
  });
});
