/**
 * Ids of readers, authors and items.
 *
 * Every id that reaches a Redis key or a Bloom member is checked here first, so `:`, `{` and `}`
 * can never be smuggled into a key (DESIGN.md "Keys").
 */
import { fail } from './errors.js';

/** The pattern every id must match: 1–64 of `[A-Za-z0-9_.-]`. */
export const ID_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';
const ID_RE = new RegExp(ID_PATTERN);

/** True when `value` is a valid id. */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && ID_RE.test(value);
}

/**
 * Returns `value` when it is a valid id.
 * @throws FreshetError `INVALID_ID` naming `what` otherwise.
 */
export function assertId(value: unknown, what = 'id'): string {
  if (!isId(value)) throw fail('INVALID_ID', `${what} must match ${ID_PATTERN}`);
  return value;
}
