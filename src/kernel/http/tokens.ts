/**
 * Access tokens: the service key (the application's backend) and signed reader tokens.
 *
 * Reader tokens are JWTs (HS256, via `jose`) with `sub` = reader id and `exp` (epoch seconds),
 * signed with `FRESHET_SECRET`. The service key is a shared secret compared in constant time.
 *
 * Verified reader tokens are remembered in a bounded LRU (token → reader and `exp`), so a reader's
 * next requests skip the HMAC check (an asynchronous WebCrypto job, the largest per-request cost of
 * the access hook under load). A remembered token is served only while its `exp` is in the
 * future; once it is not, the token is verified again, which answers `TOKEN_EXPIRED` as before. Only
 * tokens that verified are remembered, so a forged or malformed one is checked every time.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { LRUCache } from 'lru-cache';
import { assertId, isId } from '../ids.js';
import { FreshetError, fail } from '../errors.js';

/** Who is calling. */
export type Principal = { kind: 'service' } | { kind: 'reader'; readerId: string };

const ISSUER = 'freshet';

/** Mints a reader token valid for `ttlS` seconds from `nowMs` (epoch ms). */
export async function mintReaderToken(
  secret: string,
  readerId: string,
  ttlS: number,
  nowMs = Date.now(),
): Promise<string> {
  assertId(readerId, 'reader id');
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(readerId)
    .setIssuer(ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlS)
    .sign(new TextEncoder().encode(secret));
}

/** The longest remaining life of an accepted reader token by default: 365 days (the CLI's own cap), seconds. */
export const MAX_TOKEN_TTL_S = 365 * 86_400;

/** How many verified reader tokens a {@link TokenVerifier} remembers by default (~200 B each). */
export const VERIFIED_TOKENS = 10_000;

/** A verified reader token: whose it is and when it expires (epoch seconds, the JWT `exp`). */
interface Verified {
  readerId: string;
  exp: number;
}

/** Verifies bearer credentials against the service key and the token secret. */
export class TokenVerifier {
  private readonly serviceDigest: Buffer;
  private readonly key: Uint8Array;
  private readonly verified: LRUCache<string, Verified> | null;

  /**
   * @param cacheSize verified reader tokens remembered (LRU); 0 verifies every request.
   * @param nowMs the clock `exp` is compared with (epoch ms), by the cache and by jose.
   * @param maxTtlS the longest remaining life a token may claim, seconds (`FRESHET_TOKEN_MAX_TTL_S`,
   *   default {@link MAX_TOKEN_TTL_S}): a token whose `exp` is further away is refused, however it was
   *   signed — a leaked 100-year token must not outlive every rotation of the secret but one.
   */
  constructor(
    serviceKey: string,
    secret: string,
    cacheSize = VERIFIED_TOKENS,
    private readonly nowMs: () => number = Date.now,
    private readonly maxTtlS = MAX_TOKEN_TTL_S,
  ) {
    this.serviceDigest = digest(serviceKey);
    this.key = new TextEncoder().encode(secret);
    this.verified = cacheSize > 0 ? new LRUCache<string, Verified>({ max: cacheSize }) : null;
  }

  /**
   * Resolves an `Authorization` header value to a principal.
   * @throws FreshetError `UNAUTHENTICATED` (missing, malformed, bad signature) or `TOKEN_EXPIRED`.
   */
  async verify(authorization: string | undefined): Promise<Principal> {
    const m = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!m) throw fail('UNAUTHENTICATED', 'missing bearer token (Authorization: Bearer <token>)');
    const token = m[1]!;
    if (timingSafeEqual(digest(token), this.serviceDigest)) return { kind: 'service' };
    const known = this.verified?.get(token);
    // jose's rule: expired when exp <= now (whole seconds); past that the token is verified (and refused) again
    if (known) {
      if (known.exp > Math.floor(this.nowMs() / 1000)) return { kind: 'reader', readerId: known.readerId };
      this.verified!.delete(token);
    }
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: ISSUER,
        algorithms: ['HS256'],
        currentDate: new Date(this.nowMs()),
      });
      if (!isId(payload.sub) || typeof payload.exp !== 'number')
        throw fail('UNAUTHENTICATED', 'token has no valid sub/exp');
      if (payload.exp - Math.floor(this.nowMs() / 1000) > this.maxTtlS)
        throw fail(
          'UNAUTHENTICATED',
          `token expires more than ${this.maxTtlS} s from now (FRESHET_TOKEN_MAX_TTL_S); mint one with a shorter lifetime`,
        );
      this.verified?.set(token, { readerId: payload.sub, exp: payload.exp });
      return { kind: 'reader', readerId: payload.sub };
    } catch (err) {
      if (err instanceof FreshetError) throw err;
      if (err instanceof joseErrors.JWTExpired) throw fail('TOKEN_EXPIRED', 'token expired; mint a new one');
      throw fail('UNAUTHENTICATED', 'invalid token');
    }
  }
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
