/**
 * Freshet as a library: the example of docs/library.md (examples/library.ts) runs as written against the
 * package's entry point (src/index.ts, what `import ... from 'freshet-engine'` is built from), on the embedded
 * default in a temp folder, and shows the published items in the for-you feed and the followed author's
 * item in the following timeline. The page shows the example unchanged. And `import('freshet-engine')` itself,
 * in a Node process (the package's self-reference through package.json `exports`), resolves to the
 * built `dist/index.js` and exposes every runtime value of the entry, with every public type declared in
 * `dist/index.d.ts` — dist is built by `npm install` (the prepare script); a missing dist fails the test.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { seedPgliteDataDir } from '../support/pglite.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/library.ts', import.meta.url));
const PAGE = fileURLToPath(new URL('../../docs/library.md', import.meta.url));
const ENTRY = fileURLToPath(new URL('../../src/index.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'freshet-library-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the library example', () => {
  it('is on docs/library.md as it is in examples/library.ts', () => {
    expect(readFileSync(PAGE, 'utf8')).toContain(readFileSync(EXAMPLE, 'utf8'));
  });

  it('runs: publishes, follows, reads for-you and following, records a view, closes', async () => {
    const source = readFileSync(EXAMPLE, 'utf8').replace("from 'freshet-engine'", `from ${JSON.stringify(ENTRY)}`);
    expect(source).not.toContain("'freshet-engine'");
    const copy = join(fileURLToPath(new URL('.', import.meta.url)), `.library-example-${process.pid}.ts`);
    writeFileSync(copy, source);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    process.env.EXAMPLE_DATA_DIR = join(dir, 'data');
    seedPgliteDataDir(process.env.EXAMPLE_DATA_DIR); // a migrated database: the first start's bootstrap is covered elsewhere
    try {
      await import(copy);
      expect(log).toHaveBeenCalledTimes(1);
      const [forYouLabel, forYou, followingLabel, following] = log.mock.calls[0]!;
      expect([forYouLabel, followingLabel]).toEqual(['for you:', '| following:']);
      expect([...(forYou as string[])].sort()).toEqual(['p1', 'p2']);
      expect(following).toEqual(['p1']);
    } finally {
      log.mockRestore();
      delete process.env.EXAMPLE_DATA_DIR;
      rmSync(copy, { force: true });
    }
  }, 60_000);
});

describe("import('freshet-engine') through the package's exports", () => {
  it('resolves to dist/index.js and exposes openFreshet and every runtime value of src/index.ts; dist/index.d.ts declares the public types', async () => {
    const dist = join(ROOT, 'dist/index.js');
    expect(
      existsSync(dist),
      `${dist} is missing: \`npm install\` builds dist/ (the prepare script); or run \`npm run build\``,
    ).toBe(true);
    // a real Node process in the package folder: Node's own resolution of the bare name through `exports`
    const probe = `
      const m = await import('freshet-engine');
      console.log(JSON.stringify({
        resolved: import.meta.resolve('freshet-engine'),
        kinds: Object.fromEntries(Object.keys(m).sort().map((k) => [k, typeof m[k]])),
        notFound: new m.FreshetError('NOT_FOUND', 'x').code,
        catalogue: m.ErrorCodes.NOT_FOUND.code,
        manual: new m.ManualClock(5).now(),
      }));`;
    const out = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: ROOT, encoding: 'utf8' }),
    ) as {
      resolved: string;
      kinds: Record<string, string>;
      notFound: number;
      catalogue: number;
      manual: number;
    };
    expect(out.resolved).toBe(pathToFileURL(dist).href);
    const source = await import('../../src/index.js');
    // the build of this source: no runtime export missing or stale
    expect(out.kinds).toEqual(
      Object.fromEntries(
        Object.keys(source)
          .sort()
          .map((k) => [k, typeof (source as Record<string, unknown>)[k]]),
      ),
    );
    expect(out.kinds).toMatchObject({
      openFreshet: 'function',
      configFromOptions: 'function',
      buildApp: 'function',
      UseCases: 'function',
      FreshetError: 'function',
      ErrorCodes: 'object',
      ManualClock: 'function',
      systemClock: 'object',
    });
    expect([out.notFound, out.catalogue, out.manual]).toEqual([40401, 40401, 5]);

    const declared = readFileSync(join(ROOT, 'dist/index.d.ts'), 'utf8');
    const entry = readFileSync(ENTRY, 'utf8');
    const typeNames = [
      ...[...entry.matchAll(/\btype (\w+)/g)].map((m) => m[1]!), // `type X` inside `export { … }`
      ...[...entry.matchAll(/export type \{([^}]+)\}/g)].flatMap((m) => m[1]!.split(',').map((n) => n.trim())),
    ];
    expect(typeNames).toEqual(expect.arrayContaining(['Freshet', 'Config', 'Item', 'FeedPage', 'ViewResult']));
    for (const name of typeNames)
      expect(declared, `dist/index.d.ts does not declare ${name}`).toMatch(new RegExp(`\\b${name}\\b`));
  }, 60_000);
});
