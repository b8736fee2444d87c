/**
 * The one way a value a client sent is shown in a message: a short, JSON-like preview
 * that **never throws and never recurses without bound**. Error messages are built while answering a
 * failure — often inside the error handler itself — so the helper must survive whatever a hostile body,
 * header or library hands it: arrays nested 5,000 deep (where `JSON.stringify` and `String()` both blow
 * the stack), `Object.create(null)` (no `toString`), an object whose `toString`, `toJSON` or getters
 * throw, proxies, cycles, bigints and symbols. It reads only own enumerable keys, stops at
 * {@link PREVIEW_DEPTH} levels and at its character budget, and calls no method of the value.
 */

/** Levels shown before a nested array or object is written `[…]` / `{…}`. */
export const PREVIEW_DEPTH = 3;
/** Characters of a preview by default (longer ones are cut with `…`). */
export const PREVIEW_CHARS = 60;

/**
 * A value as a message shows it: strings, numbers, booleans and null as JSON, `nothing` for undefined,
 * arrays and objects as JSON up to {@link PREVIEW_DEPTH} levels, other kinds by their kind
 * (`a function`, `a symbol`, `123n`); cut to `maxChars` characters (with `…`). Never throws.
 * @param maxChars the longest result, ≥ 2 (default {@link PREVIEW_CHARS}).
 */
export function preview(value: unknown, maxChars = PREVIEW_CHARS): string {
  const budget = { left: maxChars + 1 };
  let s: string;
  try {
    s = write(value, 0, budget);
  } catch {
    s = kindOf(value); // a proxy trap or a throwing getter: its kind is all a message can say
  }
  return s.length > maxChars ? `${s.slice(0, Math.max(1, maxChars - 1))}…` : s;
}

/** What a preview spends: characters left; writing stops once it is below zero. */
interface Budget {
  left: number;
}

function write(value: unknown, depth: number, budget: Budget): string {
  const out = scalar(value) ?? (Array.isArray(value) ? list(value, depth, budget) : record(value, depth, budget));
  budget.left -= out.length;
  return out;
}

/** Primitives and functions; null for arrays and objects. */
function scalar(value: unknown): string | null {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > 200 ? value.slice(0, 200) : value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : Number.prototype.toString.call(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'nothing';
    case 'bigint':
      return `${BigInt.prototype.toString.call(value)}n`;
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
    default:
      return value === null ? 'null' : null;
  }
}

function list(value: readonly unknown[], depth: number, budget: Budget): string {
  if (depth >= PREVIEW_DEPTH) return value.length === 0 ? '[]' : '[…]';
  const parts: string[] = [];
  for (let i = 0; i < value.length; i++) {
    if (budget.left <= 0) {
      parts.push('…');
      break;
    }
    parts.push(write(value[i], depth + 1, budget));
  }
  return `[${parts.join(',')}]`;
}

function record(value: unknown, depth: number, budget: Budget): string {
  const keys = Object.keys(value as object);
  if (depth >= PREVIEW_DEPTH) return keys.length === 0 ? '{}' : '{…}';
  const parts: string[] = [];
  for (const k of keys) {
    if (budget.left <= 0) {
      parts.push('…');
      break;
    }
    const key = JSON.stringify(k.length > 60 ? k.slice(0, 60) : k);
    budget.left -= key.length + 1;
    parts.push(`${key}:${write((value as Record<string, unknown>)[k], depth + 1, budget)}`);
  }
  return `{${parts.join(',')}}`;
}

/** The kind of a value in words, for messages: `an array`, `an object`, `a string`, … Never throws. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const t = typeof value;
  return t === 'object' ? 'an object' : t === 'undefined' ? 'nothing' : `a ${t}`;
}
