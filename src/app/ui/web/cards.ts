/**
 * One item as a card: title (to the item page), author, time, link host, tags, an optional badge (the
 * discover source, a timeline id), and the actions a reader would take on it — "Not interested" (the
 * card leaves the list), follow/unfollow the author. All actions are real buttons.
 */
import type { Item } from '../../../client/types.js';
import type { Ctx } from './context.js';
import { h, isoMinute } from './dom.js';
import { describe } from './extras.js';

/** Options of {@link itemCard}. */
export interface CardOptions {
  /** A small label shown before the title (discover's source). */
  badge?: string;
  /** Offer "Not interested" (the ranked feeds; not the following timeline, which keeps everything). */
  dismiss?: boolean;
  /** Called after the item was marked not interested and its card removed. */
  onDismissed?(id: string): void;
}

/** The host of a URL, or null. */
function host(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
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

/** The card of one item (an `<li>` with `data-id` and `data-author`). */
export function itemCard(ctx: Ctx, item: Item, opts: CardOptions = {}): HTMLLIElement {
  const li = h('li', { class: 'card', 'data-id': item.id, 'data-author': item.author_id });
  const site = host(item.url);
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
  actions.append(followButton(ctx, item.author_id));
  li.append(
    h(
      'h3',
      {},
      opts.badge ? h('span', { class: `badge badge-${opts.badge}` }, opts.badge) : null,
      h('a', { href: `#/item/${encodeURIComponent(item.id)}` }, item.title),
    ),
    h(
      'p',
      { class: 'meta' },
      h('span', {}, item.author_id),
      ' · ',
      h('time', { datetime: new Date(item.published_at * 1000).toISOString() }, isoMinute(item.published_at)),
      site ? [' · ', h('a', { href: item.url ?? '', rel: 'noopener noreferrer', target: '_blank' }, site)] : null,
      item.tags.length ? [' · ', item.tags.slice(0, 5).join(', ')] : null,
    ),
    actions,
  );
  return li;
}
