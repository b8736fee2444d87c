#!/usr/bin/env node
/**
 * Build step after `tsc`: copies every `.lua` and `.mjs` file under src/ to the same path under dist/,
 * where the compiled modules load them — Lua scripts (src/kernel/redis/lua.ts resolves a script folder
 * relative to the module that names it, so `dist/hot/adapters/*.js` finds `dist/hot/lua/`) and worker
 * threads written in plain JavaScript (src/discover/adapters/rebase-worker.mjs: a worker runs the same
 * file from src/ under the tests and from dist/ when built). Removes such files in dist/ that src/ no
 * longer has, so a renamed one never lingers. Node's own fs does it: no dependency for twenty lines.
 */
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');

/** Every file under `dir` whose name ends with `.lua` or `.mjs`, as paths relative to `dir`. */
function assetFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && (e.name.endsWith('.lua') || e.name.endsWith('.mjs')))
    .map((e) => relative(dir, join(e.parentPath ?? e.path, e.name)));
}

const wanted = new Set(assetFiles(src));
for (const file of assetFiles(dist)) if (!wanted.has(file)) rmSync(join(dist, file));
for (const file of wanted) cpSync(join(src, file), join(dist, file));
console.log(`copy-assets: ${wanted.size} .lua and .mjs files -> dist/`);
