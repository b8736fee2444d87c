/**
 * Access tokens: the service key (the application's backend) and signed reader tokens.
 *
 * Reader tokens are JWTs (HS256, via `jose`) with `sub` = reader id and `exp` (epoch seconds),
 * signed with `FRESHET_SECRET`. The service key is a shared secret compared in constant time.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { isId } from '../domain/ids.js';
import { fail } from '../domain/errors.js';

/** Who is calling. */
export type Principal = { kind: 'service' } | { kind: 'reader'; readerId: string };

const ISSUER = 'freshet';

/** Mints a reader token valid for `ttlS` seconds from `nowMs` (epoch ms). */
export async function mintReaderToken(secret: string, readerId: string, ttlS: number, nowMs = Date.now()): Promise<string> {
  if (!isId(readerId)) throw fail('INVALID_ID', 'reader id must match [A-Za-z0-9_.-]{1,64}');
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(readerId)
    .setIssuer(ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlS)
    .sign(new TextEncoder().encode(secret));
}

/** Verifies bearer credentials against the service key and the token secret. */
export class TokenVerifier {
  private readonly serviceDigest: Buffer;
  private readonly key: Uint8Array;

  constructor(serviceKey: string, secret: string) {
    this.serviceDigest = digest(serviceKey);
    this.key = new TextEncoder().encode(secret);
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
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] });
      if (!isId(payload.sub) || typeof payload.exp !== 'number') throw fail('UNAUTHENTICATED', 'token has no valid sub/exp');
      return { kind: 'reader', readerId: payload.sub };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw fail('TOKEN_EXPIRED', 'token expired; mint a new one');
      throw fail('UNAUTHENTICATED', 'invalid token');
    }
  }
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
