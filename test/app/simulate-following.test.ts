/**
 * A bounded slice of the real-data replay (`freshet import graph` + `freshet simulate following`): the
 * Hershey's careers Twitter graph (3.7k users, 24k edges) and the first 600 HN posts, 30 readers,
 * celebrity threshold 200 — on scratch embedded stores (the default: the configured data folder is left
 * untouched) and in place on Redis + BullMQ + PostgreSQL. Every sampled reader's whole timeline must
 * equal the SQL truth.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { openPostgres } from '../../src/kernel/sql/sql.js';
import { runGraphImport } from '../../src/cli/following/import-graph.js';
import { runSimulateFollowing } from '../../src/cli/following/simulate.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, dataFile, uniquePrefix, uniqueSchema } from '../support/env.js';
import { dropPrefix } from '../support/app.js';

/**
 * A bound against a hang, not a speed check: files run in parallel on a shared 2-core machine, where
 * one slice has taken 2.5 minutes (speed is measured in bench/).
 */
const SLICE_TIMEOUT_MS = 300_000;
const GRAPH = dataFile('graph/twitter_wsdm21/hersheycareers_follow_edges.tsv.gz');
const POSTS = dataFile('hn/hn_posts_2015-09_to_2016-09_sample.csv.gz');
const POSTS_N = 600;

async function slice(env: Record<string, string>, inPlace: boolean) {
  const dataDir = mkdtempSync(join(tmpdir(), 'freshet-simfol-'));
  try {
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      FRESHET_DATA_DIR: dataDir,
      FRESHET_SERVICE_KEY: 'k'.repeat(20),
      FRESHET_SECRET: 's'.repeat(20),
      ...env,
    });
    const lines: string[] = [];
    if (inPlace) {
      const imported = await runGraphImport(GRAPH, config, { progress: false, out: (l) => lines.push(l) });
      expect(imported).toMatchObject({ edges: 23_939, selfLoops: 0, invalid: 0, users: 3_726 });
      const again = await runGraphImport(GRAPH, config, { progress: false, out: (l) => lines.push(l) });
      expect(again.inserted).toBe(0); // idempotent
    }
    const opts = {
      postsPath: POSTS,
      posts: POSTS_N,
      readers: 30,
      check: 30,
      celebrityThreshold: 200,
      progress: false,
      out: (t: string) => lines.push(t),
    };
    const report = await runSimulateFollowing(config, inPlace ? { ...opts, inPlace } : { ...opts, graphPath: GRAPH });
    const head = lines.find((l) => l.startsWith('simulate following:')) ?? '';
    expect(head).toMatch(
      inPlace
        ? /^simulate following: the configured stores/
        : /^simulate following: scratch stores \(removed at the end\): PGlite in memory, data folder \S+/,
    );
    if (!inPlace) {
      expect(lines.some((l) => /^imported 23939 edges .* 3726 users in the graph$/.test(l))).toBe(true);
      expect(readdirSync(dataDir)).toEqual([]); // the user's data folder is untouched
      const scratchDir = /data folder (\S+)/.exec(head)![1]!.replace(/,$/, '');
      expect(existsSync(scratchDir)).toBe(false); // and the scratch folder is gone
    }
    expect(report.published).toBe(POSTS_N);
    expect(report.fanoutJobs).toBe(POSTS_N);
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
  it(
    'scratch embedded stores by default: PGlite in memory + in-process, the configured folder untouched',
    async () => {
      const r = await slice({}, false);
      expect(r.inboxes.bytes).toBeNull();
    },
    SLICE_TIMEOUT_MS,
  );

  it(
    'in place on Redis + BullMQ + PostgreSQL',
    async () => {
      const schema = uniqueSchema();
      const prefix = uniquePrefix();
      const admin = await openPostgres(TEST_DATABASE_URL, { schema });
      try {
        const url = new URL(TEST_DATABASE_URL);
        url.searchParams.set('options', `-c search_path=${schema}`);
        const r = await slice(
          { FRESHET_DATABASE_URL: url.toString(), FRESHET_REDIS_URL: TEST_REDIS_URL, FRESHET_KEY_PREFIX: prefix },
          true,
        );
        expect(r.deliveries).toBeGreaterThan(0);
        expect(r.inboxes.bytes).toBeGreaterThan(0);
        expect(r.inboxes.count).toBeGreaterThan(0);
        expect(r.inboxes.withoutTtl).toBe(0); // issue 10.7: 82 of 362 once had none
      } finally {
        await admin.exec(`DROP SCHEMA ${schema} CASCADE`);
        await admin.close();
        await dropPrefix(prefix);
      }
    },
    SLICE_TIMEOUT_MS,
  );
});
