/**
 * The verified-token cache of TokenVerifier (src/kernel/http/tokens.ts): a remembered reader token is
 * answered without a new HMAC check only while its `exp` is in the future; at `exp` it is verified
 * again and refused as TOKEN_EXPIRED; forged tokens are never remembered; the cache is bounded.
 */
import { describe, expect, it } from 'vitest';
import { TokenVerifier, mintReaderToken } from '../../src/kernel/http/tokens.js';
import { FreshetError } from '../../src/kernel/errors.js';

const KEY = 'k'.repeat(24);
const SECRET = 's'.repeat(24);
const T0 = Date.UTC(2026, 0, 1);

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    expect(err).toBeInstanceOf(FreshetError);
    return (err as FreshetError).name_;
  }
}

describe('TokenVerifier cache', () => {
  it('serves a remembered token until exp, then refuses it as expired', async () => {
    let now = T0;
    const v = new TokenVerifier(KEY, SECRET, 100, () => now);
    const token = await mintReaderToken(SECRET, 'alice', 60, T0);
    expect(await v.verify(`Bearer ${token}`)).toEqual({ kind: 'reader', readerId: 'alice' });
    now = T0 + 59_000;
    expect(await v.verify(`Bearer ${token}`)).toEqual({ kind: 'reader', readerId: 'alice' });
    now = T0 + 60_000; // exp reached: jose's rule is exp <= now → expired
    expect(await codeOf(v.verify(`Bearer ${token}`))).toBe('TOKEN_EXPIRED');
    expect(await codeOf(v.verify(`Bearer ${token}`))).toBe('TOKEN_EXPIRED');
  });

  it('never remembers a token signed with another secret, and stays bounded', async () => {
    const v = new TokenVerifier(KEY, SECRET, 2, () => T0);
    const forged = await mintReaderToken('x'.repeat(24), 'mallory', 60, T0);
    for (let i = 0; i < 3; i++) expect(await codeOf(v.verify(`Bearer ${forged}`))).toBe('UNAUTHENTICATED');
    const tokens = await Promise.all(['a', 'b', 'c'].map((r) => mintReaderToken(SECRET, r, 60, T0)));
    for (const [i, t] of tokens.entries())
      expect(await v.verify(`Bearer ${t}`)).toEqual({ kind: 'reader', readerId: ['a', 'b', 'c'][i] });
    expect((v as unknown as { verified: { size: number } }).verified.size).toBe(2);
    expect(await v.verify(`Bearer ${KEY}`)).toEqual({ kind: 'service' });
  });
});
