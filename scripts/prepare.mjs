#!/usr/bin/env node
/**
 * The `prepare` script (npm runs it after `npm install` in the checkout, and when another project installs
 * Freshet from a path or `npx` installs the checkout into its cache): builds dist/ only when it is not a
 * build of the sources as they are (scripts/dist-current.mjs). So a first `npx freshet …` after
 * `npm install` rebuilds nothing, and installing from a path never rewrites the dist/ a running server
 * loads from. `npm run build` always builds.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distIsCurrent } from './dist-current.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (distIsCurrent(root)) {
  console.log('prepare: dist/ is a build of the sources as they are; nothing to build (`npm run build` rebuilds it)');
} else {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
