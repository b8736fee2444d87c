/**
 * The embedded data folder is private (issue 21.6): after the embedded default opens, and after it
 * writes and closes, every folder under the data folder is 0700 and every file 0600 — PGlite itself
 * writes its files 0666 (the seeded database here is PGlite's own output, 0666 before the first open).
 * The in-process vector index's snapshots (`discover-index/`) are created so by themselves, also beside
 * a PostgreSQL server, where nothing narrows the folder afterwards.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { T0, embeddedDataDir, item, startTestApp } from '../support/app.js';

/** `path mode` of every entry under `dir` whose mode is not 0700 (folders) / 0600 (files). */
function wideEntries(dir: string): string[] {
  const out: string[] = [];
  const visit = (path: string) => {
    const st = statSync(path);
    const want = st.isDirectory() ? 0o700 : 0o600;
    if ((st.mode & 0o777) !== want) out.push(`${path} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return out;
}

describe('the embedded data folder: files 0600 in folders 0700', () => {
  const folder = embeddedDataDir();

  it('after open, and after writes and close, nothing under the data folder is wider', async () => {
    const before = wideEntries(folder.dataDir).length;
    expect(before, 'the seeded database is PGlite output: wide').toBeGreaterThan(100);
    const f = await folder.open();
    try {
      expect(wideEntries(folder.dataDir)).toEqual([]);
      await f.useCases.publishItems(
        Array.from({ length: 200 }, (_, i) => ({
          id: `m${i}`,
          authorId: 'a1',
          title: `title ${i}`,
          text: 'x'.repeat(2000),
          url: null,
          tags: [],
          publishedAt: T0 - 60_000,
          popularity: 0,
        })),
        T0,
      );
    } finally {
      await f.close();
    }
    expect(wideEntries(folder.dataDir)).toEqual([]);
  });
});

describe('the vector index snapshots beside PostgreSQL + Redis: discover-index/ 0700, its files 0600', () => {
  it('a snapshot written at close leaves no folder or file wider', async () => {
    const t = await startTestApp({ db: 'postgres', hot: 'redis' });
    try {
      await t.client().items.publish(Array.from({ length: 20 }, (_, i) => item(`dm${i}`, 60_000 * (i + 1))));
      await t.f.discover.vectors.sync(); // the index is started and holds them
      await t.f.close(); // a private index writes its snapshot at close
      const dir = join(t.config.dataDir, 'discover-index');
      expect(existsSync(join(dir, 'current.json'))).toBe(true);
      expect(wideEntries(dir)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
