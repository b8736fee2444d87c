/**
 * The client's request and response types, derived from the TypeBox schemas the server validates and
 * serializes with (`Static<typeof …>`), so the client and the server cannot drift apart. Every import
 * here is type-only: nothing of the server ships with the client.
 */
import type { Static } from 'typebox';
import type { ExplainResult, UserExport } from '../use-cases/schemas.js';
import type { DeleteResult, FeedItemOut, ItemIn, ItemOut, ItemResult, UpsertResult } from '../kernel/http/schemas.js';
import type { FeedResult, ForYouBody, InterestsResult, PeekResult } from '../for-you/schemas.js';
import type { DiscoverResult, ReaderEmbeddingRemoved, ReaderEmbeddingResult } from '../discover/schemas.js';
import type {
  BlockResult,
  FollowResult,
  FollowsResult,
  ListResult,
  StreamItemEvent,
  TimelineMarkerOut,
  TimelineMarkerResult,
  TimelineItemOut,
  TimelineResult,
  UserResult,
} from '../following/schemas.js';
import type { HotItemResult, HotResult, ViewIn, ViewOut, ViewsResult } from '../hot/schemas.js';
import type {
  HookBody,
  HookResult,
  MarkerResult,
  NotificationsResult,
  GroupOut,
  MarkerOut,
} from '../notifications/schemas.js';
import type {
  EngagementBody,
  EngagementDeleteResult,
  EngagementResult,
  EngagementsResult,
  ExclusionListResult,
  FeedbackBody,
  FeedbackDeleteResult,
  FeedbackResult,
  PreferencesDoc,
  PreferencesPatch,
  PreferencesResult,
} from '../exclusions/schemas.js';

/** The `data` of a success envelope schema. */
type DataOf<T> = T extends { data: infer D } ? D : never;

/** An item as written (`POST /v1/items`): `published_at` in epoch **seconds** or ISO 8601. */
export type ItemInput = Static<typeof ItemIn>;
/** An item as answered (times in epoch seconds). */
export type Item = Static<typeof ItemOut>;
/**
 * An item as a feed answers it: an {@link Item}, plus `filtered` — the reader's muted phrases whose action is
 * `warn` that it holds (absent: none), for the client to show it collapsed behind them.
 */
export type FeedItem = Static<typeof FeedItemOut>;
/** `POST /v1/items` → `{inserted, updated}`. */
export type UpsertData = DataOf<Static<typeof UpsertResult>>;
/** `GET /v1/items/:id`. */
export type ItemData = DataOf<Static<typeof ItemResult>>;
/** `DELETE /v1/items/:id` → `{id, deleted}`. */
export type DeleteData = DataOf<Static<typeof DeleteResult>>;

/** `POST /v1/feeds/for-you` action. */
export type ForYouAction = Static<typeof ForYouBody>['action'];
/** A for-you page, plus `refreshed`: a `load_more` that found nothing cached and refreshed (header `X-Freshet-Refreshed: 1`). */
export type ForYouPage = DataOf<Static<typeof FeedResult>> & { refreshed: boolean };
/** `GET /v1/feeds/for-you/peek`: fresh unseen candidates a refresh would bring now (`capped`: the check hit its bound). */
export type PeekData = DataOf<Static<typeof PeekResult>>;
/** `GET /v1/feeds/{feed}/explain`: why an item would or would not be in the feed now (docs/explain.md). */
export type ExplainData = DataOf<Static<typeof ExplainResult>>;
/** The feeds that explain. */
export type ExplainFeedName = ExplainData['feed'];
/** `PUT|GET /v1/users/:id/interests`. */
export type InterestsData = DataOf<Static<typeof InterestsResult>>;
export type ReaderEmbeddingData = DataOf<Static<typeof ReaderEmbeddingResult>>;
export type ReaderEmbeddingRemovedData = DataOf<Static<typeof ReaderEmbeddingRemoved>>;

/** A discover page: `{items, sources, next_cursor, restarted}`. */
export type DiscoverPage = DataOf<Static<typeof DiscoverResult>>;

/** A following-timeline item: the item plus its `timeline_id` cursor. */
export type TimelineItem = Static<typeof TimelineItemOut>;
/** A following-timeline page: `{items, next_max_id, rebuilt}`. */
export type TimelinePage = DataOf<Static<typeof TimelineResult>>;
/** The `data` of a stream `item` event: `{timeline_id, item}`. */
export type StreamItem = Static<typeof StreamItemEvent>;
/** `PUT /v1/users/:id`. */
export type UserData = DataOf<Static<typeof UserResult>>;
/** Follow / unfollow answer. */
export type FollowData = DataOf<Static<typeof FollowResult>>;
/** Block / unblock answer. */
export type BlockData = DataOf<Static<typeof BlockResult>>;
/** A page of a user's following, followers or blocks. */
export type UserListPage = DataOf<Static<typeof ListResult>>;

/** One view as sent (`visitor_id`, `flagged`, `at` need the service key). */
export type ViewInput = Static<typeof ViewIn>;
/** The outcome of one view. */
export type ViewOutcome = Static<typeof ViewOut>;
/** The outcome of a batch of views: `{results, summary}`. */
export type ViewBatchData = DataOf<Static<typeof ViewsResult>>;
/** `GET /v1/hot`. */
export type HotPage = DataOf<Static<typeof HotResult>>;
/** `GET /v1/hot/items/:id`. */
export type HotItemData = DataOf<Static<typeof HotItemResult>>;

/** `POST /v1/engagements` body. */
export type EngagementInput = Static<typeof EngagementBody>;
export type EngagementData = DataOf<Static<typeof EngagementResult>>;
/** The outcome of a batch of engagements: `{results, summary: {created, existing}}`. */
export type EngagementBatchData = DataOf<Static<typeof EngagementsResult>>;
/** `POST /v1/feedback` body. */
export type FeedbackInput = Static<typeof FeedbackBody>;
export type FeedbackData = DataOf<Static<typeof FeedbackResult>>;
export type FeedbackUndoData = DataOf<Static<typeof FeedbackDeleteResult>>;
/** `GET /v1/exclusions`: what the reader's feeds leave out (recent views, engaged, not interested, blocked authors). */
export type ExclusionListData = DataOf<Static<typeof ExclusionListResult>>;
/** `PUT /v1/users/:id/preferences` body: muted words and authors, languages, max per author (docs/preferences.md). */
export type PreferencesInput = Static<typeof PreferencesDoc>;
/** `PATCH /v1/users/:id/preferences` body: entries to add or remove, fields to replace (atomic). */
export type PreferencesPatchInput = Static<typeof PreferencesPatch>;
/** One muted word as sent: `{phrase, whole_word?, expires_at?, feeds?, action?: "hide" | "warn"}`. */
export type MutedWordInput = NonNullable<PreferencesInput['muted_words']>[number];
/** `GET|PUT /v1/users/:id/preferences`: the reader's preferences as stored (expired mutes left out). */
export type PreferencesData = DataOf<Static<typeof PreferencesResult>>;

/** `DELETE /v1/engagements/:item_id` → `{reader_id, item_id, kind, removed}`. */
export type EngagementUndoData = DataOf<Static<typeof EngagementDeleteResult>>;

/** One group of the grouped notifications. */
export type NotificationGroup = Static<typeof GroupOut>;
/** `GET /v1/feeds/notifications`: `{groups, next_max_id, unread_count, unread_capped}`. */
export type NotificationsPage = DataOf<Static<typeof NotificationsResult>>;
/** `POST /v1/notifications` body (service key). */
export type NotificationInput = Static<typeof HookBody>;
/** `POST /v1/notifications` → `{delivered, id, group_key}`. */
export type NotificationSent = DataOf<Static<typeof HookResult>>;
/** `PUT /v1/users/:id/markers/notifications` → the marker, `moved`, and the unread count. */
export type NotificationMarkerData = DataOf<Static<typeof MarkerResult>>;
/** `GET /v1/users/:id/markers`: each timeline's read marker with its unread count. */
export interface MarkersData {
  user_id: string;
  following: Static<typeof TimelineMarkerOut>;
  notifications: Static<typeof MarkerOut>;
}

/** `PUT /v1/users/:id/markers/following` → the marker, `moved`, and the unread count. */
export type TimelineMarkerData = DataOf<Static<typeof TimelineMarkerResult>>;

/** The `data` of a stream `notifications` event: the unread count and the newest group (null: none). */
export interface NotificationsEvent {
  unread_count: number;
  unread_capped: boolean;
  latest: NotificationGroup | null;
}

/** `POST /v1/follows` → `{inserted, blocked}`. */
export type FollowsData = DataOf<Static<typeof FollowsResult>>;

/** The `data` of a stream `marker` event: the following-timeline marker moved (on any device). */
export type MarkerEvent = { timeline: 'following' } & Static<typeof TimelineMarkerOut>;
/** `DELETE /v1/users/:id` → `{user_id, items, removed: {room: {kind: count}}, kept}`. */
export interface ErasureData {
  user_id: string;
  items: 'delete' | 'keep';
  removed: Record<string, Record<string, number>>;
  kept: string[];
}
/** `GET /v1/users/:id/export` → the export document (`UserExport` in the OpenAPI document). */
export type UserExportData = Static<typeof UserExport>;
