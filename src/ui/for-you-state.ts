/**
 * What the For you page keeps while the reader looks elsewhere: the items shown (cards removed since —
 * not interested, muted — left out), whether the server has more (`has_more`: the next `load_more`
 * continues the server's page cache) and the scroll position. Kept in memory for the tab, and in the
 * tab's `sessionStorage` so a reload finds it too; keyed by reader (another reader starts afresh) and
 * forgotten on sign-out. Without it each visit to the page would call `refresh` and burn a page of items.
 */
import type { FeedItem } from '../client/types.js';

/** The kept state of the For you page. */
export interface ForYouState {
  /** The reader the items were served to. */
  reader: string;
  /** The items on the page, in order. */
  items: FeedItem[];
  /** Whether `load_more` has more (the last page's `has_more`). */
  hasMore: boolean;
  /** The window's vertical scroll, CSS px. */
  scrollY: number;
}

const KEY = 'freshet.for-you';
/** The most items written to `sessionStorage` (the newest kept): 500 cards ≈ 250 KB, far under its ~5 MB. */
export const KEPT_ITEMS_MAX = 500;

let memory: ForYouState | null | undefined;

/** The kept state for `reader`, or null (none kept, or kept for another reader). */
export function loadForYou(reader: string): ForYouState | null {
  if (memory === undefined) {
    try {
      const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as ForYouState | null;
      memory = s && typeof s.reader === 'string' && Array.isArray(s.items) ? s : null;
    } catch {
      memory = null;
    }
  }
  return memory?.reader === reader ? memory : null;
}

/** Keeps `s` for the tab (memory, and `sessionStorage` when it has room: a full store only loses the reload). */
export function saveForYou(s: ForYouState): void {
  memory = s;
  try {
    sessionStorage.setItem(KEY, JSON.stringify({ ...s, items: s.items.slice(-KEPT_ITEMS_MAX) }));
  } catch {
    /* quota: the state stays in memory */
  }
}

/** Forgets the kept state (sign-out). */
export function forgetForYou(): void {
  memory = null;
  sessionStorage.removeItem(KEY);
}
