/**
 * The For you page: refresh, infinite `load_more`, a "N new" badge from the peek route when the server
 * offers it. It keeps its items and scroll for the tab (../for-you-state.ts).
 */
import type { FeedItem } from '../../client/types.js';
import type { Ctx, Page } from '../context.js';
import { h, replace, statusLine } from '../dom.js';
import { describe, peek } from '../extras.js';
import { loadForYou, saveForYou } from '../for-you-state.js';
import { scroller } from '../scroller.js';
import { feedList, PAGE, POLL_MS } from './feeds.js';

/**
 * The "N new" badge's updater: each call asks the peek route again, and only the answer to the latest
 * call is shown (answers may cross); hidden at 0, on an error, and when the server has no peek route.
 */
function peekBadge(ctx: Ctx, badge: HTMLElement): () => Promise<void> {
  let asked = 0;
  return async () => {
    const mine = ++asked;
    try {
      const p = await peek(ctx.client);
      if (mine !== asked) return;
      badge.hidden = p === null || p.count === 0;
      const n = p ? `${p.count}${p.capped ? '+' : ''}` : '0';
      badge.textContent = `${n} new`;
      badge.setAttribute('aria-label', `${n} new ${p?.count === 1 && !p.capped ? 'item' : 'items'}: refresh`);
    } catch {
      if (mine === asked) badge.hidden = true;
    }
  };
}

/**
 * For you: refresh, infinite load_more, "N new" badge. The page keeps its items, `has_more` and scroll
 * position for the tab (for-you-state.ts): coming back shows them again, and `refresh` is called only on
 * the first visit and by the Refresh button (or the badge).
 */
export const forYouPage: Page = (root, ctx) => {
  const status = statusLine();
  const list = feedList(ctx, 'For-you items', { feed: 'for-you', ranked: true });
  const badge = h('button', { type: 'button', class: 'badge-new', hidden: true, 'data-testid': 'peek' });
  const refreshBtn = h('button', { type: 'button', 'data-action': 'refresh' }, 'Refresh');
  const kept = loadForYou(ctx.reader);
  let items: FeedItem[] = kept ? [...kept.items] : [];
  let hasMore = kept?.hasMore ?? false;
  /** Whether a page was shown (a visit left before its first page arrived keeps nothing). */
  let loaded = kept !== null;
  /** Keeps what the page shows: the cards still on it (a dismissed or muted one is gone), and the scroll. */
  const keep = () => {
    if (!loaded) return;
    const on = new Set([...list.ul.children].map((li) => (li as HTMLElement).dataset.id));
    items = items.filter((it) => on.has(it.id));
    saveForYou({ reader: ctx.reader, items, hasMore, scrollY: window.scrollY });
  };
  const more = scroller('Load more', list.ul, async () => {
    const p = await ctx.client.forYou.loadMore({ limit: PAGE });
    list.add(p.items);
    items.push(...p.items);
    hasMore = p.has_more;
    keep();
    if (p.refreshed) status.textContent = 'The page cache had expired: this page is a fresh refresh.';
    void updateBadge(); // what was just served is seen now: the count drops
    return p.has_more;
  });
  const refresh = async () => {
    refreshBtn.disabled = true;
    status.textContent = 'Refreshing…';
    try {
      let n = 0;
      await more.restart(async () => {
        const p = await ctx.client.forYou.refresh({ limit: PAGE });
        list.clear();
        list.add(p.items);
        items = [...p.items];
        hasMore = p.has_more;
        loaded = true;
        keep();
        n = p.items.length;
        return p.has_more;
      });
      status.textContent = n ? '' : 'Nothing to show: publish items or pick another reader.';
      void updateBadge();
    } catch (err) {
      status.textContent = `Refresh failed: ${describe(err)}`;
    } finally {
      refreshBtn.disabled = false;
    }
  };
  const updateBadge = peekBadge(ctx, badge);
  badge.addEventListener('click', () => void refresh());
  refreshBtn.addEventListener('click', () => void refresh());
  replace(
    root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'For you'), refreshBtn, badge, list.count),
    status,
    list.ul,
    more.el,
  );
  if (kept) {
    list.add(kept.items);
    list.ul.setAttribute('aria-busy', 'false');
    more.setMore(kept.hasMore);
    window.scrollTo(0, kept.scrollY);
    void updateBadge();
  } else void refresh();
  const timer = setInterval(() => void updateBadge(), POLL_MS);
  window.addEventListener('pagehide', keep); // a reload keeps the scroll too
  return () => {
    keep();
    window.removeEventListener('pagehide', keep);
    clearInterval(timer);
    more.stop();
  };
};
