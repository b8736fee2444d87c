/**
 * One item as a card: the title (a link to the item's URL, opened outside, or to the item page when the
 * item has none), a small link to the item page, author, how long ago it was published (the exact UTC
 * time in the `<time>`), the link's host once (without `www.`), the item's popularity, tags, an optional
 * badge (the discover source), a "Why?" panel (the explain of the item in the page's feed), and the actions a reader would take on it — "Not interested" (the
 * card leaves the list), "Show less like this" (the card folds into a note with Undo: the item's author and
 * tags weigh less for a while), "Mute <author>" (every card of the author leaves the list: their items
 * leave every feed, without a block), follow/unfollow the author. An item holding one of the reader's
 * `warn` phrases (`filtered`) is shown collapsed behind them, with a button to show it. All actions are
 * real buttons.
 */
import type { FeedItem } from '../client/types.js';
import type { Ctx } from './context.js';
import { h, isoMinute, plural, timeEl } from './dom.js';
import { type ExplainFeed, whyButton } from './explain-view.js';
import { describe } from './extras.js';

/** Options of {@link itemCard}. */
export interface CardOptions {
  /** A small label shown before the title (discover's source). */
  badge?: string;
  /** Offer "Not interested" (the ranked feeds; not the following timeline, which keeps everything). */
  dismiss?: boolean;
  /** Called after the item was marked not interested and its card removed. */
  onDismissed?(id: string): void;
  /** Offer "Show less like this" (the ranked feeds, where the weight it sets applies). */
  showLess?: boolean;
  /** Offer "Mute <author>"; `onMuted` then removes the author's cards. */
  mute?: boolean;
  onMuted?(author: string): void;
  /** Offer "Why?": the explain of the item in this feed, for the page's reader. */
  why?: ExplainFeed;
}

/**
 * The URL when it is an absolute http(s) URL, else null: the server refuses any other on write
 * (`HTTP_URL_PATTERN`), and the explorer links nothing else all the same (no `javascript:` link).
 */
export function httpUrl(url: string | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

/** The host of an http(s) URL without a leading `www.` (`www.youtube.com` → `youtube.com`), or null. */
export function shortHost(url: string | null): string | null {
  const ok = httpUrl(url);
  return ok ? new URL(ok).hostname.replace(/^www\./i, '') || null : null;
}

/** A follow/unfollow toggle for `author` (label follows the state once loaded). */
export function followButton(ctx: Ctx, author: string): HTMLButtonElement {
  const label = (on: boolean) => (on ? `Unfollow ${author}` : `Follow ${author}`);
  const b = h(
    'button',
    { type: 'button', class: 'small', 'data-action': 'follow', 'aria-pressed': 'false' },
    `Follow ${author}`,
  );
  void ctx.follows.load().then(
    (s) => {
      b.textContent = label(s.has(author));
      b.setAttribute('aria-pressed', String(s.has(author)));
    },
    () => undefined,
  );
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      const on = await ctx.follows.toggle(author);
      b.textContent = label(on);
      b.setAttribute('aria-pressed', String(on));
      ctx.say(
        on
          ? `Following ${author}: their items join the following timeline.`
          : `Unfollowed ${author}: their items leave the following timeline.`,
      );
    } catch (err) {
      ctx.say(`Could not change the follow: ${describe(err)}`);
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

/** The "Show less like this" button: the card folds into a note with Undo (the item is not removed). */
function showLessButton(ctx: Ctx, item: FeedItem, li: HTMLLIElement): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'small', 'data-action': 'show-less' }, 'Show less like this');
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      const f = await ctx.client.feedback.showLess(item.id);
      const kept = [...li.childNodes];
      const undo = h('button', { type: 'button', class: 'small', 'data-action': 'undo-show-less' }, 'Undo');
      const tags = item.tags.length ? ` and the tags ${item.tags.slice(0, 3).join(', ')}` : '';
      const note = h(
        'p',
        { class: 'folded', 'data-testid': 'show-less-note' },
        `You will see less like “${item.title}”: ${item.author_id}${tags} weigh less until ${isoMinute(f.author_penalty_until)}. `,
        undo,
      );
      li.replaceChildren(note);
      li.classList.add('muted');
      undo.focus();
      undo.addEventListener('click', async () => {
        undo.disabled = true;
        try {
          await ctx.client.feedback.undo(item.id, { kind: 'show_less' });
          li.replaceChildren(...kept);
          li.classList.remove('muted');
          b.disabled = false;
          b.focus();
          ctx.say(`Undone: ${item.author_id} weighs as before.`);
        } catch (err) {
          undo.disabled = false;
          ctx.say(`Could not undo: ${describe(err)}`);
        }
      });
    } catch (err) {
      b.disabled = false;
      ctx.say(`Could not record it: ${describe(err)}`);
    }
  });
  return b;
}

/** The "Mute <author>" button: every feed of the reader leaves the author out (no block; the author is not told). */
function muteButton(ctx: Ctx, author: string, onMuted?: (author: string) => void): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'small', 'data-action': 'mute' }, `Mute ${author}`);
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await ctx.client.users.muteAuthor(ctx.reader, author);
      ctx.say(
        `Muted ${author}: their items leave every feed of ${ctx.reader} (not a block). Unmute under Preferences.`,
      );
      onMuted?.(author);
    } catch (err) {
      b.disabled = false;
      ctx.say(`Could not mute: ${describe(err)}`);
    }
  });
  return b;
}

/** Wraps a card's content behind the reader's `warn` phrases it holds, with a button to show it. */
function behindWarning(li: HTMLLIElement, filtered: readonly string[]): void {
  const content = h('div', { class: 'warned', hidden: true }, [...li.childNodes]);
  const show = h('button', { type: 'button', class: 'small', 'data-action': 'show-filtered' }, 'Show anyway');
  const note = h(
    'p',
    { class: 'folded', 'data-testid': 'filtered' },
    `Filtered: it mentions ${filtered.map((p) => `“${p}”`).join(', ')} (your muted words with action warn). `,
    show,
  );
  show.addEventListener('click', () => {
    note.remove();
    content.hidden = false;
    content.querySelector<HTMLElement>('h3 a')?.focus();
  });
  li.replaceChildren(note, content);
}

/** The card's heading: the badge, the title linking out (or to the item page), and a small "item" link. */
function cardTitle(item: FeedItem, badge: string | undefined): HTMLElement {
  const page = `#/item/${encodeURIComponent(item.id)}`;
  const url = httpUrl(item.url);
  return h(
    'h3',
    {},
    badge ? h('span', { class: `badge badge-${badge}` }, badge) : null,
    url
      ? [
          h('a', { href: url, rel: 'noopener noreferrer', target: '_blank', class: 'out' }, item.title),
          ' ',
          h('a', { href: page, class: 'item-link', 'aria-label': `Item page of “${item.title}”` }, 'item'),
        ]
      : h('a', { href: page }, item.title),
  );
}

/**
 * The card's meta line: author, age, host (once: a tag equal to it is not repeated), popularity (the
 * served item's `popularity` — HN points in the sample; left out at 0), tags, language.
 */
function cardMeta(item: FeedItem, site: string | null): HTMLElement {
  const tags = item.tags.filter((t) => t.replace(/^www\./i, '') !== site).slice(0, 5);
  return h(
    'p',
    { class: 'meta' },
    h('span', {}, item.author_id),
    ' · ',
    timeEl(item.published_at),
    site ? [' · ', h('span', { class: 'host' }, site)] : null,
    item.popularity > 0
      ? [
          ' · ',
          h(
            'span',
            { class: 'pop', title: 'popularity: the points or likes the application gave the item' },
            `▲ ${plural(item.popularity, 'point')}`,
          ),
        ]
      : null,
    tags.length ? [' · ', tags.join(', ')] : null,
    item.lang && item.lang !== 'und' ? [' · ', h('span', { class: 'lang', title: 'language' }, item.lang)] : null,
  );
}

/** The card of one item (an `<li>` with `data-id` and `data-author`). */
export function itemCard(ctx: Ctx, item: FeedItem, opts: CardOptions = {}): HTMLLIElement {
  const li = h('li', { class: 'card', 'data-id': item.id, 'data-author': item.author_id });
  const site = shortHost(item.url);
  const actions = h('div', { class: 'actions' });
  if (opts.dismiss) {
    const b = h('button', { type: 'button', class: 'small', 'data-action': 'not-interested' }, 'Not interested');
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        await ctx.client.feedback.notInterested(item.id);
        const next = (li.nextElementSibling ?? li.previousElementSibling)?.querySelector<HTMLElement>('a');
        li.remove();
        next?.focus();
        ctx.say(
          `"${item.title}" will not be shown again; ${item.author_id}'s items weigh less for a while. Undo it under Exclusions.`,
        );
        opts.onDismissed?.(item.id);
      } catch (err) {
        b.disabled = false;
        ctx.say(`Could not mark it: ${describe(err)}`);
      }
    });
    actions.append(b);
  }
  if (opts.showLess) actions.append(showLessButton(ctx, item, li));
  actions.append(followButton(ctx, item.author_id));
  if (opts.mute) actions.append(muteButton(ctx, item.author_id, opts.onMuted));
  const panel = h('div', { class: 'why', 'aria-live': 'polite' });
  if (opts.why) actions.append(whyButton(ctx, opts.why, item.id, panel));
  li.append(cardTitle(item, opts.badge), cardMeta(item, site), actions, panel);
  if (item.filtered?.length) behindWarning(li, item.filtered);
  return li;
}
