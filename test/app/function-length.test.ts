/**
 * Functions short enough to read (docs/architecture.md "Function length"): no function of src/ is longer
 * than 60 lines — function declarations, methods, accessors, constructors and functions bound to a name
 * (an arrow or function expression assigned to a variable, a property or a class field), counted from the
 * first line of the function to its last. An exception carries its reason beside it, a line comment among
 * the function's leading comments:
 *
 *     // long-function: <why it reads best in one piece, at least 20 characters>
 *
 * and there are at most {@link MAX_EXCEPTIONS}. Checked over src/ (with the TypeScript parser), and over
 * small sources with known cases, so the check is shown to bite.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
/** The most lines a function may span. */
const MAX_LINES = 60;
/** The most functions that may be longer, each with its reason. */
const MAX_EXCEPTIONS = 10;
/** A reason beside a function: `// long-function: <at least 20 characters>`. */
const REASON = /\/\/\s*long-function:\s*(\S.{19,})$/m;

/** One function of a source: its name, where it starts, how many lines it spans, its reason if any. */
interface Fn {
  where: string;
  lines: number;
  reason: string | null;
}

/** The name a function is known by, or null for one that is not bound to a name (a callback). */
function nameOf(node: ts.Node): string | null {
  if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isAccessor(node))
    return node.name?.getText() ?? 'default';
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    const p = node.parent;
    if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p))
      return p.name.getText();
  }
  return null;
}

/** The comments before the statement that declares `node` (for `const f = () => …`, the variable statement's). */
function leadingComments(sf: ts.SourceFile, node: ts.Node): string {
  let at: ts.Node = node;
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    at = node.parent; // the variable declaration, property assignment or class field
    if (ts.isVariableDeclaration(at)) at = at.parent.parent; // declaration list → statement
  }
  const text = sf.getFullText();
  return (ts.getLeadingCommentRanges(text, at.getFullStart()) ?? []).map((r) => text.slice(r.pos, r.end)).join('\n');
}

/** Every named function of one source with a body. */
function functionsOf(path: string, text: string): Fn[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const out: Fn[] = [];
  const visit = (node: ts.Node) => {
    const name = nameOf(node);
    if (name !== null && (node as ts.FunctionLikeDeclaration).body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const reason = REASON.exec(leadingComments(sf, node))?.[1] ?? null;
      out.push({ where: `${path}:${first + 1} ${name}`, lines: last - first + 1, reason });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The verdicts over some functions: too long without a reason, the exceptions, and reasons no longer needed. */
function verdicts(fns: readonly Fn[]) {
  return {
    unexplained: fns.filter((f) => f.lines > MAX_LINES && !f.reason).map((f) => `${f.where}: ${f.lines} lines`),
    exceptions: fns.filter((f) => f.lines > MAX_LINES && f.reason).map((f) => `${f.where}: ${f.reason}`),
    stale: fns.filter((f) => f.lines <= MAX_LINES && f.reason).map((f) => f.where),
  };
}

/** Every .ts file under src/ with its text. */
function sources(): [string, string][] {
  const out: [string, string][] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) out.push([relative(SRC, path), readFileSync(path, 'utf8')]);
    }
  };
  walk(SRC);
  return out;
}

describe('functions short enough to read', () => {
  it(`no function of src/ is over ${MAX_LINES} lines without its reason; at most ${MAX_EXCEPTIONS} have one`, () => {
    const fns = sources().flatMap(([path, text]) => functionsOf(path, text));
    expect(fns.length).toBeGreaterThan(2000); // the walk really read the tree
    const v = verdicts(fns);
    expect(v.unexplained).toEqual([]);
    expect(v.stale).toEqual([]);
    expect(v.exceptions.length).toBeLessThanOrEqual(MAX_EXCEPTIONS);
  });

  it('the check counts every kind of named function, and a reason beside it (and only there) exempts it', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const src = [
      `export function declared() {\n${body(59)}\n}`, // 61 lines
      `function fits() {\n${body(58)}\n}`, // 60 lines
      `export const arrow = () => {\n${body(59)}\n};`,
      `class K {\n  method() {\n${body(59)}\n  }\n  get accessor() {\n${body(59)}\n    return 1;\n  }\n}`,
      `const o = { property: function () {\n${body(59)}\n} };`,
      `[1].map(() => {\n${body(70)}\n});`, // a callback: not a named function
      `// long-function: one table of cases, read top to bottom like the spec it mirrors\nfunction explained() {\n${body(70)}\n}`,
      `// long-function: too short\nfunction vague() {\n${body(70)}\n}`,
      `// long-function: a reason left behind after the function was split in two\nfunction split() {\n  return 1;\n}`,
    ].join('\n\n');
    const v = verdicts(functionsOf('fixture.ts', src));
    expect(v.unexplained.map((w) => w.replace(/^fixture\.ts:\d+ /, ''))).toEqual([
      'declared: 61 lines',
      'arrow: 61 lines',
      'method: 61 lines',
      'accessor: 62 lines',
      'property: 61 lines',
      'vague: 72 lines',
    ]);
    expect(v.exceptions).toHaveLength(1);
    expect(v.exceptions[0]).toMatch(/explained: one table of cases/);
    expect(v.stale.map((w) => w.replace(/^fixture\.ts:\d+ /, ''))).toEqual(['split']);
  });
});
