/**
 * The explorer's entry: the sign-in form, then the shell (navigation with the unread notifications badge,
 * reader picker, sign out, a live region) and a hash router (`#/overview`, the landing page; `#/for-you`, `#/discover`,
 * `#/following`, `#/notifications`, `#/hot`, `#/item/<id>`, `#/preferences`, `#/exclusions`, `#/health`, `#/why`, `#/publish`).
 * Each page cleans up its timers when the person leaves it; the shell stops its stream when it is rebuilt
 * (another reader) or the person signs out.
 */
import { FollowSet, type Ctx, type Page } from './context.js';
import { h, plural, replace } from './dom.js';
import { describe } from './extras.js';
import {
  announceSignIn,
  announceSignOut,
  askTabs,
  clearSession,
  clientFor,
  linkTabs,
  loadSession,
  readerOfToken,
  recentReaders,
  saveSession,
  type Session,
} from './session.js';
import { forgetForYou } from './for-you-state.js';
import { discoverPage, followingPage } from './pages/feeds.js';
import { forYouPage } from './pages/for-you.js';
import { hotPage } from './pages/hot.js';
import { itemPage } from './pages/item.js';
import { exclusionsPage } from './pages/exclusions.js';
import { healthPage } from './pages/health.js';
import { overviewPage } from './pages/overview.js';
import { publishPage } from './pages/publish.js';
import { notificationsPage } from './pages/notifications.js';
import { preferencesPage } from './pages/preferences.js';
import { whyPage } from './pages/why.js';
import { unreadText, watchUnread, type Unread } from './unread.js';

const PAGES: { path: string; label: string; page: Page }[] = [
  { path: 'overview', label: 'Overview', page: overviewPage },
  { path: 'for-you', label: 'For you', page: forYouPage },
  { path: 'discover', label: 'Discover', page: discoverPage },
  { path: 'following', label: 'Following', page: followingPage },
  { path: 'notifications', label: 'Notifications', page: notificationsPage },
  { path: 'hot', label: 'Hot', page: hotPage },
  { path: 'preferences', label: 'Preferences', page: preferencesPage },
  { path: 'exclusions', label: 'Exclusions', page: exclusionsPage },
  { path: 'health', label: 'Health', page: healthPage },
  { path: 'why', label: 'Why not?', page: whyPage },
  { path: 'publish', label: 'Publish', page: publishPage },
];

const app = document.getElementById('app')!;
let cleanup: (() => void) | void;
/** The shell's unread watcher (one per signed-in reader; stopped when the shell is rebuilt). */
let unread: Unread | null = null;
/** This tab's session (null on the sign-in form); other tabs of the origin are answered with it. */
let current: Session | null = null;
/** How long a new tab waits for another tab's session before showing the sign-in form, ms. */
const ASK_TABS_MS = 300;

/** The sign-in form: service key + reader, or a reader token. */
function signIn(message = ''): void {
  const mode = h(
    'select',
    { id: 'mode' },
    h('option', { value: 'service' }, 'Service key'),
    h('option', { value: 'reader' }, 'Reader token'),
  );
  const secret = h('input', { id: 'secret', type: 'password', required: true, autocomplete: 'off' });
  const reader = h('input', { id: 'reader', required: true, value: recentReaders()[0] ?? '', autocomplete: 'off' });
  const readerField = h(
    'p',
    { class: 'field' },
    h('label', { for: 'reader' }, 'Reader id (the feeds are shown for this reader)'),
    reader,
  );
  const error = h('p', { class: 'bad', role: 'alert' }, message);
  mode.addEventListener('change', () => {
    readerField.hidden = mode.value !== 'service';
    reader.required = mode.value === 'service';
  });
  const form = h(
    'form',
    { class: 'signin', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Freshet explorer'),
    h(
      'p',
      {},
      "Sign in with the service key (it can act for any reader) or a reader token. It is kept in this tab's session only.",
    ),
    h('p', { class: 'field' }, h('label', { for: 'mode' }, 'Sign in with'), mode),
    h('p', { class: 'field' }, h('label', { for: 'secret' }, 'Key or token'), secret),
    readerField,
    h('button', { type: 'submit' }, 'Sign in'),
    error,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const s: Session =
      mode.value === 'service'
        ? { mode: 'service', secret: secret.value.trim(), reader: reader.value.trim() }
        : { mode: 'reader', secret: secret.value.trim(), reader: readerOfToken(secret.value.trim()) ?? '' };
    if (!s.reader) {
      error.textContent = mode.value === 'service' ? 'Name the reader.' : 'This is not a reader token (no subject).';
      return;
    }
    try {
      await clientFor(s).users.interests(s.reader); // any authenticated read: a wrong key answers 401
    } catch (err) {
      error.textContent = `Sign-in refused: ${describe(err)}`;
      return;
    }
    saveSession(s);
    if (!location.hash || location.hash === '#/') location.hash = '#/overview';
    shell(s);
    announceSignIn(s);
  });
  replace(app, h('main', { id: 'main' }, form));
  (mode as HTMLElement).focus();
}

/** The header's reader field (service key: switch the reader the pages are for) or the token's reader. */
function readerPicker(s: Session): HTMLElement {
  if (s.mode !== 'service') return h('p', { class: 'picker' }, `Reader ${s.reader} (token)`);
  const input = h('input', { id: 'pick-reader', value: s.reader, list: 'readers', autocomplete: 'off', size: 12 });
  const f = h(
    'form',
    { class: 'picker' },
    h('label', { for: 'pick-reader' }, 'Reader'),
    input,
    h(
      'datalist',
      { id: 'readers' },
      recentReaders().map((r) => h('option', { value: r })),
    ),
    h('button', { type: 'submit', class: 'small' }, 'Switch'),
  );
  f.addEventListener('submit', (e) => {
    e.preventDefault();
    const reader = input.value.trim();
    if (!reader) return;
    saveSession({ ...s, reader });
    shell({ ...s, reader });
  });
  return f;
}

/** The navigation badge of the unread count, kept in step with `u`. */
function unreadBadge(u: Unread): HTMLElement {
  const badge = h('span', { class: 'nav-badge', 'data-testid': 'unread', hidden: true });
  const show = (n: number, capped: boolean) => {
    badge.textContent = unreadText(n, capped);
    badge.hidden = n === 0;
    badge.setAttribute('aria-label', `${unreadText(n, capped)} unread`);
  };
  u.onChange(show);
  if (u.count !== null) show(u.count, u.capped);
  return badge;
}

/** Forgets the session and what was shown for it, and shows the sign-in form (with `message`). */
function signOut(message = ''): void {
  clearSession();
  forgetForYou();
  cleanup?.();
  cleanup = undefined;
  window.onhashchange = null;
  unread?.stop();
  unread = null;
  current = null;
  signIn(message);
}

/** The signed-in shell and the router. */
function shell(s: Session): void {
  current = s;
  const client = clientFor(s);
  unread?.stop();
  unread = watchUnread(client, s.reader);
  const live = h('p', { id: 'say', class: 'say', role: 'status', 'aria-live': 'polite' });
  let hideTimer: ReturnType<typeof setTimeout> | undefined;
  const ctx: Ctx = {
    client,
    session: s,
    reader: s.reader,
    follows: followSet(),
    unread,
    say(text) {
      live.textContent = text;
      live.classList.add('shown');
      clearTimeout(hideTimer);
      hideTimer = setTimeout(() => live.classList.remove('shown'), 6000);
    },
  };
  /** A fresh FollowSet per page view (a follow made elsewhere shows on the next one). */
  function followSet(): FollowSet {
    return new FollowSet(client, s.reader, (read) =>
      ctx.say(
        `${s.reader} follows more than ${plural(read, 'author')}; the explorer read ${read} of them, so a Follow button may show for an author already followed (pressing it is harmless).`,
      ),
    );
  }
  const picker = readerPicker(s);
  const out = h('button', { type: 'button', class: 'small' }, 'Sign out');
  out.addEventListener('click', () => {
    signOut();
    announceSignOut();
  });
  const nav = pageNav(ctx.unread);
  const main = h('main', { id: 'main', tabindex: '-1' });
  replace(app, skipLink(main), h('header', {}, h('p', { class: 'brand' }, 'Freshet'), nav, picker, out), main, live);
  startRouter(nav, main, ctx, followSet);
}

/**
 * Routes `#/<page>/<arg>` into `main` now and on every hash change: marks the page's link current, names
 * the tab, scrolls to the top, and gives the page a fresh FollowSet.
 */
function startRouter(nav: HTMLElement, main: HTMLElement, ctx: Ctx, followSet: () => FollowSet): void {
  /** The hash last routed: a hashchange to it (the sign-in sets the hash, then builds the shell) is not routed twice. */
  let routed = '';
  const route = () => {
    routed = location.hash;
    cleanup?.();
    const [, path = 'overview', arg = ''] = /^#\/([^/]*)\/?(.*)$/.exec(location.hash) ?? [];
    const found =
      path === 'item' ? { page: itemPage, label: 'Item' } : (PAGES.find((p) => p.path === path) ?? PAGES[0]!);
    for (const a of nav.querySelectorAll('a')) {
      if (a.dataset.path === path) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    document.title = `${found.label} · Freshet explorer`;
    main.replaceChildren();
    // a page opens at its top (For you then puts back the scroll it kept): the previous page's scroll
    // could leave the new page's first cards under the sticky header
    window.scrollTo(0, 0);
    ctx.follows = followSet();
    cleanup = found.page(main, ctx, arg);
  };
  window.onhashchange = () => {
    if (location.hash !== routed) route();
  };
  route();
}

/** The pages' navigation, the notifications link with its unread badge. */
function pageNav(u: Unread): HTMLElement {
  return h(
    'nav',
    { 'aria-label': 'Pages' },
    h(
      'ul',
      {},
      PAGES.map((p) =>
        h(
          'li',
          {},
          h(
            'a',
            { href: `#/${p.path}`, 'data-path': p.path },
            p.label,
            p.path === 'notifications' ? [' ', unreadBadge(u)] : null,
          ),
        ),
      ),
    ),
  );
}

/** "Skip to content": moves the focus to `main`. */
function skipLink(main: HTMLElement): HTMLElement {
  return h(
    'a',
    {
      class: 'skip',
      href: '#main',
      onclick: (e: Event) => {
        e.preventDefault();
        main.focus();
      },
    },
    'Skip to content',
  );
}

/** Shows the sign-in form when no other tab answered in time. */
let asking: ReturnType<typeof setTimeout> | undefined;
linkTabs({
  current: () => current,
  adopt(s) {
    clearTimeout(asking);
    saveSession(s);
    if (!location.hash || location.hash === '#/') location.hash = '#/overview';
    shell(s);
  },
  signedOut: () => signOut('Signed out in another tab.'),
});
const saved = loadSession();
if (saved) shell(saved);
else {
  askTabs();
  asking = setTimeout(() => {
    if (!current) signIn();
  }, ASK_TABS_MS);
}
