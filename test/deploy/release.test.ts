/**
 * Releases and the package's name, as an application and an operator meet them:
 *
 * - CHANGELOG.md has "Unreleased" on top, then releases `## <x.y.z> — <YYYY-MM-DD>`, newest first (versions
 *   and dates descending, none in the future), each opening with its "Upgrading" notes;
 * - package.json's version is the latest release, and `freshet --version` prints it;
 * - every import of the package in the docs, the README, the examples, the sources and the tests names
 *   the package as package.json does (`<name>` or `<name>/client`), and tsconfig's paths map those names —
 *   an example written against the old name `freshet` fails here, not in an application.
 */
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, spawnCli } from '../support/cli.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  exports: Record<string, unknown>;
  bin: Record<string, string>;
};

interface Section {
  heading: string;
  body: string;
}

/** The `## ` sections of CHANGELOG.md, in order. */
function changelogSections(): Section[] {
  const text = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
  return text
    .split(/^## /m)
    .slice(1)
    .map((part) => {
      const nl = part.indexOf('\n');
      return { heading: part.slice(0, nl).trim(), body: part.slice(nl + 1) };
    });
}

const RELEASE = /^(\d+)\.(\d+)\.(\d+) — (\d{4}-\d{2}-\d{2})$/;

/** Files under `dir` (recursively) whose name ends with one of `exts`, skipping build output and dependencies. */
function files(dir: string, exts: string[]): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && exts.some((x) => e.name.endsWith(x)))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .filter((p) => !/(^|\/)(node_modules|dist)\//.test(p));
}

describe('releases', () => {
  it('CHANGELOG.md: Unreleased on top, then dated releases newest first, each with its upgrade notes', () => {
    const [top, ...rest] = changelogSections();
    expect(top!.heading).toBe('Unreleased');
    expect(rest.length).toBeGreaterThanOrEqual(2);
    const today = new Date().toISOString().slice(0, 10);
    let previous: { version: number[]; date: string } | null = null;
    for (const { heading, body } of rest) {
      const m = RELEASE.exec(heading);
      expect(m, `"## ${heading}" is not "## x.y.z — YYYY-MM-DD"`).not.toBeNull();
      const version = [Number(m![1]), Number(m![2]), Number(m![3])];
      const date = m![4]!;
      expect(Number.isNaN(Date.parse(`${date}T00:00:00Z`)), heading).toBe(false);
      expect(date <= today, `${heading} is dated in the future`).toBe(true);
      if (previous) {
        const newer = previous.version.findIndex((v, i) => v !== version[i]);
        expect(
          newer >= 0 && previous.version[newer]! > version[newer]!,
          `${heading} is not older than the one above`,
        ).toBe(true);
        expect(date <= previous.date, `${heading} is dated after the release above`).toBe(true);
      }
      previous = { version, date };
      // the first subsection is the upgrade notes, and they say something
      const sub = /^### (.+)$/m.exec(body);
      expect(sub?.[1], `${heading} has no "### Upgrading" first`).toMatch(/^Upgrading/);
      const notes = body.slice(sub!.index).split(/^### /m)[1]!;
      expect(notes.split('\n').slice(1).join(' ').trim().length, `${heading}: empty upgrade notes`).toBeGreaterThan(40);
    }
  });

  it("package.json's version is the latest release, and `freshet --version` prints it", async () => {
    const latest = RELEASE.exec(changelogSections()[1]!.heading)!;
    expect(pkg.version).toBe(`${latest[1]}.${latest[2]}.${latest[3]}`);
    expect(Object.keys(pkg.bin)).toEqual(['freshet']);
    const child = spawnCli(['--version'], { ...process.env, LOG_LEVEL: 'silent' });
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect({ code, out }).toEqual({ code: 0, out: `${pkg.version}\n` });
  }, 30_000);
});

describe("the package's name", () => {
  it('is the one every import of it uses (docs, README, examples, sources, tests), and tsconfig maps it', () => {
    expect(pkg.name).toMatch(/^[a-z0-9][a-z0-9._-]*$/);
    expect(pkg.name).not.toBe('freshet'); // the registry's `freshet` is another project's
    const allowed = new Set([pkg.name, `${pkg.name}/client`]);
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './client', './package.json']);
    const wrong: string[] = [];
    const sources = [
      'README.md',
      ...files('docs', ['.md']),
      ...files('examples', ['.ts', '.js', '.mjs']),
      ...files('src', ['.ts', '.mjs']),
      ...files('test', ['.ts']),
    ];
    for (const file of sources) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bresolve\(\s*)['"](freshet[^'"]*)['"]/g)) {
        if (!allowed.has(m[1]!)) wrong.push(`${file}: ${m[0]}`);
      }
    }
    expect(wrong).toEqual([]);
    const tsconfig = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as {
      compilerOptions: { paths: Record<string, string[]> };
    };
    expect(Object.keys(tsconfig.compilerOptions.paths).sort()).toEqual([...allowed].sort());
  });
});
