/**
 * Errors with stable codes: the one place where every Freshet error code lives.
 *
 * Every failure a client can cause or observe is a {@link FreshetError} with a numeric `code`
 * (the `code` field of the `{code, msg, data}` envelope, docs/api.md) and the HTTP status it maps to.
 * Codes never change meaning once released; the README lists them all.
 */

/** The catalogue: name → numeric envelope code and HTTP status. */
export const ErrorCodes = {
  /** A body, query or path parameter failed its schema (wrong type, out of range, unknown field value). */
  INVALID_INPUT: { code: 40001, status: 400 },
  /** An id is not 1–64 of `[A-Za-z0-9_.-]`, or is `.` or `..`. */
  INVALID_ID: { code: 40002, status: 400 },
  /** The body is not valid JSON, holds a `__proto__` / `constructor.prototype` key, or has the wrong content type. */
  MALFORMED_BODY: { code: 40003, status: 400 },
  /** A user acting on itself where that makes no sense: following or blocking oneself (the following graph). */
  SELF_REFERENCE: { code: 40004, status: 400 },
  /** A discover cursor that is malformed, of another version, tampered with, or another reader's. */
  INVALID_CURSOR: { code: 40005, status: 400 },
  /** The request line, URL or headers cannot be read: bad percent-encoding (`%zz`), not HTTP, or a header a library refused. */
  MALFORMED_REQUEST: { code: 40006, status: 400 },
  /** No bearer token, or a token that is not a valid service key or reader token. */
  UNAUTHENTICATED: { code: 40101, status: 401 },
  /** A reader token whose `exp` is in the past. */
  TOKEN_EXPIRED: { code: 40102, status: 401 },
  /** A valid token that may not do this (a reader token on a service route, or on another reader). */
  FORBIDDEN: { code: 40301, status: 403 },
  /** A follow across a block (either user blocks the other). */
  BLOCKED: { code: 40302, status: 403 },
  /** The route or the named resource (item, reader) does not exist. */
  NOT_FOUND: { code: 40401, status: 404 },
  /** A user id that no item, follow, read or registration ever introduced (follow/block targets, lists). */
  UNKNOWN_USER: { code: 40402, status: 404 },
  /** The request was not received completely within the server's time limit. */
  REQUEST_TIMEOUT: { code: 40801, status: 408 },
  /** Publishing an item id that was deleted: deleted ids are never reused (publish under a new id). */
  ITEM_DELETED: { code: 40901, status: 409 },
  /** The body exceeds the configured limit. */
  BODY_TOO_LARGE: { code: 41301, status: 413 },
  /** A path segment longer than 100 characters (ids are at most 64). */
  URI_TOO_LONG: { code: 41401, status: 414 },
  /** Too many requests (reserved for rate limits). */
  RATE_LIMITED: { code: 42901, status: 429 },
  /** Over a limit of open following-timeline streams: per reader or per server (`FRESHET_STREAM_MAX_*`). */
  TOO_MANY_STREAMS: { code: 42902, status: 429 },
  /** The request's headers exceed the server's limit (Node's `--max-http-header-size`, 16 KiB by default). */
  HEADERS_TOO_LARGE: { code: 43101, status: 431 },
  /** An unexpected failure inside Freshet; the log has the details. */
  INTERNAL: { code: 50001, status: 500 },
  /** A store (PostgreSQL, Redis) did not answer. */
  STORE_UNAVAILABLE: { code: 50301, status: 503 },
} as const;

/** Name of one entry of {@link ErrorCodes}. */
export type ErrorName = keyof typeof ErrorCodes;

/** A failure with a stable code; `message` is safe to show to the client (no stack, no internals). */
export class FreshetError extends Error {
  readonly code: number;
  readonly status: number;
  constructor(
    readonly name_: ErrorName,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'FreshetError';
    this.code = ErrorCodes[name_].code;
    this.status = ErrorCodes[name_].status;
  }
}

/** Shorthand: `fail('INVALID_ID', 'bad id')` builds the error for a `throw`. */
export function fail(name: ErrorName, message: string, details?: unknown): FreshetError {
  return new FreshetError(name, message, details);
}
