/**
 * Who the explorer acts as. The person signs in with the service key (acts for any reader, picked in
 * the header) or a reader token (acts for its own reader, the token's `sub`). The secret is kept in
 * `sessionStorage` only — gone when the tab closes, never in `localStorage`, cookies or the URL.
 * Every call goes through the typed client `freshet/client` (src/client/).
 */
import { FreshetClient } from '../../../client/index.js';

/** What is kept in the tab's session. */
export interface Session {
  mode: 'service' | 'reader';
  /** The service key or the reader token. */
  secret: string;
  /** The reader the pages are for (the token's `sub` in reader mode). */
  reader: string;
}

const KEY = 'freshet.session';
const READERS = 'freshet.readers';

/** The session of this tab, or null before signing in. */
export function loadSession(): Session | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Session | null;
    return s &&
      (s.mode === 'service' || s.mode === 'reader') &&
      typeof s.secret === 'string' &&
      typeof s.reader === 'string'
      ? s
      : null;
  } catch {
    return null;
  }
}

/** Keeps the session in this tab and remembers the reader among the recent ones. */
export function saveSession(s: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(s));
  const recent = [s.reader, ...recentReaders().filter((r) => r !== s.reader)].slice(0, 10);
  sessionStorage.setItem(READERS, JSON.stringify(recent));
}

/** Forgets the key or token. */
export function clearSession(): void {
  sessionStorage.removeItem(KEY);
}

/** Readers picked in this tab, most recent first (for the picker's suggestions). */
export function recentReaders(): string[] {
  try {
    const r = JSON.parse(sessionStorage.getItem(READERS) ?? '[]') as unknown;
    return Array.isArray(r) ? r.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * The reader of a reader token: its JWT `sub` (read, not verified — the server verifies every call).
 * @returns null when the text is not a JWT with a string `sub`.
 */
export function readerOfToken(token: string): string | null {
  const part = token.split('.')[1];
  if (!part) return null;
  try {
    const json = atob(
      part
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(part.length / 4) * 4, '='),
    );
    const sub = (JSON.parse(json) as { sub?: unknown }).sub;
    return typeof sub === 'string' && sub.length > 0 ? sub : null;
  } catch {
    return null;
  }
}

/** The client of a session: same origin as the page; service mode names the session's reader. */
export function clientFor(s: Session): FreshetClient {
  const base = { baseUrl: location.origin, timeoutMs: 15_000 };
  return s.mode === 'service'
    ? new FreshetClient({ ...base, serviceKey: s.secret, reader: s.reader })
    : new FreshetClient({ ...base, token: s.secret });
}
