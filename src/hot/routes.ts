/**
 * Hot-ranking routes (docs/hot.md):
 * - `POST /v1/views` — one view `{item_id}` with a reader token (the visitor is the token's subject),
 *   or with the service key `{item_id, visitor_id, flagged?, at?}` or a batch (array) of them for
 *   backfills. Always 200 when accepted: `data.counted` says whether the view counted, `data.verdict`
 *   why not. Unknown item → 404 (40401).
 * - `GET /v1/hot?range=72h&limit=20` — the cached ranking (any token). As seen by a reader (a reader
 *   token, or the service key with `X-Freshet-Reader`), the reader's preferences apply: muted authors,
 *   muted words whose feeds include `hot`, the language list (docs/preferences.md); the list is then cut
 *   from the whole snapshot, so it stays `limit` long while the snapshot has enough items; an item holding
 *   a muted phrase whose action is `warn` is listed with `filtered`.
 * - `GET /v1/hot/items/:id` — one item's counters, suspicious views included (service key).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { fail } from '../kernel/errors.js';
import { itemToJson, type ServedItem } from '../kernel/items/item.js';
import { DEFAULT_RANGE, parseRange, type ViewVerdict } from './domain.js';
import type { ViewInput, ViewResult as Outcome } from './hot-counters.js';
import type { Principal } from '../kernel/http/tokens.js';
import type { HotPage } from './service.js';
import type { ContentStore } from '../kernel/items/content-store.js';
import {
  nowOf,
  principalOf,
  readerOf,
  requireService,
  timeOf,
  type RequestAccess,
  requireServiceKey,
} from '../kernel/http/access.js';
import { ErrorEnvelope, IdParams, ok, LOOKUP_ERRORS, type TypedApp } from '../kernel/http/schemas.js';
import type { HotCounters } from './hot-counters.js';
import type { HotRanking } from './service.js';
import type { HotSettings } from './wire.js';
import type { ExclusionSource } from '../kernel/exclusion-source.js';
import { FeedHeaders } from '../kernel/http/schemas.js';
import {
  HotHeaders,
  HotItemResult,
  HotQuery,
  HotResult,
  ViewResult,
  ViewsBody,
  ViewsResult,
  type ViewInJson,
} from './schemas.js';

/** The verb the routes write views through (src/use-cases/verbs.ts `UseCases` has it). */
export interface HotVerbs {
  recordViews(views: readonly ViewInput[]): Promise<Outcome[]>;
}

/** What the routes call: views go to the app's `recordViews` use case. */
export interface HotRouteDeps {
  access: RequestAccess;
  ranking: HotRanking;
  counters: HotCounters;
  content: ContentStore;
  settings: Pick<HotSettings, 'cacheRefreshMs' | 'params'>;
  verbs: HotVerbs;
  /** The readers' preferences (the exclusions snapshot); absent: the list is the same for everyone. */
  exclusions?: ExclusionSource;
}

/** Registers the hot-ranking routes under `/v1` (see the module doc for who may call what). */
export const hotRoutes: FastifyPluginAsync<{ deps: HotRouteDeps }> = async (app, { deps }) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  viewRoute(r, deps);
  rankingRoutes(r, deps);
};

/** `POST /v1/views`: one view, or a batch with the service key. */
function viewRoute(r: TypedApp, deps: HotRouteDeps): void {
  const { access } = deps;
  r.post(
    '/views',
    {
      schema: {
        tags: ['hot'],
        summary: 'Record a view (or a batch, service key)',
        body: ViewsBody,
        headers: HotHeaders,
        response: { 200: { anyOf: [ViewResult, ViewsResult] }, ...LOOKUP_ERRORS, 413: ErrorEnvelope },
      },
    },
    async (req) => {
      const p = principalOf(req);
      const nowMs = nowOf(p, req, access);
      if (!Array.isArray(req.body)) {
        const view = toView(p, req.body, nowMs, access);
        const [outcome] = await deps.verbs.recordViews([view]);
        return ok(viewJson(view, outcome!));
      }
      requireService(p);
      const views = req.body.map((v, i) => toView(p, v, nowMs, access, `body/${i}`));
      const outcomes = await deps.verbs.recordViews(views);
      const summary: Record<ViewVerdict, number> = {
        counted: 0,
        repeat: 0,
        budget: 0,
        flagged: 0,
        expired: 0,
        unknown: 0,
      };
      for (const o of outcomes) summary[o.verdict]++;
      return ok({ results: outcomes.map((o, i) => viewJson(views[i]!, o)), summary });
    },
  );
}

/** `GET /v1/hot` (the cached ranking, as a reader sees it) and `GET /v1/hot/items/:id` (service key). */
function rankingRoutes(r: TypedApp, deps: HotRouteDeps): void {
  const { access } = deps;
  r.get(
    '/hot',
    {
      schema: {
        tags: ['hot'],
        summary: 'Hot items published within range',
        querystring: HotQuery,
        headers: FeedHeaders,
        response: { 200: HotResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const p = principalOf(req);
      const range = req.query.range ?? DEFAULT_RANGE;
      const rangeMs = parseRange(range)!; // the query schema's RANGE_PATTERN admits only 1h..30d
      const limit = req.query.limit ?? 20;
      const nowMs = nowOf(p, req, access);
      const reader = p.kind === 'reader' || req.headers['x-freshet-reader'] !== undefined ? readerOf(p, req) : null;
      const page =
        reader !== null && deps.exclusions
          ? await topFor(deps, reader, rangeMs, limit, nowMs)
          : await deps.ranking.top(rangeMs, limit, nowMs);
      return ok(hotJson(page, range, limit, deps.settings));
    },
  );

  r.get(
    '/hot/items/:id',
    {
      schema: {
        tags: ['hot'],
        summary: "One item's counters (service key)",
        params: IdParams,
        response: { 200: HotItemResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      requireServiceKey(req);
      const [item] = await deps.content.getItems([req.params.id], { fresh: true });
      if (!item) throw fail('NOT_FOUND', `no item ${req.params.id}`);
      const [c] = await deps.counters.counters([item.id]);
      return ok({ item: itemToJson(item), pv: c!.pv, uv: c!.uv, score: c!.score, suspicious: c!.suspicious });
    },
  );
}

/**
 * The hot list as `readerId` sees it: the snapshot's entries in range without the items the reader's
 * preferences hide in `hot`, cut to `limit` (one exclusions read; the snapshot is the cached one).
 */
async function topFor(deps: HotRouteDeps, readerId: string, rangeMs: number, limit: number, nowMs: number) {
  const ex = await deps.exclusions!.forReader(readerId, nowMs);
  let page: HotPage;
  if (!ex.needsItems('hot')) page = await deps.ranking.top(rangeMs, limit, nowMs);
  else {
    const all = await deps.ranking.top(rangeMs, Number.MAX_SAFE_INTEGER, nowMs);
    page = { ...all, entries: all.entries.filter((e) => ex.itemReason(e.item, 'hot') === null).slice(0, limit) };
  }
  // an item holding the reader's `warn` phrases is listed with `filtered` (docs/preferences.md)
  return { ...page, entries: page.entries.map((e) => ({ ...e, item: ex.serve(e.item, 'hot') })) };
}

/**
 * The view a request describes. A reader token views as its subject and may not name another visitor,
 * flag, or date a view; the service key must name the visitor.
 * @throws FreshetError FORBIDDEN, INVALID_INPUT.
 */
function toView(p: Principal, v: ViewInJson, nowMs: number, access: RequestAccess, field = 'body'): ViewInput {
  if (p.kind === 'reader') {
    if (v.visitor_id !== undefined && v.visitor_id !== p.readerId)
      throw fail(
        'FORBIDDEN',
        `a reader token records views only as its own reader (${p.readerId}); leave ${field}/visitor_id out`,
      );
    if (v.flagged !== undefined || v.at !== undefined)
      throw fail('FORBIDDEN', `${field}/flagged and ${field}/at need the service key`);
    return { itemId: v.item_id, visitorId: p.readerId, nowMs, ...(v.feed ? { feed: v.feed } : {}) };
  }
  if (v.visitor_id === undefined)
    throw fail('INVALID_INPUT', `${field}/visitor_id is required with the service key: name the visitor of the view`);
  const at = v.at === undefined ? nowMs : timeOf(v.at, `${field}/at`, access);
  return {
    itemId: v.item_id,
    visitorId: v.visitor_id,
    nowMs: at,
    flagged: v.flagged === true,
    ...(v.feed ? { feed: v.feed } : {}),
  };
}

function viewJson(v: ViewInput, o: Outcome) {
  return {
    item_id: v.itemId,
    visitor_id: v.visitorId,
    counted: o.verdict === 'counted',
    verdict: o.verdict,
    pv: o.pv,
    uv: o.uv,
    score: o.score,
  };
}

/** `{filtered}` when the served item holds the reader's `warn` phrases, else nothing. */
function filteredOf(item: ServedItem): { filtered?: string[] } {
  return item.filtered?.length ? { filtered: [...item.filtered] } : {};
}

function hotJson(page: HotPage, range: string, limit: number, settings: HotRouteDeps['settings']) {
  return {
    range,
    limit,
    computed_at: Math.floor(page.computedAtMs / 1000),
    computed_at_ms: page.computedAtMs,
    refresh_s: Math.round(settings.cacheRefreshMs / 1000),
    params: settings.params,
    items: page.entries.map((e) => ({
      id: e.item.id,
      title: e.item.title,
      url: e.item.url,
      author_id: e.item.authorId,
      published_at: Math.floor(e.item.publishedAt / 1000),
      pv: e.pv,
      uv: e.uv,
      score: e.score,
      suspicious: e.suspicious,
      ...filteredOf(e.item),
    })),
    suspicious: page.suspicious,
  };
}
