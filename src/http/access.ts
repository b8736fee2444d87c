/**
 * Request access rules: who the caller is (bearer token), which reader a feed request is for, and
 * the request's virtual time.
 *
 * - The service key may act for any reader, named by `X-Freshet-Reader`, and may set the request's
 *   virtual time with `X-Freshet-Now` (epoch ms) — used by replays of historical data.
 * - A reader token acts for its `sub` only; a different `X-Freshet-Reader` or any `X-Freshet-Now` is FORBIDDEN.
 */
import type { FastifyRequest } from 'fastify';
import { fail } from '../domain/errors.js';
import { assertId } from '../domain/ids.js';
import type { Clock } from '../domain/clock.js';
import type { Principal, TokenVerifier } from '../services/tokens.js';

/** Verifies the bearer token of a request. */
export function principalOf(req: FastifyRequest, tokens: TokenVerifier): Promise<Principal> {
  return tokens.verify(req.headers.authorization);
}

/** Throws FORBIDDEN unless the caller holds the service key. */
export function requireService(p: Principal): void {
  if (p.kind !== 'service') throw fail('FORBIDDEN', 'this route needs the service key');
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
    if (named !== undefined && named !== p.readerId) throw fail('FORBIDDEN', 'a reader token may only act for its own reader');
    return p.readerId;
  }
  if (named === undefined) throw fail('INVALID_INPUT', 'with the service key, name the reader in X-Freshet-Reader');
  return assertId(named, 'reader id');
}

/** The request's time in epoch ms: `X-Freshet-Now` for the service key, else the clock. */
export function nowOf(p: Principal, req: FastifyRequest, clock: Clock): number {
  const header = req.headers['x-freshet-now'];
  if (header === undefined) return clock.now();
  if (p.kind !== 'service') throw fail('FORBIDDEN', 'X-Freshet-Now needs the service key');
  if (typeof header !== 'string' || !/^[0-9]{1,15}$/.test(header)) throw fail('INVALID_INPUT', 'X-Freshet-Now must be epoch milliseconds');
  return Number(header);
}
