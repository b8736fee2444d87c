/**
 * The reader's grouped notifications (docs/notifications.md): one line per group — "alice and 3 others
 * liked your post “…”" — newest group first, unread ones marked, paged with `max_id` (scroll or Older).
 * **Mark all read** moves the marker to the newest group's `latest_id` (forward only: a notification that
 * arrived after the page was read stays unread). While the page is open, a `notifications` event of the
 * stream (src/ui/unread.ts) with a group newer than the top one raises a "new — show them" banner.
 */
import type { NotificationGroup } from '../../client/index.js';
import type { Ctx, Page } from '../context.js';
import { h, isoMinute, plural, replace, statusLine } from '../dom.js';
import { describe } from '../extras.js';
import { scroller } from '../scroller.js';
import { unreadText } from '../unread.js';

const PAGE = 20;

/** "alice", "alice and bob", "alice and 3 others" (`actors` newest first, `count` exact). */
export function whoDidIt(actors: readonly string[], count: number): string {
  if (count <= 1 || actors.length === 0) return actors[0] ?? 'someone';
  if (count === 2 && actors.length >= 2) return `${actors[0]} and ${actors[1]}`;
  return `${actors[0]} and ${plural(count - 1, 'other')}`;
}

/** What a group's type says after the actors ("liked your post"), its glyph, and whether its item follows. */
function verb(type: string): { text: string; glyph: string; item: boolean } {
  switch (type) {
    case 'like':
      return { text: 'liked your post', glyph: '♥', item: true };
    case 'reply':
      return { text: 'replied to your post', glyph: '↩', item: true };
    case 'share':
      return { text: 'shared your post', glyph: '⇄', item: true };
    case 'follow':
      return { text: 'followed you', glyph: '+', item: false };
    case 'mention':
      return { text: 'mentioned you', glyph: '@', item: true };
    default: // app.<name>: the application's own type
      return { text: `— ${type.replace(/^app\./, '').replace(/_/g, ' ')}`, glyph: '•', item: true };
  }
}

/** One group as a list row (`data-group`, `data-latest`; `unread` class until the marker passes it). */
function groupRow(g: NotificationGroup, titles: ReadonlyMap<string, string>): HTMLLIElement {
  const v = verb(g.type);
  const item =
    v.item && g.item_id
      ? [' ', h('a', { href: `#/item/${encodeURIComponent(g.item_id)}` }, `“${titles.get(g.item_id) ?? g.item_id}”`)]
      : null;
  return h(
    'li',
    { class: `note${g.read ? '' : ' unread'}`, 'data-group': g.group_key, 'data-latest': g.latest_id },
    h('span', { class: 'dot', 'aria-hidden': 'true' }),
    h('span', { class: `glyph glyph-${g.type.startsWith('app.') ? 'app' : g.type}`, 'aria-hidden': 'true' }, v.glyph),
    h(
      'p',
      {},
      h('span', { class: 'sr-only' }, g.read ? '' : 'Unread: '),
      h('strong', {}, whoDidIt(g.actors, g.actor_count)),
      ` ${v.text}`,
      item,
    ),
    h('time', { datetime: new Date(g.latest_at * 1000).toISOString() }, isoMinute(g.latest_at)),
  );
}

/** Titles of the groups' items (one GET each, in parallel); an item that cannot be read keeps its id. */
async function titlesOf(ctx: Ctx, groups: readonly NotificationGroup[], known: Map<string, string>): Promise<void> {
  const ids = [...new Set(groups.map((g) => g.item_id).filter((id): id is string => !!id && !known.has(id)))];
  await Promise.all(
    ids.map((id) =>
      ctx.client.items.get(id).then(
        (it) => known.set(id, it.title),
        () => undefined,
      ),
    ),
  );
}

/**
 * Moves the marker to `newest` (the first page's newest group): the rows it now covers lose their unread
 * mark, the count follows, and what stays unread (newer than the page) is said.
 */
async function markAllRead(ctx: Ctx, ul: HTMLElement, markAll: HTMLButtonElement, newest: string): Promise<void> {
  markAll.disabled = true;
  try {
    const m = await ctx.client.markers.setNotifications(ctx.reader, newest);
    for (const li of ul.querySelectorAll<HTMLElement>('li.note'))
      if (Number(li.dataset.latest) <= Number(m.last_read_id)) {
        li.classList.remove('unread');
        li.querySelector('.sr-only')?.replaceChildren();
      }
    ctx.unread.set(m.unread_count, m.unread_capped);
    ctx.say(
      m.unread_count
        ? `Marked read up to the newest shown; ${plural(m.unread_count, 'newer one stays', 'newer ones stay')} unread.`
        : 'All read.',
    );
  } catch (err) {
    markAll.disabled = false;
    ctx.say(`Could not move the marker: ${describe(err)}`);
  }
}

/**
 * The groups' pages into `ul`, newest first by `max_id`, with their items' titles; each load sets the
 * unread count and says whether there is more. `newest()`: the first page's newest `latest_id`.
 */
function notificationPages(ctx: Ctx, ul: HTMLElement, markAll: HTMLButtonElement, status: HTMLElement) {
  const titles = new Map<string, string>();
  let maxId: string | undefined;
  /** The newest group's `latest_id` on the first page (what "mark all read" moves the marker to). */
  let newest: string | undefined;
  const load = async (): Promise<boolean> => {
    const p = await ctx.client.notifications.page({ limit: PAGE, ...(maxId ? { maxId } : {}) });
    await titlesOf(ctx, p.groups, titles);
    newest ??= p.groups[0]?.latest_id;
    for (const g of p.groups) ul.append(groupRow(g, titles));
    maxId = p.next_max_id ?? undefined;
    ctx.unread.set(p.unread_count, p.unread_capped);
    markAll.disabled = newest === undefined || p.unread_count === 0;
    if (ul.childElementCount === 0)
      status.textContent = 'No notifications yet: they come when others follow this reader or engage with its items.';
    return p.next_max_id !== null && p.groups.length > 0;
  };
  return {
    load,
    newest: () => newest,
    reset: () => {
      maxId = undefined;
      newest = undefined;
    },
  };
}

export const notificationsPage: Page = (root, ctx) => {
  const status = statusLine();
  const ul = h('ul', { class: 'notes', 'aria-label': 'Notifications', 'aria-busy': 'true' });
  const count = h('span', { class: 'count', 'data-testid': 'unread-count' });
  const markAll = h('button', { type: 'button', 'data-action': 'mark-read', disabled: true }, 'Mark all read');
  const banner = h('button', { type: 'button', class: 'banner', hidden: true, 'data-testid': 'new-notifications' });
  const showCount = (n: number, capped: boolean) => {
    count.textContent = n ? `${unreadText(n, capped)} unread` : 'all read';
  };
  const pages = notificationPages(ctx, ul, markAll, status);
  const more = scroller('Older', ul, pages.load);
  const start = async () => {
    banner.hidden = true;
    status.textContent = '';
    try {
      await more.restart(() => {
        pages.reset();
        ul.replaceChildren();
        return pages.load();
      });
    } catch (err) {
      status.textContent = `Notifications failed: ${describe(err)}`;
    }
  };
  markAll.addEventListener('click', async () => {
    const newest = pages.newest();
    if (newest) await markAllRead(ctx, ul, markAll, newest);
  });
  banner.addEventListener('click', () => void start());
  const off = ctx.unread.onChange((n, capped, latest) => {
    const newest = pages.newest();
    showCount(n, capped);
    markAll.disabled = newest === undefined || n === 0;
    if (latest && latest.latest_id !== newest && (!newest || Number(latest.latest_id) > Number(newest))) {
      banner.hidden = false;
      banner.textContent = `New: ${whoDidIt(latest.actors, latest.actor_count)} ${verb(latest.type).text} — show them`;
    }
  });
  if (ctx.unread.count !== null) showCount(ctx.unread.count, ctx.unread.capped);
  replace(
    root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Notifications'), markAll, count),
    banner,
    status,
    ul,
    more.el,
  );
  void start();
  return () => {
    off();
    more.stop();
  };
};
