/**
 * The discover feed's cursor (the discover design: "one opaque cursor carries the phase"): the phase a session is in
 * and each phase's position, signed so a client can neither forge nor edit it, and bound to its reader.
 *
 * Wire form: `d1.<base64url(JSON body)>.<base64url(first 16 bytes of HMAC-SHA256)>`; the MAC covers the
 * version, the reader id and the body, keyed with `FRESHET_SECRET` (RFC 2104 HMAC). The body is an array
 * `[t0, phase, p1Ts, p1Id, trending, p2Score, p2Id, p3Ts, p3Id, factor×100]` (see {@link CursorState}).
 *
 * - malformed, wrong version, bad MAC, another reader's cursor → FreshetError `INVALID_CURSOR` (400),
 *   whose message names the query parameter and what to send instead ({@link WHAT_TO_SEND}); a bad
 *   MAC cannot tell an edited cursor from another reader's (the reader id is in the MAC, not the
 *   cursor), so it names both;
 * - a valid cursor whose session began more than the cursor TTL before `now` (or after `now`) is
 *   **stale**: {@link CursorCodec.decode} returns null and the feed starts afresh (it says so).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fail } from '../kernel/errors.js';

/** A keyset position: the sort key and id of the last item consumed (null = from the start). */
export interface Position {
  key: number;
  id: string;
}

/** Phases: 1 followed creators (+ trending), 2 discovery (vector), 3 newest overall, 4 done. */
export type Phase = 1 | 2 | 3 | 4;

/** What the cursor carries. */
export interface CursorState {
  /** Session start, epoch ms: phases read items published ≤ t0; the reader embedding is as of t0. */
  t0: number;
  phase: Phase;
  /** Phase 1: (published_at, id) of the last followed item consumed. */
  p1: Position | null;
  /** Index of the next trending entry to consider. */
  trending: number;
  /** Phase 2: (cosine, id) of the last discovered item consumed (ordered by cosine desc, id asc). */
  p2: Position | null;
  /** Phase 3: (published_at, id) of the last newest-overall item consumed. */
  p3: Position | null;
  /** Over-fetch factor learned from the filter rate so far. */
  factor: number;
}

const VERSION = 'd1';
const MAC_BYTES = 16;
/** The end of every INVALID_CURSOR message: what a client sends instead. */
export const WHAT_TO_SEND = 'send the next_cursor of the previous page of this reader, or none to start over';

/** INVALID_CURSOR: `query parameter cursor <problem>: <what to send>`. */
const invalid = (problem: string) => fail('INVALID_CURSOR', `query parameter cursor ${problem}: ${WHAT_TO_SEND}`);

/** Encodes and verifies cursors with one secret. */
export class CursorCodec {
  constructor(
    private readonly secret: string,
    /** A cursor older than this (session start to now, ms) is stale. */
    private readonly ttlMs: number,
  ) {}

  /** The opaque cursor of `state` for `readerId`. */
  encode(readerId: string, s: CursorState): string {
    const body = Buffer.from(
      JSON.stringify([
        s.t0,
        s.phase,
        s.p1?.key ?? null,
        s.p1?.id ?? null,
        s.trending,
        s.p2?.key ?? null,
        s.p2?.id ?? null,
        s.p3?.key ?? null,
        s.p3?.id ?? null,
        Math.round(s.factor * 100),
      ]),
    ).toString('base64url');
    return `${VERSION}.${body}.${this.mac(readerId, body).toString('base64url')}`;
  }

  /**
   * The state of a cursor, or null when it is stale (see the module doc).
   * @throws FreshetError `INVALID_CURSOR` when it is malformed, of another version, tampered with, or
   *   another reader's.
   */
  decode(readerId: string, cursor: string, nowMs: number): CursorState | null {
    const [version, body, mac, extra] = cursor.split('.');
    if (!body || !mac || extra !== undefined) throw invalid(`is not a discover cursor (${VERSION}.<body>.<signature>)`);
    if (version !== VERSION)
      throw invalid(`is of another version (${JSON.stringify(version!.slice(0, 8))}; this server issues ${VERSION})`);
    const given = Buffer.from(mac, 'base64url');
    const want = this.mac(readerId, body);
    if (given.length !== want.length || !timingSafeEqual(given, want))
      throw invalid('was not issued to this reader, or was altered (its signature does not match)');
    const s = parseBody(body);
    if (s.t0 > nowMs || nowMs - s.t0 > this.ttlMs) return null;
    return s;
  }

  private mac(readerId: string, body: string): Buffer {
    return createHmac('sha256', this.secret).update(`${VERSION}\n${readerId}\n${body}`).digest().subarray(0, MAC_BYTES);
  }
}

/** Parses a verified body; a shape error here means a bug or a leaked secret, still answered as 400. */
function parseBody(body: string): CursorState {
  let a: unknown;
  try {
    a = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalid('has a body that is not readable');
  }
  const ok =
    Array.isArray(a) &&
    a.length === 10 &&
    Number.isSafeInteger(a[0]) &&
    [1, 2, 3, 4].includes(a[1] as number) &&
    Number.isSafeInteger(a[4]) &&
    (a[4] as number) >= 0 &&
    Number.isSafeInteger(a[9]) &&
    (a[9] as number) > 0;
  if (!ok) throw invalid('has a body of the wrong shape');
  const arr = a as unknown[];
  return {
    t0: arr[0] as number,
    phase: arr[1] as Phase,
    p1: position(arr[2], arr[3]),
    trending: arr[4] as number,
    p2: position(arr[5], arr[6]),
    p3: position(arr[7], arr[8]),
    factor: (arr[9] as number) / 100,
  };
}

function position(key: unknown, id: unknown): Position | null {
  if (key === null && id === null) return null;
  if (typeof key !== 'number' || !Number.isFinite(key) || typeof id !== 'string')
    throw invalid('has a position of the wrong shape');
  return { key, id };
}
