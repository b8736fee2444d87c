/**
 * The built library loads where an application runs it, not only inside this repository: `node -e` (and
 * `node --input-type=module`) in a folder outside it imports dist/index.js, and the vector index's native
 * binary is usearch's prebuilt one (`prebuilds/<platform>-<arch>/usearch.node`), found with no install
 * script run. usearch's ES module build searched for that binary for ever from there — a relative global
 * `__dirname` of "." sent its `getBuildDir` up `..` without end (`RangeError: Maximum call stack size
 * exceeded` after ~30 s); src/kernel/usearch.ts loads its CommonJS build instead.
 *
 * The packed tarball installed into a scratch application is `test/deploy/pack-install.deploy.ts` (in
 * `.ci/run`: it installs ~160 packages).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

const run = promisify(execFile);
const outside = mkdtempSync(join(tmpdir(), 'freshet-outside-'));
afterAll(() => rmSync(outside, { recursive: true, force: true }));

describe('the built library outside the repository', () => {
  it("no module imports usearch's ES module build: src/kernel/usearch.ts is the one way in", () => {
    const src = join(ROOT, 'src');
    const direct = readdirSync(src, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.(ts|mjs)$/.test(e.name))
      .map((e) => join(e.parentPath, e.name))
      .filter((f) => !f.endsWith('kernel/usearch.ts') && /(from\s+|import\(\s*)'usearch'/.test(readFileSync(f, 'utf8')))
      .map((f) => f.slice(src.length + 1));
    expect(direct).toEqual([]);
  });

  it('node -e imports dist/index.js from another folder, with usearch prebuilt binary', async () => {
    const entry = join(ROOT, 'dist/index.js');
    expect(existsSync(entry), `${entry} is missing: \`npm install\` builds dist/ (or \`npm run build\`)`).toBe(true);
    const probe = [
      `import(${JSON.stringify(pathToFileURL(entry).href)}).then(async (m) => {`,
      "  const maps = (await import('node:fs')).readFileSync('/proc/self/maps', 'utf8');",
      "  const native = [...new Set(maps.split('\\n').filter((l) => l.includes('usearch')).map((l) => l.slice(l.indexOf('/'))))];",
      "  console.log(JSON.stringify({ openFreshet: typeof m.openFreshet, native, dirname: typeof __dirname === 'string' ? __dirname : null }));",
      '});',
    ].join('\n');
    // bounded: the old failure spun for ~30 s before its RangeError
    const { stdout } = await run(process.execPath, ['-e', probe], { cwd: outside, timeout: 20_000 });
    const out = JSON.parse(stdout) as { openFreshet: string; native: string[]; dirname: string | null };
    expect(out.dirname).toBe('.'); // what made usearch's ES module build search for ever
    expect(out.openFreshet).toBe('function');
    // the mapped path is the real one: node_modules may be a link (a worktree sharing a checkout's)
    expect(out.native).toEqual([
      realpathSync(join(ROOT, `node_modules/usearch/prebuilds/${process.platform}-${process.arch}/usearch.node`)),
    ]);
  }, 30_000);
});
