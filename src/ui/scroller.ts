/**
 * Infinite scrolling that stays keyboard-usable: a "Load more" button under the list (always there
 * while there is more), and an IntersectionObserver that presses it when the end of the list scrolls
 * into view. One load at a time: a refresh waits for a load in flight and holds the list while it
 * runs, so two pages are never fetched (or appended) at once. Nothing loads on its own before the
 * first page is in (`setMore(true)` after it).
 */
import { h } from './dom.js';

/** The controls of a scrolled list. */
export interface Scroller {
  /** The button + sentinel to place under the list. */
  el: HTMLElement;
  /** Sets whether there is more to load (hides the button at the end). */
  setMore(more: boolean): void;
  /** Runs `first` (a refresh: clears and fetches the first page) alone; its result says whether more remain. */
  restart(first: () => Promise<boolean>): Promise<void>;
  /** Stops observing. */
  stop(): void;
}

/**
 * Builds the scroller of `list` (marked `aria-busy` while a page loads); `load` fetches and appends
 * the next page and returns whether more remain.
 */
export function scroller(label: string, list: HTMLElement, load: () => Promise<boolean>): Scroller {
  let busy: Promise<unknown> | null = null;
  let more = false;
  const button = h('button', { type: 'button', class: 'more', 'data-action': 'load-more' }, label);
  const end = h('p', { class: 'end', hidden: true }, 'The end — nothing more to load.');
  const el = h('div', { class: 'scroller' }, button, end);
  const run = async () => {
    if (busy || !more) return;
    button.disabled = true;
    button.textContent = 'Loading…';
    list.setAttribute('aria-busy', 'true');
    try {
      more = await (busy = load());
    } finally {
      busy = null;
      list.setAttribute('aria-busy', 'false');
      button.disabled = false;
      button.textContent = label;
      button.hidden = !more;
      end.hidden = more;
    }
  };
  button.addEventListener('click', () => void run());
  const io = new IntersectionObserver(
    (entries) => {
      if (entries.some((e) => e.isIntersecting)) void run();
    },
    { rootMargin: '200px' },
  );
  io.observe(el);
  return {
    el,
    setMore(m) {
      more = m;
      button.hidden = !m;
      end.hidden = m;
    },
    async restart(first) {
      while (busy) await busy.catch(() => undefined);
      list.setAttribute('aria-busy', 'true');
      const p = first();
      busy = p;
      try {
        this.setMore(await p);
      } catch (err) {
        this.setMore(false);
        throw err;
      } finally {
        busy = null;
        list.setAttribute('aria-busy', 'false');
      }
    },
    stop: () => io.disconnect(),
  };
}
