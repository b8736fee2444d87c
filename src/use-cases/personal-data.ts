/**
 * Personal data: erase a user (GDPR Art. 17) and export what Freshet holds about them (Art. 15/20), across
 * every store (docs/operations.md "Personal data"). The `eraseUser` and `exportUser` use cases
 * (src/use-cases/verbs.ts) call this; every edge — `DELETE /v1/users/:id`, `GET /v1/users/:id/export`, the
 * library, `freshet erase-user` / `freshet export-user` — goes through them.
 *
 * Erase walks the rooms in a fixed order, each step idempotent, so a run stopped at any step (a crash, a
 * kill) and run again ends in the same state: their items (tombstoned or kept), the graph, the timeline's
 * hot state and queued fan-outs, the exclusions, the notifications, the seen filters, the for-you cache,
 * the discover signals (and, deleting their items, the vector index's snapshots: their rows' vectors were
 * emptied with the tombstones), the interests, the hot ranking's per-visitor marks. `src/kernel/redis/key-families.ts`
 * is the checklist of the Redis part; test/app/erase.test.ts scans every table and key for a trace.
 *
 * What cannot forget one member is named, and bounded: the rolling daily seen filters (hashed members of
 * all readers; gone 7 days after their day) and the hot ranking's HyperLogLog UV counts (no id stored).
 */
import type { ContentStore } from '../kernel/items/content-store.js';
import { assertId } from '../kernel/ids.js';
import { fail } from '../kernel/errors.js';
import type { Logger } from '../kernel/observability.js';
import type { ReaderSeenFilter } from '../kernel/reader-seen-filter.js';
import type { FeedCache } from '../for-you/feed-cache.js';
import type { SocialGraph } from '../following/social-graph.js';
import type { FollowingTimeline } from '../following/service.js';
import type { Exclusions } from '../exclusions/service.js';
import type { WiredNotifications } from '../notifications/wire.js';
import type { DiscoverEmbeddings } from '../discover/embeddings.js';
import type { HotCounters } from '../hot/hot-counters.js';
import type { HotRanking } from '../hot/service.js';
import { DEFAULT_PREFERENCES, type PreferencesJson } from '../exclusions/preferences.js';
import { SIGNAL_KINDS, type InteractionRow } from '../learn/interactions.js';

/** The kinds of a pair's `kinds` bits, by name. */
const kindsOf = (bits: number): string[] => SIGNAL_KINDS.filter((_, b) => bits & (1 << b));

/** What erase and export reach: every room's part, as src/compose/open.ts wires them. */
export interface PersonalDataDeps {
  content: ContentStore;
  graph: SocialGraph;
  timeline: FollowingTimeline;
  exclusions: Exclusions;
  notifications: WiredNotifications;
  readerSeen: ReaderSeenFilter;
  forYouCache: FeedCache;
  /** The for-you feed's fill pool: told when items leave. */
  forYouPool: { invalidate(published: readonly string[], deleted: readonly string[]): void };
  embeddings: DiscoverEmbeddings;
  /** The learning room: the reader's interactions; the learned rows of erased items. */
  learn: {
    eraseReader(readerId: string): Promise<number>;
    eraseItems(itemIds: readonly string[]): Promise<number>;
    exportReader(readerId: string, limit: number): Promise<InteractionRow[]>;
  };
  hotCounters: HotCounters;
  hot: HotRanking;
  /**
   * Deletes the HTTP edge's count of the user's requests (`rl:{u:<r>}`, src/server/limits.ts); in process
   * the count is the rate limiter's memory only, gone within its window (`FRESHET_RATE_WINDOW_S`). @returns keys deleted.
   */
  forgetCaller(userId: string): Promise<number>;
  /** The reader's preferences in their JSON form (the use case's own reader). */
  preferences(readerId: string, nowMs: number): Promise<PreferencesJson>;
  log: Logger;
}

/** What happens to the erased user's own items. */
export type ItemsChoice = 'delete' | 'keep';

/** What an erase removed, per store and kind (counts of rows or keys), and what it could not. */
export interface Erasure {
  userId: string;
  items: ItemsChoice;
  /** Counts per room and kind, e.g. `{graph: {followers: 3, …}, …}`. */
  removed: Record<string, Record<string, number>>;
  /** Structures that keep a hashed or counted trace until they expire (docs/operations.md "Personal data"). */
  kept: string[];
}

/** The steps of an erase, in the order they run (each logged at debug as `erase step done` with its name). */
export const ERASE_STEPS = [
  'items',
  'graph',
  'timeline',
  'exclusions',
  'notifications',
  'seen',
  'forYou',
  'discover',
  'learn',
  'content',
  'hot',
  'edge',
] as const;
/** One step of {@link ERASE_STEPS}. */
export type EraseStep = (typeof ERASE_STEPS)[number];

/** Items tombstoned per statement. */
const ITEM_BATCH = 500;

/** The structures erase cannot reach into, and when they let go. */
export const KEPT_TRACES = [
  'rolling daily seen filters: hashed members of every reader, deleted 7 days after their day (FRESHET_SEEN_DAYS)',
  'HyperLogLog unique-visitor counts: no id stored, only a count',
];

/**
 * Erases `userId` everywhere (see the module doc). Idempotent.
 * @param items `delete` (default): their items become tombstones and leave every feed, the hot ranking and
 *   the vector index; `keep`: their items stay, under their id.
 * @throws FreshetError INVALID_ID; a store error stops it (run it again: the steps done stay done).
 */
export async function eraseUser(
  f: PersonalDataDeps,
  userId: string,
  items: ItemsChoice,
  nowMs: number,
): Promise<Erasure> {
  assertId(userId, 'user id');
  const removed: Record<string, Record<string, number>> = {};
  /** Logs the end of a step at debug (a test kills the command there and runs it again). */
  const done = (step: EraseStep) => f.log.debug({ userId, step }, 'erase step done');
  if (items === 'delete') removed.items = await eraseItems(f, userId, nowMs);
  done('items');
  const graph = await f.graph.forgetUser(userId);
  removed.graph = { following: graph.following, followers: graph.followers, blocks: graph.blocks, user: graph.user };
  done('graph');
  removed.timeline = await f.timeline.forgetUser(userId);
  done('timeline');
  removed.exclusions = await f.exclusions.forgetUser(userId);
  done('exclusions');
  removed.notifications = await f.notifications.notifications.forgetUser(userId);
  done('notifications');
  await f.readerSeen.forget(userId);
  removed.seen = { readerFilter: 1 };
  done('seen');
  await f.forYouCache.forget(userId);
  removed.forYou = { cache: 1 };
  done('forYou');
  removed.discover = { signals: await f.embeddings.forgetReader(userId) };
  // their items' vectors: the rows were emptied with the tombstones; the index's files are rewritten
  if (items === 'delete') removed.discover.snapshots = await f.embeddings.purgeSnapshots();
  done('discover');
  removed.learn = { interactions: await f.learn.eraseReader(userId) };
  done('learn');
  removed.content = { interests: await f.content.forgetReader(userId) };
  done('content');
  removed.hot = { visitorMarks: await f.hotCounters.forgetVisitor(userId) };
  done('hot');
  removed.edge = { rateCounts: await f.forgetCaller(userId) };
  done('edge');
  f.log.info({ userId, items, removed }, 'user erased');
  return { userId, items, removed, kept: KEPT_TRACES };
}

/**
 * Tombstones the user's items in batches. Each batch is listed while its items are still the user's, leaves
 * the hot ranking (its counters are keyed by item) and the for-you pool, and only then is tombstoned: a
 * run stopped in between finds the same items again, so no counter is orphaned by an author already
 * reassigned.
 */
async function eraseItems(f: PersonalDataDeps, userId: string, nowMs: number): Promise<Record<string, number>> {
  let count = 0;
  for (;;) {
    const ids = (await (f.content as Content).itemsOf(userId, ITEM_BATCH)).map((i) => i.id);
    for (const id of ids) await f.hot.itemDeleted(id);
    await f.learn.eraseItems(ids);
    f.forYouPool.invalidate([], ids);
    count += (await f.content.eraseAuthor(userId, ids, nowMs)).length;
    if (ids.length < ITEM_BATCH) return { items: count };
  }
}

/** The content store's part an export reads. */
type Content = Pick<ContentStore, 'getInterests' | 'itemsOf'>;

/** Pages of the export's long lists. */
const PAGE = 1_000;

/** Everything an export reads about a user before its first chunk (the lists of the document). */
async function exportReads(f: PersonalDataDeps, userId: string, nowMs: number) {
  const [profile, history, exclusions, interests, prefs, hasPrefs, marker, received] = await Promise.all([
    f.graph.profile(userId),
    f.exclusions.history(userId),
    f.exclusions.list(userId, nowMs),
    f.content.getInterests(userId),
    f.preferences(userId, nowMs),
    // a stored document (the defaults are the one shared object of a reader who never set any)
    f.exclusions.preferences(userId, nowMs).then((p) => p !== DEFAULT_PREFERENCES),
    f.notifications.notifications.marker(userId),
    f.notifications.store.received(userId, 10_000),
  ]);
  const views = await f.embeddings.signalsOf(userId, 10_000);
  const interactions = await f.learn.exportReader(userId, 10_000);
  const embedding = await f.embeddings.readerEmbedding(userId);
  const followingMarker = await f.timeline.marker(userId, nowMs);
  const firstItems = await (f.content as Content).itemsOf(userId, 1);
  return {
    ...{ profile, history, exclusions, interests, prefs, hasPrefs, marker, received },
    ...{ views, interactions, embedding, followingMarker, firstItems },
  };
}

/** Whether an export's reads hold anything about the user (else the export is NOT_FOUND). */
function holdsAnything(r: Awaited<ReturnType<typeof exportReads>>): boolean {
  const lists = [r.history.engagements, r.history.feedback, r.views, r.interactions, r.interests, r.received];
  return (
    r.profile !== null ||
    lists.some((l) => l.length > 0) ||
    r.embedding !== null ||
    r.hasPrefs ||
    r.exclusions.recentViews.length > 0 ||
    r.firstItems.length > 0 ||
    r.marker.updatedAt !== null ||
    r.followingMarker.updatedAt !== null
  );
}

/**
 * The export of `userId` as JSON text chunks (docs/api.md "Export"; its schema is `UserExport`,
 * src/server/routes/personal-data.ts): `{user_id, exported_at, profile, following, followers, blocks,
 * engagements, feedback, views, recent_views, interests, preferences, markers, notifications, items}`.
 * Long lists are read page by page and written as they come, so a large history never sits in memory.
 * Times are epoch seconds, as everywhere in the JSON API.
 * @throws FreshetError NOT_FOUND when Freshet holds nothing about the user — no profile, history, views,
 *   interests, preferences, markers, notifications or items (checked before the first chunk).
 */
export async function* exportUser(f: PersonalDataDeps, userId: string, nowMs: number): AsyncGenerator<string> {
  assertId(userId, 'user id');
  const s = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));
  const r = await exportReads(f, userId, nowMs);
  const { profile, history, exclusions, interests, prefs, marker, received, views, interactions, embedding } = r;
  const followingMarker = r.followingMarker;
  if (!holdsAnything(r)) throw fail('NOT_FOUND', `Freshet holds nothing about user ${userId}`);
  yield `{"user_id":${JSON.stringify(userId)},"exported_at":${s(nowMs)}`;
  yield `,"profile":${JSON.stringify(
    profile && {
      id: profile.id,
      created_at: s(profile.createdAt),
      last_active_at: s(profile.lastActiveAt),
      followers: profile.followers,
      following: profile.following,
    },
  )}`;
  yield* graphLists(f, userId, s);
  yield `,"engagements":${JSON.stringify(history.engagements.map((e) => ({ item_id: e.itemId, kind: e.kind, at: s(e.atMs) })))}`;
  yield `,"feedback":${JSON.stringify(history.feedback.map((e) => ({ item_id: e.itemId, kind: e.kind, author_id: e.authorId, at: s(e.atMs) })))}`;
  yield `,"views":${JSON.stringify(views.map((v) => ({ item_id: v.itemId, at: s(v.atMs), weight: v.weight })))}`;
  yield `,"interactions":${JSON.stringify(interactions.map((i) => ({ item_id: i.itemId, kinds: kindsOf(i.kinds), at: s(i.atMs) })))}`;
  yield `,"embedding":${JSON.stringify(embedding ? [...embedding] : null)}`;
  yield `,"recent_views":${JSON.stringify(exclusions.recentViews)}`;
  yield `,"interests":${JSON.stringify(interests)}`;
  yield `,"preferences":${JSON.stringify(prefs)}`;
  yield `,"markers":${JSON.stringify({
    following: { last_read_id: String(followingMarker.lastReadId), updated_at: s(followingMarker.updatedAt) },
    notifications: { last_read_id: String(marker.lastReadId), updated_at: s(marker.updatedAt) },
  })}`;
  yield `,"notifications":${JSON.stringify(
    received.map((e) => ({
      id: String(e.id),
      type: e.type,
      actor_id: e.actorId,
      item_id: e.itemId,
      at: s(e.atMs),
      data: e.data,
    })),
  )}`;
  yield* authoredItems(f.content as Content, userId, s);
  yield '}';
}

/** The user's following, followers and blocks, newest first, page by page. */
async function* graphLists(
  f: PersonalDataDeps,
  userId: string,
  s: (ms: number) => number | null,
): AsyncGenerator<string> {
  for (const list of ['following', 'followers', 'blocks'] as const) {
    yield `,"${list}":[`;
    let cursor: string | undefined;
    let first = true;
    do {
      const page = await f.graph[list](userId, PAGE, cursor);
      for (const e of page.entries) {
        yield `${first ? '' : ','}${JSON.stringify({ id: e.userId, since: s(e.sinceMs) })}`;
        first = false;
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    yield ']';
  }
}

/** The user's items, live and deleted, newest first, page by page. */
async function* authoredItems(
  content: Content,
  userId: string,
  s: (ms: number) => number | null,
): AsyncGenerator<string> {
  yield ',"items":[';
  let after: { publishedAt: number; id: string } | undefined;
  let first = true;
  for (;;) {
    const page = await content.itemsOf(userId, PAGE, after);
    for (const it of page) {
      const json = {
        id: it.id,
        title: it.title,
        text: it.text,
        url: it.url,
        tags: it.tags,
        published_at: s(it.publishedAt),
        deleted: it.deleted,
      };
      yield `${first ? '' : ','}${JSON.stringify(json)}`;
      first = false;
    }
    if (page.length < PAGE) break;
    const last = page[page.length - 1]!;
    after = { publishedAt: last.publishedAt, id: last.id };
  }
  yield ']';
}
