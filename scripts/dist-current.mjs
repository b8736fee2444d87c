/**
 * Whether dist/ holds a build of the sources as they are: every `.ts` under src/ has its `.js` and every
 * `.lua` and `.mjs` its copy, each at least as new as its source (file by file: a rebuilt explorer bundle never
 * passes for a rebuilt CLI), and the explorer bundle (dist/ui/app.js, scripts/build-ui.mjs) is at least
 * as new as every file of src/ui/. Used by the `prepare` script (scripts/prepare.mjs: build only
 * when stale) and the tests that start the compiled CLI (test/support/cli.ts).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * @param {string} root the checkout (the folder holding src/ and dist/)
 * @param {{ ui?: boolean }} [opts] also require the explorer bundle to be current (default true)
 * @returns {boolean}
 */
export function distIsCurrent(root, opts = {}) {
  const src = join(root, 'src');
  const web = `${join(src, 'ui')}/`;
  const bundle = join(root, 'dist/ui/app.js');
  const bundleMs = existsSync(bundle) ? statSync(bundle).mtimeMs : -1;
  for (const e of readdirSync(src, { recursive: true, withFileTypes: true })) {
    const path = join(e.parentPath ?? e.path, e.name);
    if (!e.isFile()) continue;
    if (path.startsWith(web)) {
      if (opts.ui !== false && statSync(path).mtimeMs > bundleMs) return false;
      continue;
    }
    const built =
      e.name.endsWith('.lua') || e.name.endsWith('.mjs')
        ? path
        : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')
          ? path.replace(/\.ts$/, '.js')
          : null;
    if (built === null) continue;
    const target = join(root, 'dist', relative(src, built));
    if (!existsSync(target) || statSync(target).mtimeMs < statSync(path).mtimeMs) return false;
  }
  return true;
}
