/**
 * `FreshetClient`: a typed client of every v1 route (docs/api.md), grouped as the API is —
 * `items`, `users`, `forYou`, `discover`, `following`, `follows`, `blocks`, `hot`, `views`,
 * `exclusions`, `engagements`, `feedback` — plus `health()`/`ready()`. Each method returns the envelope's `data`
 * (types from the server's TypeBox schemas, ./types.ts) and throws `FreshetClientError` otherwise.
 *
 * Two modes: the **service key** (acts for any reader: name it with `reader` on the client, on
 * `client.as(reader)`, or per call; may set the virtual time `now`), or a **reader token** (acts for
 * its own reader; `reader`/`now` must stay unset, the server answers 403 otherwise).
 */
import {
  FreshetClientError,
  Transport,
  transportError,
  type CallOptions,
  type RequestSpec,
  type RetryPolicy,
  type TransportOptions,
} from './transport.js';
import type {
  BlockData,
  FollowsData,
  DeleteData,
  DiscoverPage,
  EngagementBatchData,
  EngagementData,
  EngagementInput,
  EngagementUndoData,
  ErasureData,
  UserExportData,
  MarkersData,
  TimelineMarkerData,
  NotificationInput,
  NotificationMarkerData,
  NotificationSent,
  NotificationsPage,
  FeedbackData,
  FeedbackInput,
  FeedbackUndoData,
  ExclusionListData,
  PeekData,
  ExplainData,
  ExplainFeedName,
  MutedWordInput,
  PreferencesData,
  PreferencesInput,
  PreferencesPatchInput,
  FollowData,
  ForYouAction,
  ForYouPage,
  HotItemData,
  HotPage,
  InterestsData,
  ItemData,
  ItemInput,
  TimelineItem,
  TimelinePage,
  UpsertData,
  UserData,
  UserListPage,
  ViewBatchData,
  ViewInput,
  ViewOutcome,
  ReaderEmbeddingData,
  ReaderEmbeddingRemovedData,
} from './types.js';
import { followingStream, type StreamEvent, type StreamOptions } from './stream.js';

/** Options of {@link FreshetClient}. Give exactly one of `serviceKey` and `token`. */
export interface FreshetClientOptions {
  /** Base URL of the service, e.g. `http://127.0.0.1:8080` (no `/v1`). */
  baseUrl: string;
  /** The service key (`FRESHET_SERVICE_KEY`): acts for any reader. */
  serviceKey?: string;
  /** A reader token (HS256 JWT, `freshet token <reader>`): acts for its own reader only. */
  token?: string;
  /** Service key: the default reader (`X-Freshet-Reader`) of reader routes. */
  reader?: string;
  /** Service key: the default virtual time (`X-Freshet-Now`, epoch ms), or a function read per request. */
  now?: number | (() => number);
  /** Per-request timeout, ms (default 30 000); each retry gets its own. */
  timeoutMs?: number;
  /** Retries of 503 answers (default 3 sends, 100 ms doubling to 2 s, jittered); `{attempts: 1}` turns them off. */
  retry?: RetryPolicy;
  /** The `fetch` to use (default the global one). */
  fetch?: typeof fetch;
  /** Called before each retry (e.g. to log or count). */
  onRetry?: TransportOptions['onRetry'];
}

/** Query of the user lists. */
export interface ListOptions extends CallOptions {
  limit?: number;
  cursor?: string;
}

/** Query of the following timeline; `maxId`/`sinceId` are timeline ids (exclusive). */
export interface TimelineOptions extends CallOptions {
  limit?: number;
  maxId?: string;
  sinceId?: string;
}

const seg = encodeURIComponent;

/** Sends a request and returns the envelope's `data`. */
type DataOf = <T>(spec: RequestSpec, o?: CallOptions) => Promise<T>;

/** The typed HTTP client (see the module doc). */
export class FreshetClient {
  readonly transport: Transport;
  readonly items: ReturnType<typeof contentApi>['items'];
  readonly users: ReturnType<typeof contentApi>['users'];
  readonly forYou: ReturnType<typeof feedApi>['forYou'];
  readonly discover: ReturnType<typeof feedApi>['discover'];
  readonly following: ReturnType<typeof feedApi>['following'];
  readonly follows: ReturnType<typeof graphApi>['follows'];
  readonly blocks: ReturnType<typeof graphApi>['blocks'];
  readonly hot: ReturnType<typeof contentApi>['hot'];
  readonly views: ReturnType<typeof contentApi>['views'];
  readonly exclusions: ReturnType<typeof exclusionApi>['exclusions'];
  readonly engagements: ReturnType<typeof exclusionApi>['engagements'];
  readonly feedback: ReturnType<typeof exclusionApi>['feedback'];
  readonly notifications: ReturnType<typeof notificationApi>['notifications'];
  readonly markers: ReturnType<typeof notificationApi>['markers'];

  /** @throws Error (one sentence saying what to pass) when not exactly one non-empty `serviceKey` or `token` is given. */
  constructor(readonly options: FreshetClientOptions) {
    const key = options.serviceKey ?? options.token;
    if ((options.serviceKey === undefined) === (options.token === undefined) || !key)
      throw new Error(
        options.serviceKey === undefined && options.token === undefined
          ? 'FreshetClient: no serviceKey and no token: pass the service key (FRESHET_SERVICE_KEY, or serviceKey in <data dir>/secrets.json) or a reader token (`freshet token <reader>`)'
          : !key
            ? 'FreshetClient: the serviceKey or token given is empty: is the variable you read it from set?'
            : 'FreshetClient: give exactly one of serviceKey and token, not both',
      );
    const t = (this.transport = new Transport({ ...options, token: (options.serviceKey ?? options.token)! }));
    const dataOf = async <T>(spec: RequestSpec, o?: CallOptions): Promise<T> => (await t.request<T>(spec, o)).data;
    ({ items: this.items, users: this.users, hot: this.hot, views: this.views } = contentApi(dataOf));
    ({ forYou: this.forYou, discover: this.discover, following: this.following } = feedApi(t, dataOf));
    ({ follows: this.follows, blocks: this.blocks } = graphApi(dataOf));
    ({ exclusions: this.exclusions, engagements: this.engagements, feedback: this.feedback } = exclusionApi(dataOf));
    ({ notifications: this.notifications, markers: this.markers } = notificationApi(dataOf));
  }

  /** A client like this one acting for `reader` (service key), optionally at virtual time `now`. */
  as(reader: string, now?: number | (() => number)): FreshetClient {
    return new FreshetClient({ ...this.options, reader, ...(now !== undefined ? { now } : {}) });
  }

  /**
   * `GET /v1/feeds/{feed}/explain?item_id=`: why `itemId` would or would not be in `feed` of the client's
   * reader now — every rule that removes it (in the feed's order), its score and its rank. Writes nothing.
   * `o.range` (hot only): the hot list's range, as `hot.top` takes it (default 72h).
   * @throws FreshetClientError 400 (unknown feed, bad id, a range for another feed), 403 (a token for another
   *   reader), 404 (unknown item).
   */
  async explain(feed: ExplainFeedName, itemId: string, o: { range?: string } & CallOptions = {}): Promise<ExplainData> {
    const spec = {
      method: 'GET' as const,
      path: `/v1/feeds/${seg(feed)}/explain`,
      query: { item_id: itemId, range: o.range },
      reader: true,
      now: true,
    };
    return (await this.transport.request<ExplainData>(spec, o)).data;
  }

  /** `GET /healthz`: liveness (no token needed). */
  async health(o?: CallOptions): Promise<{ status: string }> {
    return (await this.transport.request<{ status: string }>({ method: 'GET', path: '/healthz' }, o)).data;
  }

  /** `GET /readyz`: which stores answer; a store down is a `FreshetClientError` 503/50301 whose `data.stores` names it. */
  async ready(o?: CallOptions): Promise<{ status: 'ready'; stores: Record<string, boolean> }> {
    return (
      await this.transport.request<{ status: 'ready'; stores: Record<string, boolean> }>(
        { method: 'GET', path: '/readyz' },
        o,
      )
    ).data;
  }

  /**
   * `GET /metrics`: the Prometheus text (no envelope), sent with the client's bearer token (a server off
   * loopback answers it to the service key only: `FRESHET_METRICS_ACCESS`).
   * @throws FreshetClientError when it does not answer 200.
   */
  async metrics(o: CallOptions = {}): Promise<string> {
    const t = this.transport;
    const label = 'GET /metrics';
    try {
      const res = await (t.opts.fetch ?? globalThis.fetch)(t.url('/metrics'), {
        signal: t.signal(o),
        headers: { authorization: `Bearer ${t.opts.token}` },
      });
      const text = await res.text();
      if (!res.ok) throw new FreshetClientError('bad-response', res.status, 0, text.slice(0, 120), null, label, 1);
      return text;
    } catch (err) {
      throw err instanceof FreshetClientError ? err : transportError(err, o, label, 1);
    }
  }
}

/** Pages from `opts.maxId` following `next_max_id` until it is null. */
async function* pages(
  page: (o: TimelineOptions) => Promise<TimelinePage>,
  opts: TimelineOptions,
): AsyncGenerator<TimelinePage> {
  let maxId = opts.maxId;
  for (;;) {
    const p = await page({ ...opts, maxId });
    yield p;
    if (p.next_max_id === null || p.items.length === 0) return;
    maxId = p.next_max_id;
  }
}

async function* timelineItems(
  page: (o: TimelineOptions) => Promise<TimelinePage>,
  opts: TimelineOptions,
): AsyncGenerator<TimelineItem> {
  for await (const p of pages(page, opts)) yield* p.items;
}

/** Items, users, the hot ranking and views. */
function contentApi(data: DataOf) {
  return {
    items: itemsApi(data),
    users: { ...usersApi(data), ...preferencesApi(data) },
    hot: hotApi(data),
    views: viewsApi(data),
  };
}

/** `/v1/items`: publish, read, delete. */
function itemsApi(data: DataOf) {
  return {
    /** `POST /v1/items`: idempotent upsert of 1..1000 items, all or nothing (service key). */
    publish: (items: ItemInput[], o?: CallOptions) =>
      data<UpsertData>({ method: 'POST', path: '/v1/items', body: items, now: true }, o),
    /** `GET /v1/items/:id`: one live item. */
    get: (id: string, o?: CallOptions) => data<ItemData>({ method: 'GET', path: `/v1/items/${seg(id)}` }, o),
    /** `DELETE /v1/items/:id`: soft delete (service key); the id is never reused. */
    delete: (id: string, o?: CallOptions) => data<DeleteData>({ method: 'DELETE', path: `/v1/items/${seg(id)}` }, o),
  };
}

/** `/v1/users/:id`: register, erase, export, interests. */
function usersApi(data: DataOf) {
  return {
    /** `PUT /v1/users/:id`: registers a user (service key). */
    register: (id: string, o?: CallOptions) => data<UserData>({ method: 'PUT', path: `/v1/users/${seg(id)}` }, o),
    /**
     * `DELETE /v1/users/:id` (service key): erases the user from every store; `items: 'keep'` keeps their
     * items. Idempotent. @returns what was removed, with counts, and what keeps a hashed trace.
     */
    erase: (id: string, o: CallOptions & { items?: 'delete' | 'keep' } = {}) =>
      data<ErasureData>({ method: 'DELETE', path: `/v1/users/${seg(id)}`, query: { items: o.items }, now: true }, o),
    /** `GET /v1/users/:id/export`: everything Freshet holds about the user (service key, or that reader's token). */
    export: (id: string, o?: CallOptions) =>
      data<UserExportData>({ method: 'GET', path: `/v1/users/${seg(id)}/export` }, o),
    /** `PUT /v1/users/:id/interests` (service key). */
    setInterests: (id: string, terms: string[], o?: CallOptions) =>
      data<InterestsData>({ method: 'PUT', path: `/v1/users/${seg(id)}/interests`, body: { terms } }, o),
    /** `GET /v1/users/:id/interests` (service key, or that reader). */
    interests: (id: string, o?: CallOptions) =>
      data<InterestsData>({ method: 'GET', path: `/v1/users/${seg(id)}/interests` }, o),
    /**
     * `PUT /v1/users/:id/embedding` (service key): the reader's embedding in the space of the items' own
     * (`FRESHET_EMBEDDING_DIM` numbers); the discover feed's similar phase searches with it.
     */
    setEmbedding: (id: string, embedding: number[], o?: CallOptions) =>
      data<ReaderEmbeddingData>(
        { method: 'PUT', path: `/v1/users/${seg(id)}/embedding`, body: { embedding }, now: true },
        o,
      ),
    /** `DELETE /v1/users/:id/embedding` (service key): removes the given embedding. */
    removeEmbedding: (id: string, o?: CallOptions) =>
      data<ReaderEmbeddingRemovedData>({ method: 'DELETE', path: `/v1/users/${seg(id)}/embedding`, now: true }, o),
  };
}

/** `/v1/users/:id/preferences`: read, replace, edit, and the mute and unmute shortcuts. */
function preferencesApi(data: DataOf) {
  return {
    /** `GET /v1/users/:id/preferences`: muted words and authors, languages, max per author (service key, or that reader). */
    preferences: (id: string, o?: CallOptions) =>
      data<PreferencesData>({ method: 'GET', path: `/v1/users/${seg(id)}/preferences`, now: true }, o),
    /** `PUT /v1/users/:id/preferences`: replaces them whole; applied from the next page of every feed. */
    setPreferences: (id: string, doc: PreferencesInput, o?: CallOptions) =>
      data<PreferencesData>({ method: 'PUT', path: `/v1/users/${seg(id)}/preferences`, body: doc, now: true }, o),
    /**
     * `PATCH /v1/users/:id/preferences`: edits them entry by entry, atomically (concurrent edits from two
     * devices both land; a `PUT` built from an earlier read would drop one). Idempotent, so retried on 503.
     */
    updatePreferences: (id: string, patch: PreferencesPatchInput, o?: CallOptions) =>
      data<PreferencesData>({ method: 'PATCH', path: `/v1/users/${seg(id)}/preferences`, body: patch, now: true }, o),
    /** Mutes an author for reader `id` (hidden from every feed, not blocked), until `expiresAt` (epoch s) or for good. */
    muteAuthor: (id: string, authorId: string, o: CallOptions & { expiresAt?: number } = {}) =>
      data<PreferencesData>(
        {
          method: 'PATCH',
          path: `/v1/users/${seg(id)}/preferences`,
          body: { add_muted_authors: [{ author_id: authorId, expires_at: o.expiresAt ?? null }] },
          now: true,
        },
        o,
      ),
    /** Unmutes an author (no error when it was not muted). */
    unmuteAuthor: (id: string, authorId: string, o?: CallOptions) =>
      data<PreferencesData>(
        {
          method: 'PATCH',
          path: `/v1/users/${seg(id)}/preferences`,
          body: { remove_muted_authors: [authorId] },
          now: true,
        },
        o,
      ),
    /** Mutes a word or phrase (`action: "warn"` delivers matching items with `filtered` instead of hiding them). */
    muteWord: (id: string, word: MutedWordInput, o?: CallOptions) =>
      data<PreferencesData>(
        { method: 'PATCH', path: `/v1/users/${seg(id)}/preferences`, body: { add_muted_words: [word] }, now: true },
        o,
      ),
    /** Unmutes a phrase (compared folded: case and accents ignored; no error when it was not muted). */
    unmuteWord: (id: string, phrase: string, o?: CallOptions) =>
      data<PreferencesData>(
        {
          method: 'PATCH',
          path: `/v1/users/${seg(id)}/preferences`,
          body: { remove_muted_words: [phrase] },
          now: true,
        },
        o,
      ),
  };
}

/** `/v1/hot`: the ranking and one item's counters. */
function hotApi(data: DataOf) {
  return {
    /**
     * `GET /v1/hot?range=&limit=`: the hot ranking of items published within `range` (`<n>h`/`<n>d`, default
     * 72h); as seen by the client's reader (a reader token, or `reader` with the service key), whose
     * preferences (muted authors and words, languages) apply.
     */
    top: (opts: { range?: string; limit?: number } & CallOptions = {}) =>
      data<HotPage>(
        { method: 'GET', path: '/v1/hot', query: { range: opts.range, limit: opts.limit }, reader: true, now: true },
        opts,
      ),
    /** `GET /v1/hot/items/:id`: one item's counters (service key). */
    item: (id: string, o?: CallOptions) => data<HotItemData>({ method: 'GET', path: `/v1/hot/items/${seg(id)}` }, o),
  };
}

/** `/v1/views`: one view or a batch. */
function viewsApi(data: DataOf) {
  return {
    /** `POST /v1/views` with one view. */
    record: (view: ViewInput, o?: CallOptions) =>
      data<ViewOutcome>({ method: 'POST', path: '/v1/views', body: view, now: true }, o),
    /** `POST /v1/views` with a batch of 1..1000 (service key), checked whole before anything is written. */
    recordBatch: (views: ViewInput[], o?: CallOptions) =>
      data<ViewBatchData>({ method: 'POST', path: '/v1/views', body: views, now: true }, o),
  };
}

/** The reader feeds: for-you, discover, following (pages, iterators, stream). */
function feedApi(t: Transport, data: DataOf) {
  return { forYou: forYouApi(t, data), discover: discoverApi(data), following: followingApi(t, data) };
}

/** `/v1/feeds/for-you`: refresh, load_more, peek. */
function forYouApi(t: Transport, data: DataOf) {
  const forYou = async (action: ForYouAction, limit: number, o?: CallOptions): Promise<ForYouPage> => {
    const a = await t.request<Omit<ForYouPage, 'refreshed'>>(
      { method: 'POST', path: '/v1/feeds/for-you', body: { action, limit }, reader: true, now: true },
      o,
    );
    return { ...a.data, refreshed: a.headers.get('x-freshet-refreshed') === '1' };
  };
  return {
    /** `POST /v1/feeds/for-you` `refresh`: a fresh page (pull-to-refresh, cold start). */
    refresh: (opts: { limit?: number } & CallOptions = {}) => forYou('refresh', opts.limit ?? 20, opts),
    /** `POST /v1/feeds/for-you` `load_more`: the next page from the cache (`refreshed` when it had to refresh). */
    loadMore: (opts: { limit?: number } & CallOptions = {}) => forYou('load_more', opts.limit ?? 20, opts),
    /** `GET /v1/feeds/for-you/peek`: how many fresh unseen candidates a refresh would bring now; writes nothing. */
    peek: (o?: CallOptions) =>
      data<PeekData>({ method: 'GET', path: '/v1/feeds/for-you/peek', reader: true, now: true }, o),
  };
}

/** `/v1/feeds/discover`: one page at a time. */
function discoverApi(data: DataOf) {
  return {
    /** `GET /v1/feeds/discover`: one page; pass the previous page's `next_cursor` to continue. */
    page: (cursor?: string | null, opts: { limit?: number } & CallOptions = {}) =>
      data<DiscoverPage>(
        {
          method: 'GET',
          path: '/v1/feeds/discover',
          query: { limit: opts.limit, cursor: cursor ?? undefined },
          reader: true,
          now: true,
        },
        opts,
      ),
  };
}

/** `/v1/feeds/following`: pages, iterators, catch-up and the stream. */
function followingApi(t: Transport, data: DataOf) {
  const timelinePage = (opts: TimelineOptions = {}) =>
    data<TimelinePage>(
      {
        method: 'GET',
        path: '/v1/feeds/following',
        query: { limit: opts.limit, max_id: opts.maxId, since_id: opts.sinceId },
        reader: true,
        now: true,
      },
      opts,
    );
  return {
    /** `GET /v1/feeds/following`: one page, newest first. */
    page: timelinePage,
    /** Every page from `maxId` (or the newest) down to the end (or `sinceId`), following `next_max_id`. */
    pages: (opts: TimelineOptions = {}) => pages(timelinePage, opts),
    /** Every item of the timeline, newest first, paging as it goes. */
    items: (opts: TimelineOptions = {}) => timelineItems(timelinePage, opts),
    /**
     * `GET /v1/feeds/following?min_id=` (or `from=marker` without `minId`): catch-up, one page **oldest first**
     * above `minId`; continue with `next_min_id` until it is null (caught up, for now).
     */
    catchUp: (opts: CallOptions & { minId?: string; limit?: number } = {}) =>
      data<TimelinePage>(
        {
          method: 'GET',
          path: '/v1/feeds/following',
          query: { limit: opts.limit, ...(opts.minId !== undefined ? { min_id: opts.minId } : { from: 'marker' }) },
          reader: true,
          now: true,
        },
        opts,
      ),
    /** `GET /v1/feeds/following/stream`: new timeline entries as fan-out delivers them (Server-Sent Events). */
    stream: (opts: StreamOptions = {}): AsyncIterable<StreamEvent> => followingStream(t, opts),
  };
}

/** Follows and blocks. */
function graphApi(data: DataOf) {
  const edge = (kind: 'following' | 'blocks') => ({
    add: (userId: string, authorId: string, o?: CallOptions) =>
      data<FollowData & BlockData>(
        { method: 'PUT', path: `/v1/users/${seg(userId)}/${kind}/${seg(authorId)}`, now: true },
        o,
      ),
    remove: (userId: string, authorId: string, o?: CallOptions) =>
      data<FollowData & BlockData>({ method: 'DELETE', path: `/v1/users/${seg(userId)}/${kind}/${seg(authorId)}` }, o),
  });
  const list = (userId: string, which: 'following' | 'followers' | 'blocks', o: ListOptions = {}) =>
    data<UserListPage>(
      { method: 'GET', path: `/v1/users/${seg(userId)}/${which}`, query: { limit: o.limit, cursor: o.cursor } },
      o,
    );
  const follow = edge('following');
  const block = edge('blocks');
  return {
    follows: {
      /**
       * `POST /v1/follows` (service key): follow edges in bulk, at most 5,000 a call (new ones only; edges
       * across a block skipped; the followers' inboxes rebuilt on their next read).
       */
      import: (edges: readonly { follower_id: string; followee_id: string }[], o?: CallOptions) =>
        data<FollowsData>({ method: 'POST', path: '/v1/follows', body: { edges }, now: true }, o),
      /** `PUT /v1/users/:id/following/:author_id`: follow (idempotent; backfills the inbox). */
      follow: (userId: string, authorId: string, o?: CallOptions): Promise<FollowData> =>
        follow.add(userId, authorId, o),
      /** `DELETE /v1/users/:id/following/:author_id`: unfollow (idempotent). */
      unfollow: (userId: string, authorId: string, o?: CallOptions): Promise<FollowData> =>
        follow.remove(userId, authorId, o),
      /** `GET /v1/users/:id/following`: whom the user follows, newest first. */
      following: (userId: string, o?: ListOptions) => list(userId, 'following', o),
      /** `GET /v1/users/:id/followers`. */
      followers: (userId: string, o?: ListOptions) => list(userId, 'followers', o),
    },
    blocks: {
      /** `PUT /v1/users/:id/blocks/:author_id`: block (removes the follows both ways). */
      block: (userId: string, authorId: string, o?: CallOptions): Promise<BlockData> => block.add(userId, authorId, o),
      /** `DELETE /v1/users/:id/blocks/:author_id`: unblock (idempotent). */
      unblock: (userId: string, authorId: string, o?: CallOptions): Promise<BlockData> =>
        block.remove(userId, authorId, o),
      /** `GET /v1/users/:id/blocks`. */
      list: (userId: string, o?: ListOptions) => list(userId, 'blocks', o),
    },
  };
}

/** Engagements and feedback. */
function exclusionApi(data: DataOf) {
  return {
    exclusions: {
      /** `GET /v1/exclusions`: the reader's recent views, engaged and not-interested items, blocked authors. */
      list: (o?: CallOptions) => data<ExclusionListData>({ method: 'GET', path: '/v1/exclusions', reader: true }, o),
    },
    engagements: {
      /** `POST /v1/engagements`: a reply, like or share (idempotent); the item leaves the reader's feeds. */
      record: (e: EngagementInput, o?: CallOptions) =>
        data<EngagementData>({ method: 'POST', path: '/v1/engagements', body: e, reader: true, now: true }, o),
      /** `POST /v1/engagements` with a batch of 1..1000 of the reader's, checked whole and written all or nothing. */
      recordBatch: (batch: EngagementInput[], o?: CallOptions) =>
        data<EngagementBatchData>({ method: 'POST', path: '/v1/engagements', body: batch, reader: true, now: true }, o),
      /** `DELETE /v1/engagements/:item_id?kind=`: undoes it (an unlike takes its notification back within the window). */
      undo: (itemId: string, kind: EngagementInput['kind'], o?: CallOptions) =>
        data<EngagementUndoData>(
          { method: 'DELETE', path: `/v1/engagements/${seg(itemId)}`, query: { kind }, reader: true, now: true },
          o,
        ),
    },

    feedback: {
      /** `POST /v1/feedback` (`not_interested`): the item leaves the reader's feeds, its author is down-weighted. */
      record: (f: FeedbackInput, o?: CallOptions) =>
        data<FeedbackData>({ method: 'POST', path: '/v1/feedback', body: f, reader: true, now: true }, o),
      /** Shorthand of `record({item_id, kind: 'not_interested'})`. */
      notInterested: (itemId: string, o?: CallOptions) =>
        data<FeedbackData>(
          {
            method: 'POST',
            path: '/v1/feedback',
            body: { item_id: itemId, kind: 'not_interested' },
            reader: true,
            now: true,
          },
          o,
        ),
      /** Shorthand of `record({item_id, kind: 'show_less'})`: the item's author and tags weigh less for a while. */
      showLess: (itemId: string, o?: CallOptions) =>
        data<FeedbackData>(
          {
            method: 'POST',
            path: '/v1/feedback',
            body: { item_id: itemId, kind: 'show_less' },
            reader: true,
            now: true,
          },
          o,
        ),
      /** `DELETE /v1/feedback/:item_id`: undoes a "not interested" (or with `kind`, a "show less"). */
      undo: (itemId: string, o?: CallOptions & { kind?: FeedbackInput['kind'] }) =>
        data<FeedbackUndoData>(
          { method: 'DELETE', path: `/v1/feedback/${seg(itemId)}`, query: { kind: o?.kind }, reader: true },
          o,
        ),
    },
  };
}

/** Notifications and read markers. */
function notificationApi(data: DataOf) {
  return {
    notifications: {
      /** `GET /v1/feeds/notifications`: grouped notifications, newest group first, with the unread count. */
      page: (o: CallOptions & { limit?: number; maxId?: string } = {}) =>
        data<NotificationsPage>(
          {
            method: 'GET',
            path: '/v1/feeds/notifications',
            query: { limit: o.limit, max_id: o.maxId },
            reader: true,
            now: true,
          },
          o,
        ),
      /** `POST /v1/notifications` (service key): an event Freshet cannot see (`mention`, `app.<name>`). */
      send: (n: NotificationInput, o?: CallOptions) =>
        data<NotificationSent>({ method: 'POST', path: '/v1/notifications', body: n, now: true }, o),
    },
    markers: {
      /** `GET /v1/users/:id/markers`: the read markers and unread counts. */
      get: (userId: string, o?: CallOptions) =>
        data<MarkersData>({ method: 'GET', path: `/v1/users/${seg(userId)}/markers` }, o),
      /** `PUT /v1/users/:id/markers/following`: the timeline read up to `lastReadId` (forward only unless `force`). */
      setFollowing: (userId: string, lastReadId: string, o: CallOptions & { force?: boolean } = {}) =>
        data<TimelineMarkerData>(
          {
            method: 'PUT',
            path: `/v1/users/${seg(userId)}/markers/following`,
            body: { last_read_id: lastReadId, ...(o.force ? { force: true } : {}) },
            now: true,
          },
          o,
        ),
      /** `PUT /v1/users/:id/markers/notifications`: read up to `lastReadId` (forward only unless `force`). */
      setNotifications: (userId: string, lastReadId: string, o: CallOptions & { force?: boolean } = {}) =>
        data<NotificationMarkerData>(
          {
            method: 'PUT',
            path: `/v1/users/${seg(userId)}/markers/notifications`,
            body: { last_read_id: lastReadId, ...(o.force ? { force: true } : {}) },
            now: true,
          },
          o,
        ),
    },
  };
}
