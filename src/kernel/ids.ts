/**
 * Ids of readers, authors and items.
 *
 * Every id that reaches a Redis key or a Bloom member is checked here first, so `:`, `{` and `}`
 * can never be smuggled into a key (docs/architecture.md "Keys"). `.` and `..` are not ids: as a
 * path segment (`/v1/items/..`) every HTTP client normalises them away, so such an item could be
 * written but never read or deleted. The SQL CHECK constraints keep the older, wider pattern as a
 * backstop; every write path checks ids here first.
 */
import { fail } from './errors.js';
import { preview } from './preview.js';

/** The pattern every id must match: 1–64 of `[A-Za-z0-9_.-]`, and not `.` or `..`. */
export const ID_PATTERN = '^(?!\\.{1,2}$)[A-Za-z0-9_.-]{1,64}$';
/** {@link ID_PATTERN} in words, for messages and the OpenAPI document. */
export const ID_RULE = '1 to 64 characters of A-Z a-z 0-9 _ . - (and not "." or "..")';
const ID_RE = new RegExp(ID_PATTERN);

/**
 * Orders two ids by UTF-16 code units (JavaScript's `<`; −1, 0 or 1): for the ASCII ids
 * {@link ID_PATTERN} allows, the byte order Redis keeps equal-score ZSET members in and PostgreSQL's
 * "C" collation. The one tie-break of every ranking and listing that falls back on the id.
 */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** True when `value` is a valid id. */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && ID_RE.test(value);
}

/**
 * Returns `value` when it is a valid id.
 * @throws FreshetError `INVALID_ID` naming `what`, the value and the rule otherwise.
 */
export function assertId(value: unknown, what = 'id'): string {
  if (!isId(value)) throw fail('INVALID_ID', `${what} ${preview(value, 70)} is not a valid id: ids are ${ID_RULE}`);
  return value;
}
