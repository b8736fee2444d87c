/**
 * The schedule of `freshet simulate live` — pure and seeded (no I/O, no clock: the runner, run.ts, asks
 * for the next event at a given share of the run and sends it). What it plans, for `rate` events/s over
 * `durationMs`:
 *
 * - **Posts.** The chosen HN posts are republished at wall time under new ids, `live_<run tag>_hn_<id>`,
 *   tagged {@link LIVE_TAG} (the originals are dated 2015–2016: a hot ranking only ranks items published
 *   within its range, 72 h by default and 30 days at most, and views of items past the retention answer
 *   `expired`). The older half (HN order) is published at the start; the others one by one over the first
 *   {@link PUBLISH_SPAN} of the run, so new posts keep arriving and climbing the ranking. When every
 *   published post has run out of events, the next one is published at once (the rate never idles).
 * - **Events.** `rate × duration` events: one for-you page in every {@link FEED_EVERY}; the rest are the
 *   posts' points as views and their comments as `reply` engagements, scaled down together when they do
 *   not fit (`scale` = budget / (points + comments), largest-remainder apportionment so they add up to the
 *   budget exactly), and never scaled up. Each event picks a published post with probability proportional
 *   to the events it has left (drawing without replacement), so each post's events spread over the time
 *   it is live and the most-pointed posts get the most views.
 * - **Visitors.** `live_v<n>`, n < `visitors` (at least {@link MIN_VISITORS}, more than the largest post's
 *   views, and at least 2 × rate so no visitor comes near the hot ranking's budget of 60 views a minute).
 *   Post p's k-th view comes from visitor (offset_p + k) mod visitors — distinct visitors, so PV and UV
 *   both count — except every {@link RELOAD_EVERY}th view, a reload by the post's previous visitor, which
 *   the hot ranking answers `repeat` within its 10-minute window (suspicious, not counted) as it should.
 *   The k-th reply comes from the visitor of the k-th view. The feed pages are read by the
 *   {@link REGULAR_READERS} regular readers `live_v0…` in turn, so each reads again within a minute and
 *   its seen filter drops what it was already shown.
 */
import type { ItemInput } from '../../kernel/items/content-store.js';
import { prng } from '../../kernel/prng.js';
import type { LivePost } from './posts.js';

/** The tag every republished post carries (beside its HN tags). */
export const LIVE_TAG = 'live';
/** Prefix of the visitor (and reader) ids. */
export const VISITOR_PREFIX = 'live_v';
/** One event in this many is a for-you page read. */
export const FEED_EVERY = 20;
/** Every this-many-th view of a post is a reload by its previous visitor. */
export const RELOAD_EVERY = 50;
/** Readers `live_v0…` that read the for-you feed in turn. */
export const REGULAR_READERS = 50;
/** The smallest visitor pool. */
export const MIN_VISITORS = 2000;
/** Share of the run over which the later half of the posts is published. */
export const PUBLISH_SPAN = 0.5;

/** A post of the plan and what it has left to send. */
export interface PlannedPost {
  /** The republished id: `live_<tag>_hn_<id>`. */
  readonly id: string;
  readonly source: LivePost;
  /** Share of the run (0..1) at which it is published. */
  readonly publishAt: number;
  /** Views and replies planned in all. */
  readonly plannedViews: number;
  readonly plannedReplies: number;
  /** Views and replies left to send. */
  views: number;
  replies: number;
  published: boolean;
}

/** What to send next. `publish` events cost no rate; the others are one event each. */
export type LiveEvent =
  | { kind: 'publish'; posts: PlannedPost[] }
  | { kind: 'view'; post: PlannedPost; visitor: string; reload: boolean }
  | { kind: 'reply'; post: PlannedPost; visitor: string }
  | { kind: 'feed'; reader: string };

/** Options of {@link LivePlan}. */
export interface PlanOptions {
  /** Events per second (> 0). */
  rate: number;
  /** Length of the run, ms (> 0). */
  durationMs: number;
  /** PRNG seed: the same seed, posts and options give the same events. */
  seed: number;
  /** The run's tag in the ids (see {@link liveRunTag}). */
  tag: string;
}

/** The run tag of a run started at `ms`: its UTC time as `YYYYMMDDHHMMSS`, so ids say when they were published. */
export function liveRunTag(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** The republished item of `post` (`publishedAt` is set when it is sent). */
export function liveItem(post: PlannedPost, publishedAtMs: number): ItemInput {
  const { item } = post.source;
  return { ...item, id: post.id, tags: [...item.tags, LIVE_TAG], publishedAt: publishedAtMs };
}

/**
 * Splits `total` over `weights` in proportion, in integers that add up to `total` (Hamilton's
 * largest-remainder method; ties go to the earlier weight). All-zero weights get nothing.
 */
export function apportion(weights: readonly number[], total: number): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum <= 0) return weights.map(() => 0);
  const ideal = weights.map((w) => (w * total) / sum);
  const out = ideal.map(Math.floor);
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = ideal.map((x, i) => ({ i, frac: x - Math.floor(x) })).sort((a, b) => b.frac - a.frac || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    out[i]!++;
    left--;
  }
  return out;
}

/** The live run's schedule (see the module doc). */
export class LivePlan {
  /** The posts in publication order (HN time, oldest first). */
  readonly posts: readonly PlannedPost[];
  /** Events planned in all: views + replies + feed pages. */
  readonly events: number;
  /** Share of the posts' points and comments that is sent (≤ 1). */
  readonly scale: number;
  /** Size of the visitor pool. */
  readonly visitors: number;
  /** The chosen posts' points and comments. */
  readonly points: number;
  readonly comments: number;
  /** Feed pages planned. */
  readonly feeds: number;
  private feedsLeft: number;
  private feedsSent = 0;
  private drawn = 0;
  private readonly random: () => number;
  private readonly offsets = new Map<PlannedPost, number>();
  private readonly distinct = new Map<PlannedPost, number>();
  private readonly lastVisitor = new Map<PlannedPost, number>();

  /** @throws RangeError when `rate` or `durationMs` is not positive or there is no post. */
  constructor(sources: readonly LivePost[], opts: PlanOptions) {
    if (!(opts.rate > 0) || !(opts.durationMs > 0)) throw new RangeError('rate and duration must be positive');
    if (sources.length === 0) throw new RangeError('no post to replay');
    this.random = prng(opts.seed);
    const ordered = [...sources].sort(
      (a, b) => a.item.publishedAt - b.item.publishedAt || (a.item.id < b.item.id ? -1 : 1),
    );
    this.points = ordered.reduce((s, p) => s + p.points, 0);
    this.comments = ordered.reduce((s, p) => s + p.comments, 0);
    const budget = Math.max(1, Math.round((opts.rate * opts.durationMs) / 1000));
    const replayBudget = budget - Math.floor(budget / FEED_EVERY);
    const raw = ordered.flatMap((p) => [p.points, p.comments]);
    const total = this.points + this.comments;
    this.scale = total === 0 ? 1 : Math.min(1, replayBudget / total); // nothing to scale when there is nothing
    const quotas = this.scale < 1 ? apportion(raw, replayBudget) : raw;
    const replayed = quotas.reduce((a, b) => a + b, 0);
    this.feeds = this.feedsLeft = Math.min(budget - replayBudget, Math.floor(replayed / (FEED_EVERY - 1)));
    this.events = replayed + this.feeds;
    const first = Math.ceil(ordered.length / 2);
    const later = ordered.length - first;
    this.posts = ordered.map((source, i) => ({
      id: `live_${opts.tag}_${source.item.id}`,
      source,
      publishAt: i < first ? 0 : (PUBLISH_SPAN * (i - first + 1)) / later,
      plannedViews: quotas[2 * i]!,
      plannedReplies: quotas[2 * i + 1]!,
      views: quotas[2 * i]!,
      replies: quotas[2 * i + 1]!,
      published: false,
    }));
    const maxViews = Math.max(...this.posts.map((p) => p.plannedViews));
    this.visitors = Math.max(MIN_VISITORS, maxViews + 1, Math.ceil(2 * opts.rate));
    for (const p of this.posts) this.offsets.set(p, Math.floor(this.random() * this.visitors));
  }

  /** Events not sent yet (publications aside). */
  get left(): number {
    return this.posts.reduce((s, p) => s + p.views + p.replies, 0) + this.feedsLeft;
  }

  /** Every post is published and nothing is left to send. */
  get done(): boolean {
    return this.posts.every((p) => p.published) && this.left === 0;
  }

  /**
   * The next thing to send at `fraction` (0..1) of the run: the publications due first, then one event;
   * null when nothing is left.
   */
  next(fraction: number): LiveEvent | null {
    const due = this.posts.filter((p) => !p.published && p.publishAt <= fraction);
    if (due.length > 0) return this.publish(due);
    const weight = this.posts.reduce((s, p) => s + (p.published ? p.views + p.replies : 0), 0);
    if (weight === 0) {
      const waiting = this.posts.find((p) => !p.published && p.views + p.replies > 0);
      if (waiting) return this.publish([waiting]);
      const rest = this.posts.filter((p) => !p.published); // posts the scale left without events
      if (rest.length > 0 && this.feedsLeft === 0) return this.publish(rest);
    }
    this.drawn++;
    if (this.feedsLeft > 0 && (weight === 0 || this.drawn % FEED_EVERY === 0)) return this.feed();
    if (weight === 0) return null;
    let r = this.random() * weight;
    const post = this.posts.find((p) => p.published && (r -= p.views + p.replies) < 0) ?? this.lastWithEvents();
    return this.random() * (post.views + post.replies) < post.views ? this.view(post) : this.reply(post);
  }

  /** Drops what `post` has left (its item was deleted on the server); returns how many events that was. */
  retire(post: PlannedPost): number {
    const dropped = post.views + post.replies;
    post.views = post.replies = 0;
    return dropped;
  }

  /** Marks `posts` unpublished again (their publication failed and is tried again). */
  unpublish(posts: readonly PlannedPost[]): void {
    for (const p of posts) p.published = false;
  }

  private publish(posts: PlannedPost[]): LiveEvent {
    for (const p of posts) p.published = true;
    return { kind: 'publish', posts };
  }

  private feed(): LiveEvent {
    this.feedsLeft--;
    return { kind: 'feed', reader: `${VISITOR_PREFIX}${this.feedsSent++ % REGULAR_READERS}` };
  }

  private view(post: PlannedPost): LiveEvent {
    const k = post.plannedViews - post.views;
    post.views--;
    const previous = this.lastVisitor.get(post);
    if (k > 0 && k % RELOAD_EVERY === 0 && previous !== undefined)
      return { kind: 'view', post, visitor: `${VISITOR_PREFIX}${previous}`, reload: true };
    const u = this.distinct.get(post) ?? 0;
    this.distinct.set(post, u + 1);
    const n = (this.offsets.get(post)! + u) % this.visitors;
    this.lastVisitor.set(post, n);
    return { kind: 'view', post, visitor: `${VISITOR_PREFIX}${n}`, reload: false };
  }

  private reply(post: PlannedPost): LiveEvent {
    const r = post.plannedReplies - post.replies;
    post.replies--;
    return { kind: 'reply', post, visitor: `${VISITOR_PREFIX}${(this.offsets.get(post)! + r) % this.visitors}` };
  }

  /** The last published post with events left (guards the float sum of the weighted draw). */
  private lastWithEvents(): PlannedPost {
    return [...this.posts].reverse().find((p) => p.published && p.views + p.replies > 0)!;
  }
}
