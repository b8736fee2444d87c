/**
 * `freshet import graph FILE` on PGlite: what it skips and counts (self-loops, malformed rows, ids outside
 * the id pattern, edges across a block), the `--prefix`, idempotence, exact follower counts afterwards, the
 * files it refuses (no header, a header that is not a follow-edge list), a truncated gzip (file, line, what
 * was committed, resume); and, on both store pairs, that an import reaches timelines whose inboxes were
 * already built (the `importFollows` use case drops them, the next read rebuilds them).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { openPglite } from '../../src/kernel/sql/sql.js';
import { PostgresSocialGraph } from '../../src/following/adapters/postgres-social-graph.js';
import { runGraphImport } from '../../src/cli/following/import-graph.js';
import { seedPgliteDataDir } from '../support/pglite.js';
import { dataFile } from '../support/env.js';
import { T0, startTestApp } from '../support/app.js';
import { follow, page, pageAll, publish, register, settle, truth, withWorker } from '../support/following.js';

const dir = mkdtempSync(join(tmpdir(), 'freshet-graph-import-'));
seedPgliteDataDir(dir);
const config = loadConfig({
  LOG_LEVEL: 'silent',
  FRESHET_DATA_DIR: dir,
  FRESHET_SERVICE_KEY: 'k'.repeat(20),
  FRESHET_SECRET: 's'.repeat(20),
});
const quiet = { progress: false, out: () => undefined };

function file(name: string, text: string, gz = false): string {
  const path = join(dir, name);
  writeFileSync(path, gz ? gzipSync(text) : text);
  return path;
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('freshet import graph', () => {
  it('imports valid edges, skips and counts self-loops and bad rows, is idempotent, counts followers exactly', async () => {
    const edges = file(
      'edges.tsv.gz',
      ['follower_id\tfollowee_id', '1\t2', '3\t2', '2\t1', '4\t4', '5', '6\t7\t8', 'a:b\t2', '', '1\t2'].join('\n') +
        '\n',
      true,
    );
    const first = await runGraphImport(edges, config, { ...quiet, prefix: 'g', batchSize: 2 });
    expect(first).toMatchObject({ edges: 4, inserted: 3, blocked: 0, selfLoops: 1, invalid: 3, users: 3 });
    const again = await runGraphImport(edges, config, { ...quiet, prefix: 'g' });
    expect(again).toMatchObject({ edges: 4, inserted: 0, users: 3 });
    const sql = await openPglite(join(dir, 'pgdata'));
    try {
      const graph = new PostgresSocialGraph(sql);
      expect(await graph.mostFollowed(3)).toEqual([
        { userId: 'g2', followers: 2 },
        { userId: 'g1', followers: 1 },
        { userId: 'g3', followers: 0 },
      ]);
      expect((await graph.following('g1', 10)).entries.map((e) => e.userId)).toEqual(['g2']);
    } finally {
      await sql.close();
    }
  });

  it('a truncated gzip stops with the file and line, exactly what was committed, and resumes when run again', async () => {
    const full = readFileSync(dataFile('graph/slashdot0902_follow_edges.tsv.gz'));
    const truncated = file('slashdot_truncated.tsv.gz', '');
    writeFileSync(truncated, full.subarray(0, 15_000)); // the first bytes of the real graph: some 6,000 edges
    const truncatedDir = mkdtempSync(join(tmpdir(), 'freshet-graph-truncated-'));
    seedPgliteDataDir(truncatedDir);
    const cfg = loadConfig({
      LOG_LEVEL: 'silent',
      FRESHET_DATA_DIR: truncatedDir,
      FRESHET_SERVICE_KEY: 'k'.repeat(20),
      FRESHET_SECRET: 's'.repeat(20),
    });
    const stopped =
      /^import graph stopped: (\S+): the gzip data ends early \(the file is truncated or still being written\) after line (\d+)\. committed before it: (\d+) edges of lines 2–(\d+) \((\d+) new, 0 across a block\); nothing after line \4\. The import is idempotent .*run the same command again to resume$/;
    try {
      const message = await runGraphImport(truncated, cfg, { ...quiet, batchSize: 1000 }).then(
        () => 'no error',
        (err: Error) => err.message,
      );
      const m = stopped.exec(message);
      expect(m, message).not.toBeNull();
      const [, named, readLine, committed, committedLine, fresh] = m!.map(String);
      expect(named).toBe(truncated);
      expect(Number(committed) % 1000).toBe(0); // whole batches only
      expect(Number(committed)).toBeGreaterThan(0);
      expect(Number(committedLine)).toBeLessThanOrEqual(Number(readLine));
      expect(Number(committedLine) - 1).toBe(Number(committed)); // one edge per line, no skipped row in the sample
      const follows = async () => {
        const sql = await openPglite(join(truncatedDir, 'pgdata'));
        try {
          return Number((await sql.query<{ n: string | number }>('SELECT count(*) AS n FROM follows'))[0]!.n);
        } finally {
          await sql.close();
        }
      };
      expect(await follows()).toBe(Number(fresh)); // what it says it committed is in the database
      // running it again adds nothing twice and stops at the same line
      const again = stopped.exec(
        await runGraphImport(truncated, cfg, { ...quiet, batchSize: 1000 }).then(
          () => 'no error',
          (err: Error) => err.message,
        ),
      );
      expect(again?.slice(2, 5)).toEqual([readLine, committed, committedLine]);
      expect(again?.[5]).toBe('0');
      expect(await follows()).toBe(Number(fresh));
    } finally {
      rmSync(truncatedDir, { recursive: true, force: true });
    }
  });

  it('refuses an empty file and a file that is not a follow-edge list, naming it', async () => {
    await expect(runGraphImport(file('empty.tsv', ''), config, quiet)).rejects.toThrow(/is empty \(no header\)/);
    await expect(runGraphImport(file('other.tsv', 'user\titem\n1\t2\n'), config, quiet)).rejects.toThrow(
      /not a follow-edge list/,
    );
  });
});

for (const setup of [
  { name: 'in-process + PGlite', opts: {} },
  { name: 'Redis + BullMQ + PostgreSQL', opts: { hot: 'redis' as const, db: 'postgres' as const } },
]) {
  describe(`freshet import graph beside built inboxes: ${setup.name}`, () => {
    it('a reader whose inbox is built sees the items of an author an import makes it follow; edges across a block are skipped', async () => {
      const t = withWorker(await startTestApp(setup.opts));
      try {
        await register(t, 'ia', 'ib', 'ic');
        await follow(t, 'ir', 'ia');
        await publish(t, 'ia', ['ia1'], T0 + 1_000);
        await publish(t, 'ib', ['ib1', 'ib2'], T0 + 2_000);
        await publish(t, 'ic', ['ic1'], T0 + 3_000);
        await settle(t);
        expect(await page(t, 'ir', T0 + 4_000)).toMatchObject({ ids: ['ia1'], rebuilt: true });
        expect(await page(t, 'ir', T0 + 5_000)).toMatchObject({ ids: ['ia1'], rebuilt: false }); // the inbox is built and trusted
        await t.client({ now: T0 + 5_000 }).blocks.block('ic', 'ir');
        const edges = file(
          `import-${setup.opts.db ?? 'pglite'}.tsv`,
          'follower_id\tfollowee_id\nir\tib\nir\tic\nir\tia\n',
        );
        const r = await runGraphImport(edges, t.config, { ...quiet, freshet: t.f, nowMs: T0 + 6_000 });
        expect(r).toMatchObject({ edges: 3, inserted: 1, blocked: 1 });
        expect(await page(t, 'ir', T0 + 7_000)).toMatchObject({ ids: ['ib2', 'ib1', 'ia1'], rebuilt: true }); // its inbox was dropped: rebuilt with the new author;
        expect(await pageAll(t, 'ir', T0 + 7_000, 1)).toEqual(await truth(t, 'ir'));
        expect((await t.f.following.graph.authorInfo('ib')).followers).toBe(1); // counts stay exact
        expect((await t.f.following.graph.authorInfo('ic')).followers).toBe(0);
      } finally {
        await t.close();
      }
    });
  });
}
