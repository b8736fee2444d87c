/**
 * The docs keep their links working: every relative link in README.md and docs/**\/*.md must name a file
 * or folder that exists inside the repository, and every `#anchor` must be produced by a heading (or an
 * explicit `<a id>` / `<a name>`) of the file it points into — as GitHub renders it. A moved page or a
 * renamed heading fails the suite instead of leaving a dead link.
 *
 * Anchors follow GitHub's heading ids (github-slugger): the heading's text, lower-cased, with every
 * character that is not a letter, mark, number, connector (`_`), space or hyphen removed, spaces turned
 * into hyphens, and `-1`, `-2`, … appended to repeats. Links and anchors inside code (fenced blocks and
 * inline spans) are not links and are ignored; absolute URLs (`https:`, `mailto:`, …) are not checked.
 */
import {
  mkdtempSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The Markdown files whose links are checked: README.md and everything under docs/. */
function docFiles(root: string): string[] {
  const files = [join(root, 'README.md')];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(root, 'docs'));
  return files;
}

/** The text with fenced code blocks and inline code spans blanked out (line structure kept). */
function withoutCode(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: string | null = null;
  const out = lines.map((line) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length) fence = null;
      return '';
    }
    if (m) {
      fence = m[1]!;
      return '';
    }
    return line.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length));
  });
  return out.join('\n');
}

/** GitHub's id for a heading's text (see the module comment). */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images → their text
    .replace(/<[^>]+>/g, '') // inline HTML tags
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a Markdown file defines: heading ids (with GitHub's repeat suffixes) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const lines = markdown.split('\n');
  const code = withoutCode(markdown).split('\n');
  lines.forEach((line, i) => {
    if (code[i] === '' && line.trim() !== '') return; // inside a fenced block
    const h = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]!.replace(/`/g, ''));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
  });
  for (const m of withoutCode(markdown).matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  return anchors;
}

/** Link targets in a Markdown text, with their line numbers: inline links, images and reference definitions. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = [];
  withoutCode(markdown)
    .split('\n')
    .forEach((line, i) => {
      for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
        found.push({ target: m[1]!, line: i + 1 });
      const def = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/.exec(line);
      if (def) found.push({ target: def[1]!, line: i + 1 });
    });
  return found;
}

/**
 * Checks every relative link of `files` (absolute paths inside `root`).
 * @returns one line per problem, `file:line: target — reason`; empty when every link resolves.
 */
function brokenLinks(root: string, files: string[]): string[] {
  const problems: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (path: string): Set<string> => {
    let set = anchorCache.get(path);
    if (!set) anchorCache.set(path, (set = anchorsOf(readFileSync(path, 'utf8'))));
    return set;
  };
  for (const file of files) {
    for (const { target, line } of linksOf(readFileSync(file, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // absolute URL
      const where = `${relative(root, file)}:${line}: ${target}`;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const fragment = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
      const dest = pathPart === '' ? file : resolve(dirname(file), pathPart);
      if (dest !== root && !dest.startsWith(root + sep)) problems.push(`${where} — points outside the repository`);
      else if (!existsSync(dest)) problems.push(`${where} — no such file`);
      else if (fragment !== null) {
        if (!dest.endsWith('.md') || statSync(dest).isDirectory())
          problems.push(`${where} — an anchor into a non-Markdown target`);
        else if (!anchors(dest).has(fragment))
          problems.push(`${where} — no heading with this anchor in ${relative(root, dest)}`);
      }
    }
  }
  return problems;
}

describe('documentation links', () => {
  it('every relative link and anchor in README.md and docs/ resolves', () => {
    const files = docFiles(REPO);
    expect(files.length).toBeGreaterThan(1);
    expect(brokenLinks(REPO, files)).toEqual([]);
  });

  it('names GitHub heading ids as GitHub does', () => {
    expect(slug('Checkpoints, retention, rebuild — what a loss can take')).toBe(
      'checkpoints-retention-rebuild--what-a-loss-can-take',
    );
    expect(slug('Hot ranking: freshet replay views')).toBe('hot-ranking-freshet-replay-views');
    expect(slug('Bloom accuracy (100,000/day × 7, window rate 1 %, k = 9, m/n = 13.63)')).toBe(
      'bloom-accuracy-100000day--7-window-rate-1--k--9-mn--1363',
    );
    expect(slug('Seen filter: rolling daily Bloom filters on stock Redis')).toBe(
      'seen-filter-rolling-daily-bloom-filters-on-stock-redis',
    );
  });

  describe('reports what is broken', () => {
    const root = mkdtempSync(join(tmpdir(), 'freshet-docs-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('a missing file, a missing anchor, a repeated heading and a link out of the repository', () => {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'docs', 'a.md'), '# Page A\n\n## Settings\n\ntext\n\n## Settings\n');
      writeFileSync(
        join(root, 'README.md'),
        [
          '# Top',
          '[ok](docs/a.md) [ok anchor](docs/a.md#settings) [second settings](docs/a.md#settings-1) [self](#top)',
          '[gone](docs/b.md) [no anchor](docs/a.md#limits) [third settings](docs/a.md#settings-2) [outside](../x.md)',
          '`[in code](docs/nope.md)` [web](https://example.com/nope)',
          '```',
          '[in a block](docs/nope.md)',
          '```',
        ].join('\n'),
      );
      expect(brokenLinks(root, docFiles(root))).toEqual([
        'README.md:3: docs/b.md — no such file',
        'README.md:3: docs/a.md#limits — no heading with this anchor in docs/a.md',
        'README.md:3: docs/a.md#settings-2 — no heading with this anchor in docs/a.md',
        'README.md:3: ../x.md — points outside the repository',
      ]);
    });
  });
});
