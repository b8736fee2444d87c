/**
 * `freshet import graph FILE` on PGlite: what it skips and counts (self-loops, malformed rows, ids outside
 * the id pattern), the `--prefix`, idempotence, exact follower counts afterwards, and the files it refuses
 * (no header, a header that is not a follow-edge list).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openPglite } from '../src/adapters/postgres/sql.js';
import { PostgresSocialGraph } from '../src/adapters/postgres/social-graph.js';
import { runGraphImport } from '../src/cli/import/graph.js';

const dir = mkdtempSync(join(tmpdir(), 'freshet-graph-import-'));
const config = loadConfig({ LOG_LEVEL: 'silent', FRESHET_DATA_DIR: dir, FRESHET_SERVICE_KEY: 'k'.repeat(20), FRESHET_SECRET: 's'.repeat(20) });
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
      ['follower_id\tfollowee_id', '1\t2', '3\t2', '2\t1', '4\t4', '5', '6\t7\t8', 'a:b\t2', '', '1\t2'].join('\n') + '\n',
      true,
    );
    const first = await runGraphImport(edges, config, { ...quiet, prefix: 'g', batchSize: 2 });
    expect(first).toMatchObject({ edges: 4, inserted: 3, selfLoops: 1, invalid: 3, users: 3 });
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
  }, 60_000);

  it('refuses an empty file and a file that is not a follow-edge list, naming it', async () => {
    await expect(runGraphImport(file('empty.tsv', ''), config, quiet)).rejects.toThrow(/empty file/);
    await expect(runGraphImport(file('other.tsv', 'user\titem\n1\t2\n'), config, quiet)).rejects.toThrow(/not a follow-edge list/);
  }, 60_000);
});
