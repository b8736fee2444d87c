/**
 * The feed list shared by the feed pages (cards, a count, repeats flagged), and two of the feeds, scrolled
 * as a reader would (for-you is in for-you.ts): discover (each item's source, cursor paging) and
 * following (`max_id` paging, a "N new" banner from `since_id` polls or the live stream).
 */
import type { FeedItem } from '../../client/types.js';
import type { Ctx, Page } from '../context.js';
import { itemCard } from '../cards.js';
import { h, plural, replace, statusLine } from '../dom.js';
import type { ExplainFeed } from '../explain-view.js';
import { type MarkerState, type ReadMarker, readMarker } from '../catch-up.js';
import { describe } from '../extras.js';
import { scroller } from '../scroller.js';

/** Items per feed page (the feeds' default `limit`). */
export const PAGE = 20;
/** How often the for-you badge and the following banner look for news, ms. */
export const POLL_MS = 15_000;
/** The most new timeline entries counted by one `since_id` page (the route's maximum); more shows as "100+". */
const NEWS_MAX = 100;

/** Which card actions a feed offers: the ranked feeds all of them, the following timeline mute only. */
export interface FeedActions {
  /** The feed the cards' "Why?" explains them in. */
  feed: ExplainFeed;
  /** "Not interested" and "Show less like this" (ranked feeds: the timeline keeps every item). */
  ranked: boolean;
  /** Called after a mute removed the author's cards. */
  onMuted?(author: string): void;
}

/** A list that counts what it shows and flags any repeated id (a repeat would be a bug). */
export function feedList(ctx: Ctx, label: string, { feed, ranked, onMuted }: FeedActions) {
  const ul = h('ul', { class: 'feed', 'aria-label': label, 'aria-busy': 'true' });
  const shown = new Set<string>();
  const count = h('span', { class: 'count', 'data-testid': 'count' });
  let repeats = 0;
  /** "N items" counts the cards on the page (a dismissed or unfollowed one leaves the count). */
  const update = () => {
    count.textContent = `${plural(ul.childElementCount, 'item')}${repeats ? `, ${repeats} repeated` : ', none repeated'}`;
  };
  /**
   * Removes the cards of `author` (an unfollow on the following page, a mute anywhere); keyboard focus
   * inside a removed card moves to the next card left. @returns how many were removed.
   */
  const removeAuthor = (author: string): number => {
    const cards = [...ul.children] as HTMLElement[];
    const stays = (li: HTMLElement) => li.dataset.author !== author;
    const at = cards.findIndex((li) => !stays(li) && li.contains(document.activeElement));
    const next = at < 0 ? undefined : (cards.slice(at).find(stays) ?? cards.slice(0, at).reverse().find(stays));
    const gone = cards.filter((li) => !stays(li));
    for (const li of gone) li.remove();
    if (at >= 0) (next?.querySelector('a') ?? ul.closest('main'))?.focus();
    update();
    return gone.length;
  };
  return {
    ul,
    count,
    removeAuthor,
    clear() {
      ul.replaceChildren();
      shown.clear();
      repeats = 0;
      update();
    },
    add(items: readonly FeedItem[], badges?: readonly string[]) {
      items.forEach((it, i) => {
        const card = itemCard(ctx, it, {
          dismiss: ranked,
          showLess: ranked,
          mute: true,
          why: feed,
          onDismissed: update,
          onMuted: (author) => {
            removeAuthor(author);
            onMuted?.(author);
          },
          ...(badges?.[i] ? { badge: badges[i] } : {}),
        });
        if (shown.has(it.id)) {
          repeats++;
          card.classList.add('repeat');
        }
        shown.add(it.id);
        ul.append(card);
      });
      update();
    },
  };
}

/** Discover: each item's source, cursor paging. */
export const discoverPage: Page = (root, ctx) => {
  const status = statusLine();
  const list = feedList(ctx, 'Discover items', { feed: 'discover', ranked: true });
  let cursor: string | null = null;
  const load = async (): Promise<boolean> => {
    const p = await ctx.client.discover.page(cursor, { limit: PAGE });
    if (p.restarted) status.textContent = 'The cursor was stale: discover started over.';
    list.add(p.items, p.sources);
    cursor = p.next_cursor;
    return cursor !== null;
  };
  const more = scroller('Load more', list.ul, load);
  const start = async () => {
    try {
      await more.restart(() => {
        cursor = null;
        list.clear();
        return load();
      });
    } catch (err) {
      status.textContent = `Discover failed: ${describe(err)}`;
    }
  };
  const restart = h('button', { type: 'button', 'data-action': 'refresh' }, 'Start over');
  restart.addEventListener('click', () => void start());
  const legend = h(
    'p',
    { class: 'legend' },
    'Sources: ',
    ['followed', 'trending', 'discovery', 'newest'].map((s) => [h('span', { class: `badge badge-${s}` }, s), ' ']),
    "— followed: by an author the reader follows; trending: hot now; discovery: close to the reader's interests; newest: fresh items.",
  );
  replace(
    root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Discover'), restart, list.count),
    legend,
    status,
    list.ul,
    more.el,
  );
  void start();
  return () => more.stop();
};

/**
 * Counts the timeline entries newer than the top shown and reports them to `show`: from the SSE stream
 * (through the client) while the server offers it, else by `since_id` polls every {@link POLL_MS}.
 * `how` says which. `watch(newest)` (re)starts from a new top; `stop()` ends both; `forget(author)` drops
 * an unfollowed author's entries from the count at once (the server leaves them out of later pages).
 * The stream's `marker` events go to `onMarker`.
 */
function newEntries(
  ctx: Ctx,
  how: HTMLElement,
  show: (n: number, capped?: boolean) => void,
  onMarker: (m: MarkerState) => void,
) {
  let live: AbortController | null = null;
  let timer: ReturnType<typeof setInterval> | undefined;
  let useStream = true;
  /** The streamed entries newer than the top shown (timeline id → author), and whether there are more. */
  const counted: Counted = { fresh: new Map(), capped: false, show };
  const forget = (author: string) => {
    let dropped = false;
    for (const [tid, a] of counted.fresh) if (a === author) dropped = counted.fresh.delete(tid) || dropped;
    if (dropped) show(counted.fresh.size, counted.capped);
  };
  const stop = () => {
    live?.abort();
    clearInterval(timer);
  };
  const poll = async (newest: string | undefined) => {
    try {
      const p = await ctx.client.following.page({ limit: NEWS_MAX, ...(newest ? { sinceId: newest } : {}) });
      show(p.items.length, p.items.length === NEWS_MAX);
    } catch {
      /* the next poll tries again */
    }
  };
  const watch = async (newest: string | undefined) => {
    stop();
    if (useStream) {
      const ctl = (live = new AbortController());
      counted.fresh.clear();
      counted.capped = false;
      how.textContent = 'live';
      try {
        await countStreamed(ctx, newest, ctl.signal, counted, onMarker);
        return;
      } catch {
        if (ctl.signal.aborted) return;
        useStream = false; // no stream route (404) or it keeps failing: poll instead
      }
    }
    how.textContent = `checked every ${POLL_MS / 1000} s`;
    timer = setInterval(() => void poll(newest), POLL_MS);
  };
  return { watch, stop, forget };
}

/** The entries counted from the stream, and where the count goes. */
interface Counted {
  fresh: Map<string, string>;
  capped: boolean;
  show: (n: number, capped?: boolean) => void;
}

/**
 * Counts the stream's entries after `newest` into `c` until it ends (a `reset`: the entries of the newest
 * page instead, more came than the server replays); `marker` events go to `onMarker`.
 * @throws what the stream throws (an abort ends it quietly).
 */
async function countStreamed(
  ctx: Ctx,
  newest: string | undefined,
  signal: AbortSignal,
  c: Counted,
  onMarker: (m: MarkerState) => void,
): Promise<void> {
  const since = newest ? { sinceId: newest } : {};
  for await (const ev of ctx.client.following.stream({ ...since, signal, maxReconnects: 3 })) {
    if (signal.aborted) return; // an entry already buffered when the page reloaded
    if (ev.type === 'marker') {
      onMarker(ev); // another device (or tab) moved the marker
      continue;
    }
    if (ev.type === 'notifications') continue; // the navigation's badge has its own stream
    if (ev.type === 'item') c.fresh.set(ev.timeline_id, ev.item.author_id);
    else {
      // a reset: more came than the server replays, and its id is not one entry — count them instead
      const p = await ctx.client.following.page({ limit: NEWS_MAX, ...since, signal });
      for (const it of p.items) c.fresh.set(it.timeline_id, it.author_id);
      c.capped = p.items.length === NEWS_MAX;
    }
    c.show(c.fresh.size, c.capped);
  }
}

/**
 * The timeline's pages into `list`: newest first by `max_id`, or a catch-up oldest first from the marker
 * (`from=marker`, then `next_min_id`), whose cards move the marker as they scroll into view; once caught
 * up, the banner watches for entries after the last one. Each load says whether there is more.
 */
function timelinePages(
  ctx: Ctx,
  list: ReturnType<typeof feedList>,
  status: HTMLElement,
  marker: ReadMarker,
  news: ReturnType<typeof newEntries>,
) {
  let maxId: string | undefined;
  let minId: string | undefined;
  let newest: string | undefined;
  const loadNewest = async (): Promise<boolean> => {
    const p = await ctx.client.following.page({ limit: PAGE, ...(maxId ? { maxId } : {}) });
    newest ??= p.items[0]?.timeline_id;
    list.add(p.items);
    maxId = p.next_max_id ?? undefined;
    if (list.ul.childElementCount === 0)
      status.textContent = 'The timeline is empty: follow authors from the for-you or discover cards.';
    return p.next_max_id !== null && p.items.length > 0;
  };
  /** One catch-up page, oldest first; once caught up, the banner watches for entries after the last one. */
  const loadCatchUp = async (): Promise<boolean> => {
    const p = await ctx.client.following.catchUp({ limit: PAGE, ...(minId ? { minId } : {}) });
    list.add(p.items);
    for (const it of p.items) {
      const card = list.ul.querySelector<HTMLElement>(`li.card[data-id="${CSS.escape(it.id)}"]`);
      if (card) marker.watch(card, it.timeline_id);
    }
    newest = p.items.at(-1)?.timeline_id ?? newest ?? minId ?? marker.lastRead;
    minId = p.next_min_id ?? newest;
    if (p.next_min_id) return true;
    status.textContent = list.ul.childElementCount ? 'You are caught up.' : 'Nothing unread: you are caught up.';
    void news.watch(newest);
    return false;
  };
  return {
    newest: loadNewest,
    catchUp: loadCatchUp,
    /** The newest entry shown (where the banner's count starts). */
    top: () => newest,
    reset: () => {
      maxId = minId = newest = undefined;
    },
  };
}

/** Shows the "Catch up" toggle pressed (`on`: catching up, it offers "Newest first") or not; @returns `on`. */
function pressCatchUp(btn: HTMLElement, on: boolean): boolean {
  btn.setAttribute('aria-pressed', String(on));
  btn.textContent = on ? 'Newest first' : 'Catch up';
  return on;
}

/** The "N new — show them" banner and the count behind it (stream, else polls); marker events move `marker`. */
function newsBanner(ctx: Ctx, how: HTMLElement, marker: ReadMarker) {
  const banner = h('button', { type: 'button', class: 'banner', hidden: true, 'data-testid': 'new-banner' });
  const news = newEntries(
    ctx,
    how,
    (n, capped = false) => {
      banner.hidden = n === 0;
      banner.textContent = `${n}${capped ? '+' : ''} new — show them`;
    },
    (m) => marker.show(m),
  );
  return { banner, news };
}

/**
 * Following: the chronological timeline, newest first by `max_id`, with a "N new" banner (live stream, else
 * polls) and "N unread" from the read marker; "Catch up" pages oldest first from the marker instead
 * (`from=marker`, then `next_min_id`) and moves the marker as the cards scroll into view.
 */
export const followingPage: Page = (root, ctx) => {
  const status = statusLine();
  // a mute takes the author's cards out, and their waiting entries off the banner (the server leaves them out)
  const list = feedList(ctx, 'Following timeline', {
    feed: 'following',
    ranked: false,
    onMuted: (author) => news.forget(author),
  });
  const how = h('span', { class: 'meta', 'data-testid': 'new-source' });
  const unread = h('span', { class: 'meta', 'data-testid': 'timeline-unread', 'aria-live': 'polite' });
  const marker = readMarker(ctx, unread);
  const catchUpBtn = h('button', { type: 'button', 'data-action': 'catch-up', 'aria-pressed': 'false' }, 'Catch up');
  const { banner, news } = newsBanner(ctx, how, marker);
  let catchingUp = false;
  const pages = timelinePages(ctx, list, status, marker, news);
  const more = scroller('Load more', list.ul, () => (catchingUp ? pages.catchUp() : pages.newest()));
  const start = async () => {
    news.stop(); // the stream (or the polls) restart from the new top once it is loaded
    await marker.unwatch();
    banner.hidden = true;
    status.textContent = '';
    void marker.refresh();
    try {
      await more.restart(() => {
        pages.reset();
        list.clear();
        return catchingUp ? pages.catchUp() : pages.newest();
      });
    } catch (err) {
      status.textContent = `The timeline failed: ${describe(err)}`;
    }
    if (!catchingUp) void news.watch(pages.top());
  };
  banner.addEventListener('click', () => void start());
  catchUpBtn.addEventListener('click', () => {
    catchingUp = pressCatchUp(catchUpBtn, !catchingUp);
    void start();
  });
  // the timeline keeps only followed authors: an unfollow here takes the author's cards out at once
  const off = ctx.follows.onChange((author, following) => {
    if (following) return;
    list.removeAuthor(author);
    news.forget(author);
  });
  replace(
    root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Following'), catchUpBtn, unread, list.count, how),
    banner,
    status,
    list.ul,
    more.el,
  );
  void start();
  return () => {
    off();
    news.stop();
    more.stop();
    void marker.unwatch();
  };
};
