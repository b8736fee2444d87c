/**
 * Bounded slices of `freshet simulate discover`, which always runs on scratch stores it chooses and
 * removes (src/cli/scratch.ts) and says where in its first line:
 * - on the embedded default (in-memory PGlite + in-process stores): the newest 1,500 HN posts, 25 MIND
 *   sessions and 3 MovieLens readers, 8 pages of 20 each. The replay must end (its catch-up embedding
 *   once looped for ever when the items were written on a later virtual time than the embeddings),
 *   serve no item twice to a reader, and reach every phase;
 * - on PostgreSQL + Redis (a tiny slice): a schema and a key prefix of its own, both gone afterwards,
 *   and nothing written into the configured schema, key prefix or data folder.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/compose/config.js';
import { runSimulateDiscover, type SimulateDiscoverOptions } from '../../src/cli/discover/simulate.js';
import { openPostgres } from '../../src/kernel/sql/sql.js';
import { InputRefused } from '../../src/cli/input-file.js';
import { TEST_DATA_DIR, TEST_DATABASE_URL, TEST_REDIS_URL, uniquePrefix, uniqueSchema } from '../support/env.js';
import { seedPgliteDataDir } from '../support/pglite.js';

const DATA = TEST_DATA_DIR;
const FILES = {
  hnPath: `${DATA}/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz`,
  behaviorsPath: `${DATA}/mind/MINDsmall_train_sample_behaviors.tsv.gz`,
  ratingsPath: `${DATA}/movielens/ml-latest-small/ratings.csv.gz`,
};
const KEYS = { FRESHET_SERVICE_KEY: 'k'.repeat(20), FRESHET_SECRET: 's'.repeat(20) };

/** The scratch line: `simulate discover: scratch stores (removed at the end): <where>`. */
function scratchLine(lines: readonly string[]): string {
  const line = lines.find((l) => l.startsWith('simulate discover: ')) ?? '';
  expect(lines[0]).toBe(line); // printed first, before anything is loaded
  return line;
}

/** Keys of the test Redis under `prefix`. */
async function keysUnder(prefix: string): Promise<string[]> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    return await redis.keys(`${prefix}*`);
  } finally {
    redis.disconnect();
  }
}

describe('simulate discover (real-data slice)', () => {
  it('ends, serves no duplicates, and pages hold items of every phase', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'freshet-simdisc-'));
    seedPgliteDataDir(dataDir);
    const before = readdirSync(dataDir).sort();
    try {
      const config = loadConfig({ LOG_LEVEL: 'silent', FRESHET_DATA_DIR: dataDir, ...KEYS });
      const lines: string[] = [];
      const r = await runSimulateDiscover(config, {
        ...FILES,
        items: 1_500,
        sessions: 25,
        movielensReaders: 3,
        pages: 8,
        limit: 20,
        out: (t) => lines.push(t),
      });
      expect(r.items).toBe(1_500);
      expect(r.readers.movielens).toBe(3);
      expect(r.sessions).toBe(28);
      expect(r.signals).toBeGreaterThan(0);
      expect(r.served).toBeGreaterThan(0);
      expect(r.duplicates).toBe(0);
      expect(r.exitCode).toBe(0);
      for (const source of ['followed', 'discovery', 'newest'] as const)
        expect(r.pagesWith[source], source).toBeGreaterThan(0);
      expect(lines.join('\n')).toContain('duplicates served           0');
      const m = /^simulate discover: scratch stores \(removed at the end\): PGlite in memory, data folder (\S+)$/.exec(
        scratchLine(lines),
      );
      expect(m, lines[0]).not.toBeNull();
      expect(m![1]).not.toBe(dataDir);
      expect(existsSync(m![1]!)).toBe(false); // the scratch folder is gone
      expect(readdirSync(dataDir).sort()).toEqual(before); // the configured folder is untouched
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000); // a bound against a hang, not a speed check: files run in parallel on 2 shared cores

  it('refuses a missing input file in one line naming it, before any scratch store is set up', async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', FRESHET_DATA_DIR: '/nonexistent/freshet-data', ...KEYS });
    for (const missing of ['behaviorsPath', 'ratingsPath', 'hnPath'] as const) {
      const lines: string[] = [];
      const run = runSimulateDiscover(config, {
        ...FILES,
        [missing]: '/nonexistent/input.gz',
        out: (t) => lines.push(t),
      });
      await expect(run, missing).rejects.toThrow(
        new InputRefused(
          '/nonexistent/input.gz: no such file — check the path (the data sets are in ../shared/data/, beside the repository)',
        ),
      );
      expect(lines).toEqual([]); // no "scratch stores" line: nothing was set up
    }
  });

  it('on PostgreSQL + Redis: a schema and a key prefix of its own, removed afterwards; the configured ones untouched', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'freshet-simdisc-pg-'));
    const schema = uniqueSchema();
    const prefix = uniquePrefix();
    const admin = await openPostgres(TEST_DATABASE_URL, { schema }); // the configured schema, empty
    try {
      const url = new URL(TEST_DATABASE_URL);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const config = loadConfig({
        LOG_LEVEL: 'silent',
        FRESHET_DATA_DIR: dataDir,
        FRESHET_DATABASE_URL: url.toString(),
        FRESHET_REDIS_URL: TEST_REDIS_URL,
        FRESHET_KEY_PREFIX: prefix,
        ...KEYS,
      });
      const lines: string[] = [];
      let scratchSchemaWhilePrinted: Promise<number> | undefined;
      const schemaCount = async (name: string) =>
        (
          await admin.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = $1',
            [name],
          )
        )[0]!.n;
      const out = (t: string) => {
        lines.push(t);
        const s = /PostgreSQL schema (freshet_sim_discover_[0-9a-f]{8}) /.exec(t);
        if (s) scratchSchemaWhilePrinted ??= schemaCount(s[1]!);
      };
      const opts: SimulateDiscoverOptions = {
        ...FILES,
        items: 200,
        sessions: 3,
        movielensReaders: 1,
        pages: 2,
        limit: 10,
        out,
      };
      const r = await runSimulateDiscover(config, opts);
      expect(r.served).toBeGreaterThan(0);
      expect(r.duplicates).toBe(0);

      const m =
        /^simulate discover: scratch stores \(removed at the end\): PostgreSQL schema (freshet_sim_discover_[0-9a-f]{8}) on (\S+), data folder (\S+), Redis key prefix (fsim[0-9a-f]{8}:)$/.exec(
          scratchLine(lines),
        );
      expect(m, lines[0]).not.toBeNull();
      const [, scratchSchema, where, scratchDir, scratchPrefix] = m!;
      expect(where).toBe(url.toString()); // no password to redact here
      expect(await scratchSchemaWhilePrinted).toBe(1); // it existed while the replay ran
      expect(await schemaCount(scratchSchema!)).toBe(0); // and is dropped
      expect(await keysUnder(scratchPrefix!)).toEqual([]);
      expect(existsSync(scratchDir!)).toBe(false);
      // nothing went to the configured stores
      expect(await keysUnder(prefix)).toEqual([]);
      expect(
        await admin.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema]),
      ).toEqual([]);
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      await admin.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
