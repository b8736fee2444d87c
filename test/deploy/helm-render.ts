/**
 * Renders deploy/helm/freshet without `helm` (not installed on these machines): the subset of Go templates
 * and Sprig the chart uses — `{{ .Values.a.b }}`, `.Release.Name`, `.Chart.Name|Version|AppVersion`,
 * string and number literals, `if` / `if not` / `else` / `end`, and the functions `quote`, `toYaml`,
 * `nindent N`, `required "msg" v`, in pipelines — with `{{-` / `-}}` trimming. Anything else is an error,
 * so a template that leaves the subset fails its test instead of rendering wrong. Each rendered file is
 * parsed as YAML (every document). What `helm template` would add (checksums, `.Capabilities`) the chart
 * does not use.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';

type Scope = { Values: unknown; Release: { Name: string }; Chart: Record<string, unknown> };
type Node = { text: string } | { expr: string } | { cond: string; yes: Node[]; no: Node[] };

/** Splits a template into text and actions, applying `{{-` and `-}}` trimming. */
function tokens(src: string): ({ text: string } | { action: string })[] {
  const out: ({ text: string } | { action: string })[] = [];
  const re = /\{\{(-?)\s*([\s\S]*?)\s*(-?)\}\}/g;
  let last = 0;
  let trimNext = false;
  for (const m of src.matchAll(re)) {
    let text = src.slice(last, m.index);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (m[1] === '-') text = text.replace(/\s+$/, '');
    out.push({ text }, { action: m[2]! });
    trimNext = m[3] === '-';
    last = m.index! + m[0].length;
  }
  out.push({ text: trimNext ? src.slice(last).replace(/^\s+/, '') : src.slice(last) });
  return out;
}

/** The tree of `if` / `else` / `end` blocks. */
function tree(list: ({ text: string } | { action: string })[]): Node[] {
  const root: Node[] = [];
  const stack: { cond: string; yes: Node[]; no: Node[]; inElse: boolean }[] = [];
  const here = () => (stack.length ? (stack.at(-1)!.inElse ? stack.at(-1)!.no : stack.at(-1)!.yes) : root);
  for (const t of list) {
    if ('text' in t) here().push({ text: t.text });
    else if (t.action.startsWith('if ')) stack.push({ cond: t.action.slice(3), yes: [], no: [], inElse: false });
    else if (t.action === 'else') stack.at(-1)!.inElse = true;
    else if (t.action === 'end') {
      const b = stack.pop()!;
      here().push({ cond: b.cond, yes: b.yes, no: b.no });
    } else here().push({ expr: t.action });
  }
  if (stack.length) throw new Error('an if without its end');
  return root;
}

/** A term: a path from the scope, a string or number literal. */
function term(word: string, scope: Scope): unknown {
  if (/^".*"$/.test(word)) return JSON.parse(word);
  if (/^-?\d+(\.\d+)?$/.test(word)) return Number(word);
  if (!word.startsWith('.')) throw new Error(`unsupported term ${word}`);
  return word
    .slice(1)
    .split('.')
    .reduce<unknown>((v, k) => (v == null ? undefined : (v as Record<string, unknown>)[k]), scope);
}

const truthy = (v: unknown) =>
  !(v == null || v === false || v === 0 || v === '' || (typeof v === 'object' && Object.keys(v).length === 0));

/** Evaluates `f a b | g c | …` (a pipeline's value is the last argument of the next function). */
function evaluate(expr: string, scope: Scope): unknown {
  const stages = expr.split(/\s*\|\s*/);
  let value: unknown;
  stages.forEach((stage, i) => {
    const words = stage.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
    const [head, ...rest] = words;
    const args = rest.map((w) => term(w, scope));
    if (i > 0) args.push(value);
    if (head!.startsWith('.') || /^["\d-]/.test(head!)) value = term(head!, scope);
    else if (head === 'quote') value = JSON.stringify(String(args[0] ?? ''));
    else if (head === 'toYaml') value = stringify(args[0]).replace(/\n$/, '');
    else if (head === 'nindent')
      value = `\n${String(args[1])
        .split('\n')
        .map((l) => ' '.repeat(Number(args[0])) + l)
        .join('\n')}`;
    else if (head === 'required') {
      if (!truthy(args[1])) throw new Error(String(args[0]));
      value = args[1];
    } else if (head === 'not') value = !truthy(args[0]);
    else throw new Error(`unsupported function ${head}`);
  });
  return value;
}

function render(nodes: Node[], scope: Scope): string {
  return nodes
    .map((n) => {
      if ('text' in n) return n.text;
      if ('expr' in n) return String(evaluate(n.expr, scope) ?? '');
      return render(truthy(evaluate(n.cond, scope)) ? n.yes : n.no, scope);
    })
    .join('');
}

/** Merges `over` into `base` (objects key by key, anything else replaced). */
function merge(base: unknown, over: unknown): unknown {
  if (typeof base !== 'object' || base === null || typeof over !== 'object' || over === null) return over;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) out[k] = merge(out[k], v);
  return out;
}

/** A parsed manifest, navigated freely by the tests (`doc.spec.template.spec.containers[0]`). */
// biome-ignore lint/suspicious/noExplicitAny: a Kubernetes object of any kind
export type Doc = Record<string, any>;

/** A rendered manifest: its kind, name and the parsed document. */
export interface Manifest {
  file: string;
  kind: string;
  name: string;
  doc: Doc;
}

/**
 * Renders every template of the chart in `dir` with values.yaml merged with `values`, as release `release`.
 * @throws Error from `required`, or on a template outside the supported subset, or on invalid YAML.
 */
export function renderChart(dir: string, values: unknown = {}, release = 'freshet'): Manifest[] {
  const chart = parse(readFileSync(join(dir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
  const scope: Scope = {
    Values: merge(parse(readFileSync(join(dir, 'values.yaml'), 'utf8')), values),
    Release: { Name: release },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  };
  const out: Manifest[] = [];
  for (const file of readdirSync(join(dir, 'templates')).filter((f) => f.endsWith('.yaml'))) {
    const text = render(tree(tokens(readFileSync(join(dir, 'templates', file), 'utf8'))), scope);
    for (const d of parseAllDocuments(text)) {
      if (d.errors.length) throw new Error(`${file}: ${d.errors[0]!.message}\n${text}`);
      const doc = d.toJS() as Doc | null;
      if (doc) out.push({ file, kind: doc.kind, name: doc.metadata?.name, doc });
    }
  }
  return out;
}
