/**
 * A bounded slice of the real-data replay (`freshet import graph` + `freshet simulate following`): the
 * Hershey's careers Twitter graph (3.7k users, 24k edges) and the first 1,200 HN posts, 30 readers,
 * celebrity threshold 200 — on the embedded stores and on Redis + BullMQ + PostgreSQL. Every sampled
 * reader's whole timeline must equal the SQL truth.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openPostgres } from '../src/adapters/postgres/sql.js';
import { runGraphImport } from '../src/cli/import/graph.js';
import { runSimulateFollowing } from '../src/cli/simulate-following.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniquePrefix, uniqueSchema } from './support/env.js';
import { dropPrefix } from './support/app.js';

const GRAPH = '../shared/data/graph/twitter_wsdm21/hersheycareers_follow_edges.tsv.gz';
const POSTS = '../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz';

async function slice(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-simfol-'));
  try {
    const config = loadConfig({ LOG_LEVEL: 'silent', FRESHET_DATA_DIR: dataDir, FRESHET_SERVICE_KEY: 'k'.repeat(20), FRESHET_SECRET: 's'.repeat(20), ...env });
    const lines: string[] = [];
    const imported = await runGraphImport(GRAPH, config, { progress: false, out: (l) => lines.push(l) });
    expect(imported).toMatchObject({ edges: 23_939, selfLoops: 0, invalid: 0, users: 3_726 });
    const again = await runGraphImport(GRAPH, config, { progress: false, out: (l) => lines.push(l) });
    expect(again.inserted).toBe(0); // idempotent
    const report = await runSimulateFollowing(config, { postsPath: POSTS, posts: 1_200, readers: 30, check: 30, celebrityThreshold: 200, out: (t) => lines.push(t) });
    expect(report.published).toBe(1_200);
    expect(report.fanoutJobs).toBe(1_200);
    expect(report.celebrities).toBeGreaterThan(0);
    expect(report.pulledJobs).toBeGreaterThan(0);
    expect(report.rebuilds).toBeGreaterThan(0);
    expect(report.unfollows).toBeGreaterThan(0);
    expect(report.checked).toBe(30);
    expect(report.checkedItems).toBeGreaterThan(0); // the check compared real timelines, not empty ones
    expect(report.mismatchExamples).toEqual([]);
    expect(report.mismatches).toBe(0);
    expect(report.exitCode).toBe(0);
    return report;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('simulate following (real-data slice)', () => {
  it('embedded stores: PGlite + in-process', async () => {
    const r = await slice({});
    expect(r.inboxes.bytes).toBeNull();
  }, 120_000);

  it('Redis + BullMQ + PostgreSQL', async () => {
    const schema = uniqueSchema();
    const prefix = uniquePrefix();
    const admin = await openPostgres(TEST_DATABASE_URL, { schema });
    try {
      const url = new URL(TEST_DATABASE_URL);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const r = await slice({ FRESHET_DATABASE_URL: url.toString(), FRESHET_REDIS_URL: TEST_REDIS_URL, FRESHET_KEY_PREFIX: prefix });
      expect(r.deliveries).toBeGreaterThan(0);
      expect(r.inboxes.bytes).toBeGreaterThan(0);
    } finally {
      await admin.exec(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
      await dropPrefix(prefix);
    }
  }, 120_000);
});
