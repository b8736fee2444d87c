/**
 * The ranking hooks' example of docs/library.md (examples/ranking-hooks.ts) is on the page as it is in
 * the file, and runs as written against the package's entry point on the embedded default: the
 * re-rank hook puts ada's item first, the editors' pick comes next (an extra source is walked before the
 * fill), the most popular item last.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { seedPgliteDataDir } from '../support/pglite.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/ranking-hooks.ts', import.meta.url));
const PAGE = fileURLToPath(new URL('../../docs/library.md', import.meta.url));
const ENTRY = fileURLToPath(new URL('../../src/index.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'freshet-ranking-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the ranking hooks example', () => {
  it('is on docs/library.md as it is in examples/ranking-hooks.ts', () => {
    expect(readFileSync(PAGE, 'utf8')).toContain(readFileSync(EXAMPLE, 'utf8'));
  });

  it('runs: the hook orders the page, the extra source is walked before the fill', async () => {
    const source = readFileSync(EXAMPLE, 'utf8').replace("from 'freshet-engine'", `from ${JSON.stringify(ENTRY)}`);
    const copy = join(fileURLToPath(new URL('.', import.meta.url)), `.ranking-example-${process.pid}.ts`);
    writeFileSync(copy, source);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    process.env.EXAMPLE_DATA_DIR = join(dir, 'data');
    seedPgliteDataDir(process.env.EXAMPLE_DATA_DIR);
    try {
      await import(copy);
      expect(log).toHaveBeenCalledTimes(1);
      expect(log.mock.calls[0]).toEqual(['for you:', ['p2', 'p3', 'p1']]);
    } finally {
      log.mockRestore();
      delete process.env.EXAMPLE_DATA_DIR;
      rmSync(copy, { force: true });
    }
  }, 60_000);
});
