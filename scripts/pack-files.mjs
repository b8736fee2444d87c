#!/usr/bin/env node
/**
 * Copies the files `npm pack` ships (package.json `files`, as npm lists them with `--dry-run`) into a folder:
 * the Containerfile's runtime stage takes exactly the package, with no tar in the image to unpack a tarball.
 * Usage: `node scripts/pack-files.mjs <folder>` (from the package's root, after `npm run build`).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/pack-files.mjs <folder>');
  process.exit(2);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const json = execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' });
const [packed] = JSON.parse(json.slice(json.indexOf('[')));
for (const { path } of packed.files) {
  mkdirSync(dirname(join(out, path)), { recursive: true });
  copyFileSync(path, join(out, path));
}
console.log(`pack-files: ${packed.files.length} files of ${packed.name}@${packed.version} -> ${out}`);
