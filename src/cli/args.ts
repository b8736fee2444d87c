/**
 * Argument parsers shared by the `freshet` commands: each rejects a bad value with a message naming
 * the allowed range (commander prints it with the command's help), instead of clamping it silently.
 */
import { InvalidArgumentError } from 'commander';
import { isId } from '../kernel/ids.js';

/** The longest lifetime `freshet token --ttl` mints: 365 days, the maximum of FRESHET_TOKEN_TTL_S (s). */
export const MAX_TOKEN_TTL_S = 365 * 86_400;

/** Items per page the feed APIs serve at most (`limit` 1..100). */
export const MAX_PAGE_LIMIT = 100;

/** A positive integer. */
export function intArg(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError('must be a positive integer');
  return n;
}

/** A parser of integers in `min..max`. */
export function rangeArg(min: number, max: number): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be an integer in ${min}..${max}`);
    return n;
  };
}

/** A page size the API serves (1..100). */
export const limitArg = rangeArg(1, MAX_PAGE_LIMIT);

/** A token lifetime in seconds: 1..{@link MAX_TOKEN_TTL_S} (a token that never expires cannot be revoked). */
export function ttlArg(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > MAX_TOKEN_TTL_S) {
    throw new InvalidArgumentError(`must be a whole number of seconds in 1..${MAX_TOKEN_TTL_S} (365 days)`);
  }
  return n;
}

/** A reader id (`[A-Za-z0-9_.-]{1,64}`). */
export function readerArg(value: string): string {
  if (!isId(value)) throw new InvalidArgumentError('reader id must match [A-Za-z0-9_.-]{1,64}');
  return value;
}

/** A number of minutes: more than 0, at most `max`, decimals allowed (`0.5` = 30 s). */
export function minutesArg(max: number): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!/^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value) || !(n > 0) || n > max)
      throw new InvalidArgumentError(
        `must be a number of minutes over 0 and at most ${max} (decimals allowed: 0.5 = 30 s)`,
      );
    return n;
  };
}
