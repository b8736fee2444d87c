/**
 * Request access rules: who the caller is (bearer token), which reader a feed request is for, and
 * the request's virtual time.
 *
 * - Every `/v1` request is authenticated first, by the {@link authenticate} `onRequest` hook, before
 *   its body is parsed or anything is validated (without credentials nobody learns what
 *   the validators accept); handlers read the result with {@link principalOf}.
 * - The service key may act for any reader, named by `X-Freshet-Reader`, and may set the request's
 *   virtual time with `X-Freshet-Now` (epoch ms) — used by replays of historical data.
 * - A reader token acts for its `sub` only; a different `X-Freshet-Reader` or any `X-Freshet-Now` is FORBIDDEN.
 */
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { fail } from '../errors.js';
import { assertId } from '../ids.js';
import type { Clock } from '../clock.js';
import { assertTimeInRange } from '../time-range.js';
import type { Principal, TokenVerifier } from './tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller of a `/v1` request (set by {@link authenticate}); null elsewhere. */
    principal: Principal | null;
  }
}

/**
 * The `onRequest` hook of the `/v1` routes: verifies the bearer token and keeps the principal on the
 * request. Runs before body parsing and validation, so a request without valid credentials is 401
 * whatever its body, path or query hold.
 * @throws FreshetError `UNAUTHENTICATED`, `TOKEN_EXPIRED`.
 */
export function authenticate(tokens: TokenVerifier): onRequestAsyncHookHandler {
  return async (req) => {
    req.principal = await tokens.verify(req.headers.authorization);
  };
}

/**
 * An `onRequest` hook admitting only the service key (`/metrics`, `/docs` when so configured).
 * @throws FreshetError `UNAUTHENTICATED`, `TOKEN_EXPIRED`, `FORBIDDEN` (a reader token).
 */
export function serviceKeyHook(tokens: TokenVerifier): onRequestAsyncHookHandler {
  return async (req) => {
    requireService(await tokens.verify(req.headers.authorization));
  };
}

/** The caller, verified by {@link authenticate}. @throws FreshetError `UNAUTHENTICATED` on a route the hook does not cover. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw fail('UNAUTHENTICATED', 'missing bearer token (Authorization: Bearer <token>)');
  return req.principal;
}

/** Throws FORBIDDEN unless the caller holds the service key. */
export function requireService(p: Principal): void {
  if (p.kind !== 'service') throw fail('FORBIDDEN', 'this route needs the service key; a reader token may not call it');
}

/**
 * The reader a feed request is for.
 * @throws FreshetError INVALID_INPUT (service key without `X-Freshet-Reader`), FORBIDDEN (a reader
 *   token naming another reader), INVALID_ID.
 */
export function readerOf(p: Principal, req: FastifyRequest, pathReader?: string): string {
  const header = req.headers['x-freshet-reader'];
  const named = pathReader ?? (typeof header === 'string' ? header : undefined);
  if (p.kind === 'reader') {
    if (named !== undefined && named !== p.readerId)
      throw fail('FORBIDDEN', `a reader token acts only for its own reader (${p.readerId}), not ${named}`);
    return p.readerId;
  }
  if (named === undefined)
    throw fail(
      'INVALID_INPUT',
      'header X-Freshet-Reader is required with the service key: name the reader the request is for',
    );
  return assertId(named, 'header X-Freshet-Reader');
}

/**
 * The request's time in epoch ms: `X-Freshet-Now` for the service key (within the accepted time
 * range, src/kernel/time-range.ts), else the clock.
 * @throws FreshetError FORBIDDEN (a reader token sending it), INVALID_INPUT (not epoch ms, out of range).
 */
export function nowOf(
  p: Principal,
  req: FastifyRequest,
  access: Pick<RequestAccess, 'clock' | 'futureSkewMs'>,
): number {
  const header = req.headers['x-freshet-now'];
  if (header === undefined) return access.clock.now();
  if (p.kind !== 'service')
    throw fail('FORBIDDEN', 'header X-Freshet-Now needs the service key; a reader token reads at the server time');
  if (typeof header !== 'string' || !/^[0-9]{1,15}$/.test(header))
    throw fail('INVALID_INPUT', 'header X-Freshet-Now must be epoch milliseconds (1 to 15 digits)');
  return assertTimeInRange(Number(header), 'header X-Freshet-Now', access.clock.now(), access.futureSkewMs);
}

/**
 * A time input of a body (an item's `published_at`, a view's `at`), epoch ms, checked against the
 * accepted time range. @throws FreshetError INVALID_INPUT naming `field`.
 */
export function timeOf(
  ms: number,
  field: string,
  access: Pick<RequestAccess, 'clock' | 'futureSkewMs'>,
  unit: 's' | 'ms' = 'ms',
): number {
  return assertTimeInRange(ms, field, access.clock.now(), access.futureSkewMs, unit);
}

/**
 * The reader (or with `pathReader`, the path's user) a request acts for, for a route that reads no time:
 * {@link readerOf} of the request's caller. @throws FreshetError as {@link principalOf} and {@link readerOf}.
 */
export function readerOfRequest(req: FastifyRequest, pathReader?: string): string {
  return readerOf(principalOf(req), req, pathReader);
}

/**
 * A reader's request as a handler needs it: the caller, the reader it acts for ({@link readerOf}, or the
 * path's user with `pathReader`) and the request's time ({@link nowOf}). Every check runs before the
 * handler does any work.
 * @throws FreshetError as {@link principalOf}, {@link readerOf} and {@link nowOf}.
 */
export function readerRequest(
  req: FastifyRequest,
  access: Pick<RequestAccess, 'clock' | 'futureSkewMs'>,
  pathReader?: string,
): { principal: Principal; readerId: string; nowMs: number } {
  const principal = principalOf(req);
  return { principal, readerId: readerOf(principal, req, pathReader), nowMs: nowOf(principal, req, access) };
}

/** Throws unless the request carries the service key (a route that reads no time). @throws FreshetError UNAUTHENTICATED, FORBIDDEN. */
export function requireServiceKey(req: FastifyRequest): void {
  requireService(principalOf(req));
}

/**
 * A request that needs the service key, and its time ({@link nowOf}: `X-Freshet-Now` or the clock).
 * @throws FreshetError UNAUTHENTICATED, FORBIDDEN (a reader token), INVALID_INPUT (a bad `X-Freshet-Now`).
 */
export function serviceRequest(
  req: FastifyRequest,
  access: Pick<RequestAccess, 'clock' | 'futureSkewMs'>,
): { nowMs: number } {
  const principal = principalOf(req);
  requireService(principal);
  return { nowMs: nowOf(principal, req, access) };
}

/** What every route needs to authorize a request and read its time. */
export interface RequestAccess {
  tokens: TokenVerifier;
  clock: Clock;
  /** How far past the clock a time input may be, ms (`FRESHET_FUTURE_SKEW_S`). */
  futureSkewMs: number;
}
