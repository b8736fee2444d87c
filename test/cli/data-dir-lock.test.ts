/**
 * The data folder's lock (src/compose/data-dir-lock.ts): one process at a time opens the embedded
 * database; a second opener — another process or a second open in this one — fails at once naming the
 * holder, and a holder killed with SIGKILL leaves nothing stale behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from '../../src/compose/data-dir-lock.js';
import { loadConfig } from '../../src/compose/config.js';
import { openSql } from '../../src/compose/open.js';
import { seedPgliteDataDir } from '../support/pglite.js';

const tmp = mkdtempSync(join(tmpdir(), 'freshet-lock-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

const LOCK_MODULE = fileURLToPath(new URL('../../src/compose/data-dir-lock.ts', import.meta.url));

/** A child process that takes the lock on `dir`, prints "locked" and waits to be killed. */
async function holder(dir: string): Promise<ChildProcess> {
  const script = join(tmp, `holder-${children.length}.ts`);
  writeFileSync(
    script,
    `import { lockDataDir } from ${JSON.stringify(LOCK_MODULE)};\nlockDataDir(${JSON.stringify(dir)}, { command: 'test holder' });\nconsole.log('locked');\nsetInterval(() => {}, 1000);\n`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => b.toString().includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
  });
  return child;
}

describe('the data folder lock', () => {
  it('refuses a second open in the same process, naming it, and is free again after release', () => {
    const dir = mkdtempSync(join(tmp, 'same-'));
    const first = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    expect(() => lockDataDir(dir)).toThrow(/in use by this process/);
    first.release();
    first.release(); // idempotent
    lockDataDir(dir).release();
  });

  it('refuses while another process holds it, and is taken at once after that process is killed with SIGKILL', async () => {
    const dir = mkdtempSync(join(tmp, 'other-'));
    const child = await holder(dir);
    let refused: unknown;
    try {
      lockDataDir(dir);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect((refused as DataDirLockedError).holder).toMatchObject({ pid: child.pid, command: 'test holder' });
    expect((refused as Error).message).toMatch(new RegExp(`pid ${child.pid} \\(test holder, since `));
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    // The kernel released the lock with the process: no stale period to wait out.
    lockDataDir(dir).release();
  });

  it('guards the embedded database: a second openSql on the folder fails and the first keeps working', async () => {
    const config = loadConfig({ FRESHET_DATA_DIR: join(tmp, 'sql') });
    seedPgliteDataDir(config.dataDir); // a migrated database: the bootstrap of an empty folder is import-hn's case
    const sql = await openSql(config);
    try {
      await expect(openSql(config)).rejects.toThrow(DataDirLockedError);
      expect(await sql.query<{ n: number }>('SELECT 1 AS n')).toEqual([{ n: 1 }]);
    } finally {
      await sql.close();
    }
    lockDataDir(config.dataDir).release(); // closing the store released the folder
  });
});
