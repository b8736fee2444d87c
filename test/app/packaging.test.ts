/**
 * What `npm pack` ships (package.json `files`): the compiled library and CLI, `freshet-engine/client`, the Lua
 * scripts the Redis adapters load from dist/, the web explorer's bundle, bin/freshet.js and the docs —
 * and no tests, benchmarks, build scripts or TypeScript sources. The packed `freshet-engine/client` is then
 * imported from the extracted tarball by a plain Node program (it needs no dependency), through the
 * package's `exports` map, as an application would.
 *
 * npm runs `prepare` (= `npm run build`) before every pack and publish; that build takes ~25 s here, so
 * this test packs with `--ignore-scripts` over the checkout's dist/ and builds it first only when the
 * checkout has none. No registry is contacted (`--offline`).
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NPM_ENV = {
  ...process.env,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};

interface PackResult {
  filename: string;
  files: { path: string }[];
}

let tmp: string;
let shipped: string[];
let tarball: string;

/** Every `.lua` file under src/, as the dist/ path the build copies it to. */
function luaInDist(): string[] {
  return readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.lua'))
    .map((e) => `dist/${relative(join(ROOT, 'src'), join(e.parentPath, e.name))}`);
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'freshet-pack-'));
  if (!existsSync(join(ROOT, 'dist/index.js')) || !existsSync(join(ROOT, 'dist/ui/index.html'))) {
    await run('npm', ['run', 'build'], { cwd: ROOT, env: NPM_ENV, timeout: 280_000 });
  }
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--offline', '--pack-destination', tmp], {
    cwd: ROOT,
    env: NPM_ENV,
    timeout: 60_000,
  });
  const [result] = JSON.parse(stdout.slice(stdout.indexOf('['))) as PackResult[];
  shipped = result!.files.map((f) => f.path);
  tarball = join(tmp, result!.filename);
}, 300_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the npm package', () => {
  it('ships the library, the client, the CLI, the Lua scripts, the explorer bundle and the docs', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, Record<string, string> | string>;
      bin: Record<string, string>;
      scripts: Record<string, string>;
    };
    const wanted = [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/cli/main.js',
      'dist/ui/index.html',
      'dist/ui/app.js',
      'dist/ui/app.css',
      'bin/freshet.js',
      'README.md',
      'CHANGELOG.md',
      'docs/client.md',
      'docs/ui.md',
      // every target of the exports map and of bin
      ...Object.values(pkg.exports)
        .flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e)))
        .map((p) => p.replace(/^\.\//, '')),
      ...Object.values(pkg.bin),
    ];
    expect(wanted.filter((p) => !shipped.includes(p))).toEqual([]);
    const lua = luaInDist();
    expect(lua.length).toBeGreaterThan(10);
    expect(
      lua.filter((p) => !shipped.includes(p)),
      'a .lua file of src/ is missing from dist/: run `npm run build`',
    ).toEqual([]);
    // `npm pack` and `npm publish` run `prepare` first: it must be the whole build (tsc, Lua, UI bundle)
    // whenever dist/ is not a build of the sources as they are (scripts/prepare.mjs skips it otherwise)
    expect(pkg.scripts.prepare).toBe('node scripts/prepare.mjs');
    const prepare = readFileSync(join(ROOT, 'scripts/prepare.mjs'), 'utf8');
    expect(prepare).toContain("['run', 'build']");
    expect(prepare).toContain('distIsCurrent(root)');
    expect(pkg.scripts.build).toMatch(/tsc .*copy-assets\.mjs.*build-ui\.mjs/);
  });

  it('ships no tests, benchmarks, sources, build scripts or source maps that point at unshipped sources', () => {
    const stray = shipped.filter(
      (p) =>
        /^(test|bench|src|scripts|node_modules|\.ci)\//.test(p) ||
        p.endsWith('.tsbuildinfo') ||
        (p.endsWith('.js.map') && p !== 'dist/ui/app.js.map'),
    );
    expect(stray).toEqual([]);
    expect(
      shipped.every((p) => /^(dist|bin|docs|examples)\/|^(README\.md|CHANGELOG\.md|LICENSE|package\.json)$/.test(p)),
      shipped.join(' '),
    ).toBe(true);
  });

  it('the packed freshet-engine/client imports by its package name and works with no dependency installed', async () => {
    await run('tar', ['-xzf', tarball, '-C', tmp]);
    const app = join(tmp, 'app');
    mkdirSync(join(app, 'node_modules'), { recursive: true });
    symlinkSync(join(tmp, 'package'), join(app, 'node_modules', 'freshet-engine'), 'dir');
    writeFileSync(
      join(app, 'check.mjs'),
      [
        "import { FreshetClient, FreshetClientError } from 'freshet-engine/client';",
        "const c = new FreshetClient({ baseUrl: 'http://127.0.0.1:9', serviceKey: 'k', retry: { attempts: 1 }, timeoutMs: 2000 });",
        'const err = await c.health().catch((e) => e);',
        'console.log(JSON.stringify({ isError: err instanceof FreshetClientError, kind: err.kind, groups: Object.keys(c).length }));',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: app, timeout: 20_000 });
    const out = JSON.parse(stdout) as { isError: boolean; kind: string; groups: number };
    expect(out).toMatchObject({ isError: true, kind: 'network' }); // port 9 (discard): nothing listens
    expect(out.groups).toBeGreaterThan(10);
    // the explorer's page names only files that are in the package
    const html = readFileSync(join(tmp, 'package/dist/ui/index.html'), 'utf8');
    const refs = [...html.matchAll(/(?:src|href)="\.?\/?([^"#:]+)"/g)].map((m) => `dist/ui/${m[1]}`);
    expect(refs.length).toBeGreaterThanOrEqual(2);
    expect(refs.filter((r) => !shipped.includes(r))).toEqual([]);
  });
});
