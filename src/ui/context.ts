/**
 * What every page gets: the client acting for the chosen reader, the session, whom the reader follows
 * (for the follow/unfollow buttons), the live unread notifications count, and a way to announce what an
 * action did.
 */
import type { FreshetClient } from '../client/index.js';
import type { Session } from './session.js';
import type { Unread } from './unread.js';

/** Users per page of `GET /v1/users/:id/following` (the route's maximum). */
const FOLLOW_PAGE = 1000;
/** Pages of the following list read at most per page view: the buttons know up to 10 000 followed authors. */
export const FOLLOW_PAGES_MAX = 10;

/**
 * Whom the reader follows, loaded once per page view (paging through the list, up to
 * {@link FOLLOW_PAGES_MAX} pages of {@link FOLLOW_PAGE}) and kept in step with the buttons. Pages
 * subscribe to changes with {@link onChange} (the following page drops an unfollowed author's cards).
 */
export class FollowSet {
  private ids: Set<string> | null = null;
  private loading: Promise<Set<string>> | undefined;
  private readonly listeners = new Set<(author: string, following: boolean) => void>();
  /** True once loaded when the reader follows more authors than were read: a button may then say "Follow" for one already followed. */
  truncated = false;
  constructor(
    private readonly client: FreshetClient,
    private readonly reader: string,
    /** Told once, with how many authors were read, when the list is longer than the pages read. */
    private readonly onTruncated: (read: number) => void = () => {},
  ) {}

  /** The followed authors (the first call pages through the list). */
  load(): Promise<Set<string>> {
    if (this.ids) return Promise.resolve(this.ids);
    return (this.loading ??= this.readAll().then((ids) => (this.ids = ids)));
  }

  private async readAll(): Promise<Set<string>> {
    const ids = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < FOLLOW_PAGES_MAX; page++) {
      const p = await this.client.follows.following(this.reader, { limit: FOLLOW_PAGE, ...(cursor ? { cursor } : {}) });
      for (const u of p.users) ids.add(u.id);
      if (!p.next_cursor) return ids;
      cursor = p.next_cursor;
    }
    this.truncated = true;
    this.onTruncated(ids.size);
    return ids;
  }

  /** Calls `fn(author, following)` after each follow or unfollow made here; returns the unsubscribe. */
  onChange(fn: (author: string, following: boolean) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Follows or unfollows `author`; returns whether the reader now follows it. */
  async toggle(author: string): Promise<boolean> {
    const ids = await this.load();
    const on = !ids.has(author);
    if (on) await this.client.follows.follow(this.reader, author);
    else await this.client.follows.unfollow(this.reader, author);
    if (on) ids.add(author);
    else ids.delete(author);
    for (const fn of this.listeners) fn(author, on);
    return on;
  }
}

/** The context every page renders with. */
export interface Ctx {
  client: FreshetClient;
  session: Session;
  reader: string;
  follows: FollowSet;
  /** The reader's unread notifications count, kept live (the navigation's badge). */
  unread: Unread;
  /** Announces a sentence in the shared live region (and shows it briefly). */
  say(text: string): void;
}

/** A page: renders into `root`; returns what to stop when the person leaves it (timers, observers). */
export type Page = (root: HTMLElement, ctx: Ctx, arg: string) => (() => void) | void;
