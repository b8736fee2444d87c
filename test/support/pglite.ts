/**
 * PGlite for tests: a copy of the migrated template folder that test/support/global-setup.ts built,
 * opened like any PGlite data folder (as the embedded default opens `<dataDir>/pgdata`). Every copy
 * is a database of its own, as fresh as a newly migrated one, at a quarter of the CPU of creating one.
 */
import { constants, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { openPglite, type Sql } from '../../src/kernel/sql/sql.js';

/** Copies the migrated template into `dir` (which must not exist yet or be empty). */
export function copyPgliteTemplate(dir: string): void {
  cpSync(inject('pgliteTemplate'), dir, { recursive: true, mode: constants.COPYFILE_FICLONE });
}

/** A fresh, migrated PGlite in a temp folder of its own, removed when it is closed. */
export async function openTestPglite(): Promise<Sql> {
  const dir = mkdtempSync(join(tmpdir(), 'freshet-pglite-'));
  copyPgliteTemplate(dir);
  const sql = await openPglite(dir);
  return {
    ...sql,
    close: async () => {
      try {
        await sql.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Puts a freshly migrated database where the embedded default keeps its own (`<dataDir>/pgdata`),
 * for tests whose point is not the first start on an empty data folder: they skip PostgreSQL's
 * bootstrap. (That first start stays covered: import-hn.test.ts imports into a data folder that does
 * not exist yet, and the data-folder test of content-store.test.ts starts from an empty one.)
 */
export function seedPgliteDataDir(dataDir: string): void {
  copyPgliteTemplate(join(dataDir, 'pgdata'));
}
