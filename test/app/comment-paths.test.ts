/**
 * Comments that cannot lie about files: a comment in src/ (TypeScript, or Lua) that names a file names one
 * that exists. A file name is a token ending in `.ts`, `.lua`, `.mjs`, `.md` or `.json` (a `.json` only with
 * a folder in it: `secrets.json` and the like are files a process writes, not sources); it resolves against
 * the repository root, or the commenting file's folder or one of its parents up to src/ (so `lua/seenMark-4.lua`
 * in src/seen/ and `adapters/schema.ts` anywhere in a capability both resolve). Checked over src/, and over a
 * small source with known cases, so the check is shown to bite.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
/** A file name in a comment (see the module doc); `../x.ts` and `./x.ts` included, URLs and `<placeholders>/x` not. */
const FILE = /(?<![\w@/.<>:-])((?:\.{1,2}\/)?[\w@+-][\w@.+-]*(?:\/[\w@.+-]+)*\.(?:ts|lua|mjs|md|json))(?![\w/])/g;

/** The text of every comment of a TypeScript source (from the parsed tree: never a string or a regex). */
function tsComments(path: string, text: string): string[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found = new Map<number, string>();
  const add = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) found.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node) => {
    add(ts.getLeadingCommentRanges(text, node.getFullStart()));
    add(ts.getTrailingCommentRanges(text, node.getEnd()));
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return [...found.values()];
}

/** The text of every comment of a Lua source: `--[[ … ]]` blocks and `--` lines. */
function luaComments(text: string): string[] {
  return [...text.matchAll(/--\[\[[\s\S]*?\]\]|--[^\n]*/g)].map((m) => m[0]);
}

/** The file names the comments of `path` (under `root`'s src/) give that resolve nowhere, as `path: name`. */
function missingFiles(root: string, path: string, text: string): string[] {
  const src = join(root, 'src');
  const comments = path.endsWith('.lua') ? luaComments(text) : tsComments(path, text);
  const out: string[] = [];
  for (const c of comments) {
    for (const m of c.matchAll(FILE)) {
      const name = m[1]!;
      if (name.endsWith('.json') && !name.includes('/')) continue;
      const places = [join(root, name)];
      for (let d = dirname(path); d.startsWith(src); d = dirname(d)) places.push(resolve(d, name));
      if (!places.some((p) => existsSync(p))) out.push(`${relative(root, path)}: ${name}`);
    }
  }
  return out;
}

/** Every .ts and .lua file under src/. */
function sources(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts') || path.endsWith('.lua')) out.push(path);
    }
  };
  walk(SRC);
  return out;
}

describe('comments name files that exist', () => {
  it('no comment of src/ names a missing file', () => {
    const files = sources();
    expect(files.length).toBeGreaterThan(300); // the walk really read the tree
    expect(files.flatMap((f) => missingFiles(ROOT, f, readFileSync(f, 'utf8')))).toEqual([]);
  });

  it('the check finds a missing file in any kind of comment, and resolves from the root or the folders above', () => {
    const path = join(SRC, 'seen', 'fixture.ts');
    const text = [
      '/** Layouts (src/seen/layout.ts, day-layouts.ts, lua/seenMark-4.lua, ../kernel/clock.ts, docs/for-you.md). */',
      '// the gone ones: DESIGN.md, domain/timeline.ts, lua/seenLayout-1.lua',
      "const s = 'strings are not comments: nowhere.ts'; // trailing: includes/packed.lua",
      '/* data files a process writes: <dataDir>/secrets.json, server.json; a URL: https://x.test/a.md */',
      'const re = /\\/\\/ not a comment: gone.ts/;',
    ].join('\n');
    expect(missingFiles(ROOT, path, text)).toEqual([
      'src/seen/fixture.ts: DESIGN.md',
      'src/seen/fixture.ts: domain/timeline.ts',
      'src/seen/fixture.ts: lua/seenLayout-1.lua',
      'src/seen/fixture.ts: includes/packed.lua',
    ]);
    expect(
      missingFiles(ROOT, join(SRC, 'seen', 'lua', 'x.lua'), '--[[ x: see redis-seen-filter.ts ]]\n-- and gone.lua\n'),
    ).toEqual(['src/seen/lua/x.lua: gone.lua']);
  });
});
