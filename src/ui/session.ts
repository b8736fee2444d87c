/**
 * Who the explorer acts as. The person signs in with the service key (acts for any reader, picked in
 * the header) or a reader token (acts for its own reader, the token's `sub`). The secret is kept in
 * each tab's `sessionStorage` only — gone when the tab closes, never in `localStorage`, cookies or the URL.
 * Tabs of the same origin share it over a `BroadcastChannel` ({@link CHANNEL}), in memory: a new tab
 * with none asks the open ones and takes the first answer, a sign-in is offered to the tabs still on
 * the sign-in form, and a sign-out signs every tab out (docs/ui.md, "Sign-in across tabs").
 * Every call goes through the typed client `freshet-engine/client` (src/client/).
 */
import { FreshetClient } from '../client/index.js';

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

/** The name of the channel the tabs of the origin share the session on. */
export const CHANNEL = 'freshet-session';

/** What the tabs tell each other: a new tab asks, a signed-in tab answers (or announces a sign-in), a sign-out. */
type TabMessage = { type: 'ask' } | { type: 'session'; session: Session } | { type: 'signout' };

/** Whether `s` has the shape of a session (what another tab or the store hands over is checked). */
function isSession(s: unknown): s is Session {
  const x = s as Session | null;
  return (
    typeof x === 'object' &&
    x !== null &&
    (x.mode === 'service' || x.mode === 'reader') &&
    typeof x.secret === 'string' &&
    x.secret.length > 0 &&
    typeof x.reader === 'string' &&
    x.reader.length > 0
  );
}

/** The session of this tab, or null before signing in. */
export function loadSession(): Session | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as unknown;
    return isSession(s) ? s : null;
  } catch {
    return null;
  }
}

/** What {@link linkTabs} needs from the page. */
export interface TabHooks {
  /** This tab's session, or null while it shows the sign-in form. */
  current(): Session | null;
  /** Another tab handed over a session while this one has none: sign in with it. */
  adopt(s: Session): void;
  /** Another tab signed out: sign this one out too. */
  signedOut(): void;
}

/** This tab's end of the channel (null where the browser has no BroadcastChannel: each tab then asks). */
let channel: BroadcastChannel | null = null;

/**
 * Joins the tabs of the origin: answers a new tab's question with this tab's session, adopts a session
 * handed over while this tab has none, and signs out when another tab does. Call once per page load.
 */
export function linkTabs(hooks: TabHooks): void {
  if (typeof BroadcastChannel !== 'function' || channel) return;
  const ch = new BroadcastChannel(CHANNEL);
  channel = ch;
  ch.addEventListener('message', (e: MessageEvent<TabMessage>) => {
    const m = e.data;
    const mine = hooks.current();
    if (m?.type === 'ask' && mine) ch.postMessage({ type: 'session', session: mine } satisfies TabMessage);
    else if (m?.type === 'session' && !mine && isSession(m.session)) hooks.adopt(m.session);
    else if (m?.type === 'signout' && mine) hooks.signedOut();
  });
}

/** Asks the other open tabs for their session (the answer reaches {@link TabHooks.adopt}). */
export function askTabs(): void {
  channel?.postMessage({ type: 'ask' } satisfies TabMessage);
}

/** Offers a fresh sign-in to the tabs still on the sign-in form. */
export function announceSignIn(s: Session): void {
  channel?.postMessage({ type: 'session', session: s } satisfies TabMessage);
}

/** Tells every other tab to sign out. */
export function announceSignOut(): void {
  channel?.postMessage({ type: 'signout' } satisfies TabMessage);
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
