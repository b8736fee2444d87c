/**
 * The reader's unread notifications count, kept live for the navigation badge and the notifications page:
 * read once from the marker (`GET /v1/users/:id/markers`), then updated by every `notifications` event of
 * the following stream (`GET /v1/feeds/following/stream`, which announces the count whenever the reader's
 * notifications or marker change, on any device), and by the answers that carry it (a notifications page, a
 * marker move). When the server offers no stream, or it keeps failing, the marker is read every
 * {@link POLL_MS} instead. One stream per signed-in tab (the following page holds its own for its banner:
 * two of the `FRESHET_STREAM_MAX_PER_READER` = 4 a reader may open).
 */
import type { FreshetClient, NotificationGroup } from '../client/index.js';

/** How often the marker is read when there is no stream, ms. */
const POLL_MS = 30_000;

/** A change of the count: `latest` is the newest group when the stream said so (a new notification). */
export type UnreadListener = (count: number, capped: boolean, latest?: NotificationGroup | null) => void;

/** The live count (see the module doc). */
export interface Unread {
  /** The last count known (null before the first answer) and whether it is a lower bound ("200+"). */
  readonly count: number | null;
  readonly capped: boolean;
  /** Calls `fn` on every change; returns the unsubscribe. */
  onChange(fn: UnreadListener): () => void;
  /** Sets the count from an answer that carries it. */
  set(count: number, capped: boolean): void;
  /** Stops the stream or the polls. */
  stop(): void;
}

/** Starts watching `reader`'s unread count through `client`. */
export function watchUnread(client: FreshetClient, reader: string): Unread {
  const listeners = new Set<UnreadListener>();
  const ctl = new AbortController();
  let timer: ReturnType<typeof setInterval> | undefined;
  const state = {
    count: null as number | null,
    capped: false,
    onChange(fn: UnreadListener) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    set(count: number, capped: boolean, latest?: NotificationGroup | null) {
      state.count = count;
      state.capped = capped;
      for (const fn of listeners) fn(count, capped, latest);
    },
    stop() {
      ctl.abort();
      clearInterval(timer);
    },
  };
  const readMarker = async () => {
    try {
      const m = await client.markers.get(reader, { signal: ctl.signal });
      if (!ctl.signal.aborted) state.set(m.notifications.unread_count, m.notifications.unread_capped);
    } catch {
      /* the next event or poll tries again */
    }
  };
  void (async () => {
    await readMarker();
    try {
      for await (const ev of client.following.stream({ signal: ctl.signal, maxReconnects: 5 })) {
        if (ctl.signal.aborted) return;
        if (ev.type === 'notifications') state.set(ev.unread_count, ev.unread_capped, ev.latest);
      }
    } catch {
      if (ctl.signal.aborted) return;
    }
    timer = setInterval(() => void readMarker(), POLL_MS); // no stream (404) or it kept failing
  })();
  return state;
}

/** "3", "200+", or "" for none. */
export function unreadText(count: number | null, capped: boolean): string {
  if (!count) return '';
  return `${count}${capped ? '+' : ''}`;
}
