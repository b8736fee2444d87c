/**
 * Runs once before the suite (vitest `globalSetup`): provides a migrated PGlite data folder, the
 * template each test's PGlite is copied from (test/support/pglite.ts). Creating a PGlite database
 * costs ~4 s of CPU (PostgreSQL's bootstrap in WebAssembly), opening a copy of one ~1 s, and the
 * suite opens dozens on 2 cores.
 *
 * The template is kept between runs in the temp folder under a name that hashes the migrations and
 * the PGlite version, so a single test file run later does not build it again; a change to either
 * builds a new one, and templates no run has used for a day are removed. It is built in a folder
 * of its own and renamed into place, so concurrent runs never see half a template.
 *
 * It also points TMPDIR at a memory-backed folder when the machine has one (see `testTmpdir`): every
 * test's temp folder — the PGlite copies (40 MB, ~1,100 files each), the data folders, the CLI's —
 * then lives in RAM instead of on the disk.
 */
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  statfsSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { MIGRATIONS, migrate } from '../../src/compose/migrations.js';
import { openPglite } from '../../src/kernel/sql/sql.js';
import { DAY_MS } from '../../src/kernel/clock.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated PGlite data folder to copy, never to open in place. */
    pgliteTemplate: string;
  }
}

const PREFIX = 'freshet-pglite-template-';
/** The free space /dev/shm must have to hold the tests' temp folders. */
const MIN_SHM_BYTES = 2 * 1024 ** 3;

/**
 * The folder the tests' temp folders go in: FRESHET_TEST_TMPDIR when set, else a folder of this user's
 * under /dev/shm (tmpfs on Linux) when it is writable with 2 GiB free, else the usual temp folder.
 * Copying the PGlite template took 2–3.5 s on this machine's disk under the suite's load and ~0.3 s on
 * tmpfs, and the suite copies it for nearly every PGlite it opens. The tests behave the same on both:
 * file modes, the data folder lock and a kill -9 keep to the file system, which tmpfs is.
 */
function testTmpdir(): string {
  const chosen = process.env.FRESHET_TEST_TMPDIR;
  if (chosen) return chosen;
  try {
    accessSync('/dev/shm', constants.W_OK);
    // a container's /dev/shm is often 64 MB: the suite holds several PGlite copies at once
    const { bavail, bsize } = statfsSync('/dev/shm');
    if (bavail * bsize < MIN_SHM_BYTES) return tmpdir();
    const dir = join('/dev/shm', `freshet-test-${process.getuid?.() ?? 'user'}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  } catch {
    return tmpdir();
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  // Set before the forks start: they, and the processes the tests spawn, inherit it (os.tmpdir() reads it).
  const previousTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = testTmpdir();
  const pglite = readFileSync(join(project.config.root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8');
  const key = createHash('sha256')
    .update(JSON.parse(pglite).version)
    .update(JSON.stringify(MIGRATIONS))
    .digest('hex')
    .slice(0, 16);
  const template = join(tmpdir(), `${PREFIX}${key}`);
  if (!existsSync(template)) await build(template);
  const now = new Date();
  utimesSync(template, now, now); // in use: see below
  // Templates of other migrations (older checkouts) untouched for a day go; one in use stays.
  for (const name of readdirSync(tmpdir())) {
    const path = join(tmpdir(), name);
    if (name.startsWith(PREFIX) && path !== template && Date.now() - statSync(path).mtimeMs > DAY_MS) {
      rmSync(path, { recursive: true, force: true });
    }
  }
  project.provide('pgliteTemplate', template);
  return () => {
    if (previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmpdir;
  };
}

/** Migrates a new PGlite folder and renames it to `template` (unless another run got there first). */
async function build(template: string): Promise<void> {
  const dir = mkdtempSync(`${template}.build-`);
  const sql = await openPglite(dir);
  try {
    await migrate(sql);
  } finally {
    await sql.close();
  }
  try {
    renameSync(dir, template);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    if (!existsSync(template)) throw err;
  }
}
