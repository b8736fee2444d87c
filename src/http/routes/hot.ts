/**
 * Hot-ranking routes (note 2):
 * - `POST /v1/views` — one view `{item_id}` with a reader token (the visitor is the token's subject),
 *   or with the service key `{item_id, visitor_id, flagged?, at?}` or a batch (array) of them for
 *   backfills. Always 200 when accepted: `data.counted` says whether the view counted, `data.verdict`
 *   why not. Unknown item → 404 (40401).
 * - `GET /v1/hot?range=72h&limit=20` — the cached ranking (any token).
 * - `GET /v1/hot/items/:id` — one item's counters, suspicious views included (service key).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { fail } from '../../domain/errors.js';
import { itemToJson } from '../../domain/item.js';
import { DEFAULT_RANGE, parseRange, type ViewVerdict } from '../../domain/hot.js';
import type { ViewInput, ViewResult as Outcome } from '../../ports/hot-counters.js';
import type { Principal } from '../../services/tokens.js';
import type { HotPage } from '../../services/hot-ranking.js';
import type { Freshet } from '../../container.js';
import { nowOf, principalOf, requireService } from '../access.js';
import { viewSignals } from '../../services/discover-embeddings.js';
import { ErrorEnvelope, IdParams } from '../schemas.js';
import { HotHeaders, HotItemResult, HotQuery, HotResult, MAX_HOT_LIMIT, ViewResult, ViewsBody, ViewsResult, type ViewInJson } from '../hot-schemas.js';

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 503: ErrorEnvelope };
const ok = <T>(data: T) => ({ code: 0 as const, msg: 'success' as const, data });

/** Registers the hot-ranking routes on `app` (see the module doc for who may call what). */
export async function hotRoutes(app: FastifyInstance, f: Freshet): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post('/v1/views', { schema: { tags: ['hot'], summary: 'Record a view (or a batch, service key)', body: ViewsBody, headers: HotHeaders, response: { 200: { anyOf: [ViewResult, ViewsResult] }, ...errors, 413: ErrorEnvelope } } }, async (req) => {
    const p = await principalOf(req, f.tokens);
    const nowMs = nowOf(p, req, f.clock);
    if (!Array.isArray(req.body)) {
      const view = toView(p, req.body, nowMs);
      const outcome = await f.hot.recordView(view);
      await Promise.all([
        f.discover.embeddings.addSignals(viewSignals([view], [outcome])), // note 3: the reader embedding
        recordRecentViews(f, [view], [outcome]), // note 5: the reader's recent views
      ]);
      return ok(viewJson(view, outcome));
    }
    requireService(p);
    const views = req.body.map((v) => toView(p, v, nowMs));
    const outcomes = await f.hot.recordViews(views);
    await Promise.all([
      f.discover.embeddings.addSignals(viewSignals(views, outcomes)), // note 3: the reader embedding
      recordRecentViews(f, views, outcomes), // note 5: the reader's recent views
    ]);
    const summary: Record<ViewVerdict, number> = { counted: 0, repeat: 0, budget: 0, flagged: 0, expired: 0, unknown: 0 };
    for (const o of outcomes) summary[o.verdict]++;
    return ok({ results: outcomes.map((o, i) => viewJson(views[i]!, o)), summary });
  });

  r.get('/v1/hot', { schema: { tags: ['hot'], summary: 'Hot items published within range', querystring: HotQuery, headers: HotHeaders, response: { 200: HotResult, ...errors } } }, async (req) => {
    const p = await principalOf(req, f.tokens);
    const range = req.query.range ?? DEFAULT_RANGE;
    const rangeMs = parseRange(range);
    if (rangeMs === null) throw fail('INVALID_INPUT', 'range must be <n>h or <n>d between 1h and 30d (e.g. 72h)');
    const limit = req.query.limit === undefined ? 20 : Number(req.query.limit);
    if (!(limit >= 1 && limit <= MAX_HOT_LIMIT)) throw fail('INVALID_INPUT', `limit must be an integer in 1..${MAX_HOT_LIMIT}`);
    return ok(hotJson(await f.hot.hot(rangeMs, limit, nowOf(p, req, f.clock)), range, limit, f));
  });

  r.get('/v1/hot/items/:id', { schema: { tags: ['hot'], summary: "One item's counters (service key)", params: IdParams, response: { 200: HotItemResult, ...errors } } }, async (req) => {
    requireService(await principalOf(req, f.tokens));
    const [item] = await f.content.getItems([req.params.id]);
    if (!item) throw fail('NOT_FOUND', `no item ${req.params.id}`);
    const [c] = await f.hotCounters.counters([item.id]);
    return ok({ item: itemToJson(item), pv: c!.pv, uv: c!.uv, score: c!.score, suspicious: c!.suspicious });
  });
}

/**
 * Note 5: each counted view also goes to the visitor's recent-views LIST (the visitor is the reader),
 * in request order; a batch is recorded at its latest view time.
 */
function recordRecentViews(f: Freshet, views: readonly ViewInput[], outcomes: readonly Outcome[]): Promise<void> {
  const counted = views.filter((_, i) => outcomes[i]!.verdict === 'counted');
  if (counted.length === 0) return Promise.resolve();
  const at = Math.max(...counted.map((v) => v.nowMs));
  return f.exclusions.recordViews(counted.map((v) => ({ readerId: v.visitorId, itemId: v.itemId })), at);
}

/**
 * The view a request describes. A reader token views as its subject and may not name another visitor,
 * flag, or date a view; the service key must name the visitor.
 * @throws FreshetError FORBIDDEN, INVALID_INPUT.
 */
function toView(p: Principal, v: ViewInJson, nowMs: number): ViewInput {
  if (p.kind === 'reader') {
    if (v.visitor_id !== undefined && v.visitor_id !== p.readerId) throw fail('FORBIDDEN', 'a reader token records views only as its own reader');
    if (v.flagged !== undefined || v.at !== undefined) throw fail('FORBIDDEN', 'flagged and at need the service key');
    return { itemId: v.item_id, visitorId: p.readerId, nowMs };
  }
  if (v.visitor_id === undefined) throw fail('INVALID_INPUT', 'with the service key, name the visitor in visitor_id');
  return { itemId: v.item_id, visitorId: v.visitor_id, nowMs: v.at ?? nowMs, flagged: v.flagged === true };
}

function viewJson(v: ViewInput, o: Outcome) {
  return { item_id: v.itemId, visitor_id: v.visitorId, counted: o.verdict === 'counted', verdict: o.verdict, pv: o.pv, uv: o.uv, score: o.score };
}

function hotJson(page: HotPage, range: string, limit: number, f: Freshet) {
  return {
    range,
    limit,
    computed_at: Math.floor(page.computedAtMs / 1000),
    computed_at_ms: page.computedAtMs,
    refresh_s: Math.round(f.config.hot.cacheRefreshMs / 1000),
    params: f.config.hot.params,
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
    })),
    suspicious: page.suspicious,
  };
}

