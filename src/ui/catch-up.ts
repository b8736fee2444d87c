/**
 * The following page's read marker (docs/following.md "Catch-up"): "N unread" read from
 * `GET /v1/users/:id/markers`, kept in step with the stream's `marker` events (another device moved it) and
 * with the answers of this page's own moves; and, in catch-up mode, the marker moved forward as the reader
 * scrolls — to the newest timeline id whose card came half into view — with at most one
 * `PUT /v1/users/:id/markers/following` per {@link FLUSH_MS}, and the last one sent when the page is left.
 * The server moves a marker forward only, so two tabs (or devices) catching up at once never move it back.
 */
import type { Ctx } from './context.js';
import { describe } from './extras.js';

/** The longest a seen card waits before the marker moves past it, ms (one request per interval at most). */
const FLUSH_MS = 500;

/** What a marker answer or stream event says of the following timeline's marker. */
export interface MarkerState {
  last_read_id: string;
  unread_count: number;
  unread_capped: boolean;
}

/**
 * Whether timeline id `a` is newer than `b` (undefined: nothing read yet, so any id is newer). Timeline ids
 * are non-negative decimal integers without leading zeros: a longer one is larger, then by digits.
 */
export function newerTid(a: string, b: string | undefined): boolean {
  if (b === undefined) return true;
  return a.length !== b.length ? a.length > b.length : a > b;
}

/** The marker's view and its mover (see the module doc). */
export interface ReadMarker {
  /** The newest timeline id the server has as read (undefined before the first answer or with none). */
  readonly lastRead: string | undefined;
  /** Reads the marker again and shows its count; failures show in the label, never throw. */
  refresh(): Promise<void>;
  /** Shows a marker answer or a stream `marker` event. */
  show(m: MarkerState): void;
  /** Catch-up mode: moves the marker past `card` (timeline id `tid`) once it comes half into view. */
  watch(card: HTMLElement, tid: string): void;
  /** Stops watching cards; a move still waiting is sent. */
  unwatch(): Promise<void>;
}

/** Builds the marker of the signed-in reader; `label` shows "N unread" / "all read". */
export function readMarker(ctx: Ctx, label: HTMLElement): ReadMarker {
  let lastRead: string | undefined;
  let pending: string | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tids = new WeakMap<Element, string>();
  const show = (m: MarkerState) => {
    lastRead = m.last_read_id;
    label.textContent = m.unread_count ? `${m.unread_count}${m.unread_capped ? '+' : ''} unread` : 'all read';
  };
  const flush = async () => {
    clearTimeout(timer);
    timer = undefined;
    const tid = pending;
    pending = undefined;
    if (tid === undefined || !newerTid(tid, lastRead)) return;
    try {
      show(await ctx.client.markers.setFollowing(ctx.reader, tid));
    } catch (err) {
      label.textContent = `marker not saved: ${describe(err)}`;
    }
  };
  const io = new IntersectionObserver(
    (entries) => {
      for (const e of entries) {
        const tid = tids.get(e.target);
        if (!e.isIntersecting || tid === undefined) continue;
        io.unobserve(e.target);
        if (newerTid(tid, pending ?? lastRead)) pending = tid;
      }
      if (pending !== undefined) timer ??= setTimeout(() => void flush(), FLUSH_MS);
    },
    { threshold: 0.5 },
  );
  return {
    get lastRead() {
      return lastRead;
    },
    async refresh() {
      try {
        show((await ctx.client.markers.get(ctx.reader)).following);
      } catch (err) {
        label.textContent = `unread unknown: ${describe(err)}`;
      }
    },
    show,
    watch(card, tid) {
      tids.set(card, tid);
      io.observe(card);
    },
    async unwatch() {
      io.disconnect();
      await flush();
    },
  };
}
