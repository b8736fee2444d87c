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
 * What the tab keeps of the page (for-you-state.ts): its items — the cards still in `ul` (a dismissed or
 * muted one is gone) —, `has_more` and the scroll. A visit left before its first page arrived keeps nothing.
 */
function pageKeeper(ctx: Ctx, ul: HTMLElement, kept: { items: FeedItem[]; hasMore: boolean } | null) {
  let items: FeedItem[] = kept ? [...kept.items] : [];
  let hasMore = kept?.hasMore ?? false;
  /** Whether a page was shown. */
  let loaded = kept !== null;
  const keep = () => {
    if (!loaded) return;
    const on = new Set([...ul.children].map((li) => (li as HTMLElement).dataset.id));
    items = items.filter((it) => on.has(it.id));
    saveForYou({ reader: ctx.reader, items, hasMore, scrollY: window.scrollY });
  };
  return {
    keep,
    /** A first page (a refresh) replaces what is kept. */
    replace: (page: readonly FeedItem[], more: boolean) => {
      items = [...page];
      hasMore = more;
      loaded = true;
      keep();
    },
    /** A next page adds to it. */
    append: (page: readonly FeedItem[], more: boolean) => {
      items.push(...page);
      hasMore = more;
      keep();
    },
  };
}

/** Shows the page the tab kept: its cards, whether there is more, and where it was scrolled to. */
function showKept(
  list: ReturnType<typeof feedList>,
  more: ReturnType<typeof scroller>,
  kept: { items: FeedItem[]; hasMore: boolean; scrollY: number },
): void {
  list.add(kept.items);
  list.ul.setAttribute('aria-busy', 'false');
  more.setMore(kept.hasMore);
  window.scrollTo(0, kept.scrollY);
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
  const page = pageKeeper(ctx, list.ul, kept);
  const keep = page.keep;
  const more = scroller('Load more', list.ul, async () => {
    const p = await ctx.client.forYou.loadMore({ limit: PAGE });
    list.add(p.items);
    page.append(p.items, p.has_more);
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
        page.replace(p.items, p.has_more);
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
    showKept(list, more, kept);
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
