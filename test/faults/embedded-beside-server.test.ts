/**
 * Issue 10.1's repro, end to end with real processes: `freshet serve` on an embedded data folder, then
 * CLI commands on the same folder. Writing commands either go through the server's API (`import`) or
 * refuse with a clear message and a non-zero exit (`discover embed`, `migrate`), and nothing else can open
 * the database while the server holds the folder's lock. After `kill -9` of the server, its stale
 * `server.json` and lock do not block the next start, and everything written before is readable.
 * Prints its figures on one `[faults] …` line (part of the fault suite, docs/operations.md "Faults").
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { openSql } from '../../src/compose/open.js';
import { DataDirLockedError } from '../../src/compose/data-dir-lock.js';
import { seedPgliteDataDir } from '../support/pglite.js';
import { serveCli, spawnCli } from '../support/cli.js';
import { printFigures } from '../support/faults.js';

const tmp = mkdtempSync(join(tmpdir(), 'freshet-beside-'));
const dataDir = join(tmp, 'data');
seedPgliteDataDir(dataDir); // a migrated database: PGlite's bootstrap on an empty folder is covered by import-hn.test.ts
const KEY = 'k'.repeat(24);
const env = {
  ...process.env,
  FRESHET_DATA_DIR: dataDir,
  FRESHET_SERVICE_KEY: KEY,
  FRESHET_SECRET: 's'.repeat(24),
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'info',
  FRESHET_REDIS_URL: '',
  FRESHET_DATABASE_URL: '',
};
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

const FIXTURE = gzipSync(
  [
    'id,title,url,num_points,num_comments,author,created_at,created_at_unix',
    '101,Plain post,https://www.example.com/a,34,23,mjn,2015-09-06T06:03:00,1441533780',
    '102,Another post,,5,1,someone,2015-09-06T07:25:00,1441538700',
    '',
  ].join('\n'),
);

function cli(args: string[]): ChildProcess {
  const child = spawnCli(args, env);
  children.add(child);
  return child;
}

/** Runs a CLI command to its end. */
async function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = cli(args);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

/** Starts `freshet serve` on the shared folder (see support/cli.ts `serveCli`), killed after the file. */
async function serve(): Promise<{ child: ChildProcess; url: string; lines: string[] }> {
  const started = await serveCli(env);
  children.add(started.child);
  return started;
}

async function item(url: string, id: string): Promise<{ status: number; title?: string }> {
  const res = await fetch(`${url}/v1/items/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
  const body = (await res.json()) as { data?: { title?: string } };
  return { status: res.status, title: body.data?.title };
}

describe('CLI commands beside a running embedded server', () => {
  it('go through its API or refuse; a kill -9 leaves nothing that blocks the next start; the data stays readable', async () => {
    const fixture = join(tmp, 'posts.csv.gz');
    writeFileSync(fixture, FIXTURE);
    let started = performance.now();
    const first = await serve();
    const startMs = performance.now() - started;
    const marker = JSON.parse(readFileSync(join(dataDir, 'server.json'), 'utf8')) as { pid: number };
    expect(marker.pid).toBe(first.child.pid);

    started = performance.now();
    const imported = await run(['import', 'hn', fixture]);
    const importMs = performance.now() - started;
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(
      new RegExp(
        `imported 2 items from hn \\(2 inserted, 0 updated, 0 skipped\\) .* into ${first.url} \\(running server, found by `,
      ),
    );

    // the graph import goes through the server too (POST /v1/follows), as the items import does
    const edges = join(tmp, 'edges.tsv');
    writeFileSync(edges, 'follower_id\tfollowee_id\nfan1\tmjn\nfan2\tmjn\n');
    const graph = await run(['import', 'graph', edges]);
    expect(graph.code, graph.stderr).toBe(0);
    expect(graph.stdout).toMatch(new RegExp(`imported 2 edges .*\\(2 new, .* into ${first.url} \\(running server`));

    const [embed, migrate] = await Promise.all([run(['discover', 'embed']), run(['migrate'])]);
    for (const [name, r] of [
      ['discover embed', embed],
      ['migrate', migrate],
    ] as const) {
      expect(r.code, name).toBe(1);
      expect(r.stdout, name).toBe('');
      expect(r.stderr, name).toContain(
        `freshet: ${name}: a Freshet server (pid ${first.child.pid}, ${first.url}) holds the data folder ${dataDir}`,
      );
      expect(r.stderr, name).toContain('single-process');
    }
    // Below the CLI's check, the folder's lock refuses any opener, naming the server.
    const refused = await openSql(loadConfig({ FRESHET_DATA_DIR: dataDir })).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect((refused as DataDirLockedError).holder).toMatchObject({ pid: first.child.pid, command: 'freshet serve' });

    const killed = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await killed;
    expect(existsSync(join(dataDir, 'server.json'))).toBe(true); // stale: names a dead pid

    started = performance.now();
    const second = await serve(); // takes the lock the dead server held
    const restartMs = performance.now() - started;
    const readable = [await item(second.url, 'hn_101'), await item(second.url, 'hn_102')];
    const stopped = new Promise<number | null>((resolve) => second.child.once('exit', resolve));
    second.child.kill('SIGTERM');
    const stopCode = await stopped;
    printFigures('CLI beside the embedded server', {
      import_via_server: imported.code === 0,
      import_ms: importMs,
      refused: [embed, migrate].filter((r) => r.code === 1).length,
      refused_of: 2,
      lock_refuses_opener: refused instanceof DataDirLockedError,
      start_ms: startMs,
      restart_after_kill_ms: restartMs,
      items_readable: readable.filter((r) => r.status === 200).length,
      items_written: 2,
      clean_stop_exit: String(stopCode),
    });
    expect(readable).toEqual([
      { status: 200, title: 'Plain post' },
      { status: 200, title: 'Another post' },
    ]);
    expect(stopCode).toBe(0);
    expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
  }, 300_000);
});
