#!/usr/bin/env node
/**
 * Build step after `tsc`: copies every `.lua` file under src/ to the same path under dist/, where the
 * compiled adapters load them (src/kernel/redis/lua.ts resolves a script folder relative to the
 * module that names it, so `dist/hot/adapters/*.js` finds `dist/hot/lua/`). Removes `.lua` files
 * in dist/ that src/ no longer has, so a renamed script never lingers. Node's own fs does it: no
 * dependency for twenty lines.
 */
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');

/** Every file under `dir` whose name ends with `.lua`, as paths relative to `dir`. */
function luaFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.lua'))
    .map((e) => relative(dir, join(e.parentPath ?? e.path, e.name)));
}

const wanted = new Set(luaFiles(src));
for (const file of luaFiles(dist)) if (!wanted.has(file)) rmSync(join(dist, file));
for (const file of wanted) cpSync(join(src, file), join(dist, file));
console.log(`copy-lua: ${wanted.size} .lua files -> dist/`);
