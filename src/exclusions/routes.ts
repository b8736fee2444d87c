/**
 * Exclusion routes (docs/exclusions.md). The reader is the token's subject (or `X-Freshet-Reader` with the
 * service key), never a body field; `X-Freshet-Now` (service key) sets the virtual time.
 * - `POST /v1/engagements` `{item_id, kind: reply|like|share}` — the item leaves the reader's feeds; or a
 *   batch (an array of 1..1000 of them, the request's reader's), checked whole and written all or nothing.
 * - `DELETE /v1/engagements/:item_id?kind=like` — undoes it (an unlike; its notification is taken back
 *   within the grouping window).
 * - `POST /v1/feedback` `{item_id, kind: "not_interested"}` — the item leaves the reader's feeds for
 *   good and its author is down-weighted for the reader for `FRESHET_NOT_INTERESTED_AUTHOR_DAYS`.
 * - `DELETE /v1/feedback/:item_id` (`?kind=not_interested`) — undoes it.
 * - `GET /v1/exclusions` — what the reader is excluded from (recent views, engaged, not interested, blocks).
 * - `GET` / `PUT /v1/users/:id/preferences` — the reader's preferences (docs/preferences.md); the reader's
 *   token for itself, or the service key. A refused document is 400 naming the field, and nothing is stored.
 * - `PATCH /v1/users/:id/preferences` — edits them entry by entry (`add_muted_words`, `remove_muted_words`,
 *   `add_muted_authors`, `remove_muted_authors`, and the scalar fields), atomically: concurrent edits all land.
 * Unknown or deleted item → 404 (40401), nothing written.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type RequestAccess, readerRequest, readerOfRequest } from '../kernel/http/access.js';
import {
  FeedHeaders,
  IdParams,
  NowHeaders,
  ok,
  ReaderHeaders,
  LOOKUP_ERRORS,
  type TypedApp,
} from '../kernel/http/schemas.js';
import type { EngagementKind, FeedbackKind } from './domain.js';
import type { EngagementRecord } from './ports.js';
import {
  EngagementDeleteResult,
  EngagementParams,
  EngagementQuery,
  EngagementResult,
  EngagementsBody,
  EngagementsResult,
  FeedbackBody,
  FeedbackDeleteResult,
  FeedbackParams,
  FeedbackQuery,
  FeedbackResult,
  ExclusionListResult,
  PreferencesDoc,
  PreferencesPatch,
  PreferencesResult,
} from './schemas.js';
import type { PreferencesJson } from './preferences.js';
import type { ExclusionList } from './service.js';

/** What the routes call: the app's use cases (src/use-cases/verbs.ts), which also reach other capabilities. */
/** The verbs the routes write through (src/use-cases/verbs.ts `UseCases` has them: they also reach other capabilities). */
export interface ExclusionVerbs {
  recordEngagement(
    readerId: string,
    itemId: string,
    kind: EngagementKind,
    nowMs: number,
  ): Promise<{ created: boolean }>;
  /** A batch, all or nothing (use case `recordEngagements`): per engagement, whether it is new. */
  recordEngagements(batch: readonly EngagementRecord[]): Promise<boolean[]>;
  recordFeedback(
    readerId: string,
    itemId: string,
    kind: FeedbackKind,
    nowMs: number,
  ): Promise<{ created: boolean; authorId: string; authorPenaltyUntilMs: number }>;
  undoFeedback(readerId: string, itemId: string, kind: FeedbackKind): Promise<{ removed: boolean }>;
  undoEngagement(readerId: string, itemId: string, kind: EngagementKind, nowMs: number): Promise<{ removed: boolean }>;
  /** The reader's preferences (use case `preferences`). */
  preferences(readerId: string, nowMs: number): Promise<PreferencesJson>;
  /** Replaces them (use case `setPreferences`, the one check of the document). */
  setPreferences(readerId: string, body: unknown, nowMs: number): Promise<PreferencesJson>;
  /** Edits them entry by entry, atomically (use case `patchPreferences`). */
  patchPreferences(readerId: string, body: unknown, nowMs: number): Promise<PreferencesJson>;
}

/** What the routes call: the app's use cases for writes and preferences, the exclusions for the list. */
export interface ExclusionRouteDeps {
  access: RequestAccess;
  verbs: ExclusionVerbs;
  /** The reader's exclusions, for inspection (`Exclusions.list`). */
  exclusions: { list(readerId: string, nowMs: number): Promise<ExclusionList> };
}

/** Registers the exclusion routes (under `/v1`). */
export const exclusionRoutes: FastifyPluginAsync<{ deps: ExclusionRouteDeps }> = async (app, { deps }) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  recordRoutes(r, deps);
  undoRoutes(r, deps);
  listRoute(r, deps);
  preferenceRoutes(r, deps);
};

/** `POST /v1/engagements` and `POST /v1/feedback`. */
function recordRoutes(r: TypedApp, deps: ExclusionRouteDeps): void {
  const { access } = deps;
  r.post(
    '/engagements',
    {
      schema: {
        tags: ['exclusions'],
        summary: "Record a reply, like or share (or a batch of the reader's)",
        body: EngagementsBody,
        headers: FeedHeaders,
        response: { 200: { anyOf: [EngagementResult, EngagementsResult] }, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access);
      if (!Array.isArray(req.body)) {
        const { item_id, kind } = req.body;
        const { created } = await deps.verbs.recordEngagement(readerId, item_id, kind, nowMs);
        return ok({ reader_id: readerId, item_id, kind, created });
      }
      const batch = req.body.map((e) => ({ readerId, itemId: e.item_id, kind: e.kind, nowMs }));
      const created = await deps.verbs.recordEngagements(batch);
      const results = req.body.map((e, i) => ({ reader_id: readerId, ...e, created: created[i]! }));
      const n = created.filter(Boolean).length;
      return ok({ results, summary: { created: n, existing: created.length - n } });
    },
  );

  r.post(
    '/feedback',
    {
      schema: {
        tags: ['exclusions'],
        summary: 'Not interested in an item, or show less like it',
        body: FeedbackBody,
        headers: FeedHeaders,
        response: { 200: FeedbackResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access);
      const { item_id, kind } = req.body;
      const res = await deps.verbs.recordFeedback(readerId, item_id, kind, nowMs);
      const until = Math.floor(res.authorPenaltyUntilMs / 1000);
      return ok({
        reader_id: readerId,
        item_id,
        kind,
        created: res.created,
        author_id: res.authorId,
        author_penalty_until: until,
      });
    },
  );
}

/** `DELETE /v1/engagements/:item_id` and `DELETE /v1/feedback/:item_id`. */
function undoRoutes(r: TypedApp, deps: ExclusionRouteDeps): void {
  const { access } = deps;
  r.delete(
    '/engagements/:item_id',
    {
      schema: {
        tags: ['exclusions'],
        summary: 'Undo a reply, like or share',
        params: EngagementParams,
        querystring: EngagementQuery,
        headers: FeedHeaders,
        response: { 200: EngagementDeleteResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access);
      const { kind } = req.query;
      const { removed } = await deps.verbs.undoEngagement(readerId, req.params.item_id, kind, nowMs);
      return ok({ reader_id: readerId, item_id: req.params.item_id, kind, removed });
    },
  );

  r.delete(
    '/feedback/:item_id',
    {
      schema: {
        tags: ['exclusions'],
        summary: 'Undo a "not interested" or a "show less"',
        params: FeedbackParams,
        querystring: FeedbackQuery,
        headers: ReaderHeaders,
        response: { 200: FeedbackDeleteResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const readerId = readerOfRequest(req);
      const kind = req.query.kind ?? 'not_interested';
      const { removed } = await deps.verbs.undoFeedback(readerId, req.params.item_id, kind);
      return ok({ reader_id: readerId, item_id: req.params.item_id, kind, removed });
    },
  );
}

/** `GET /v1/exclusions`. */
function listRoute(r: TypedApp, deps: ExclusionRouteDeps): void {
  const { access } = deps;
  r.get(
    '/exclusions',
    {
      schema: {
        tags: ['exclusions'],
        summary: "The reader's exclusions: recent views, engaged, not interested, blocks",
        headers: FeedHeaders,
        response: { 200: ExclusionListResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access);
      const l = await deps.exclusions.list(readerId, nowMs);
      return ok({
        reader_id: readerId,
        recently_viewed: l.recentViews,
        engaged: l.engaged,
        not_interested: l.notInterested.map((n) => ({
          item_id: n.itemId,
          author_id: n.authorId,
          at: Math.floor(n.atMs / 1000),
        })),
        blocked_authors: l.blockedAuthors,
      });
    },
  );
}

/** `GET`, `PUT` and `PATCH /v1/users/:id/preferences`. */
function preferenceRoutes(r: TypedApp, deps: ExclusionRouteDeps): void {
  const { access } = deps;
  r.get(
    '/users/:id/preferences',
    {
      schema: {
        tags: ['exclusions'],
        summary: "A reader's preferences: muted words and authors, languages, max per author",
        params: IdParams,
        headers: NowHeaders,
        response: { 200: PreferencesResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access, req.params.id);
      return ok({ reader_id: readerId, ...(await deps.verbs.preferences(readerId, nowMs)) });
    },
  );

  r.put(
    '/users/:id/preferences',
    {
      schema: {
        tags: ['exclusions'],
        summary: "Replace a reader's preferences (visible to the next page of every feed)",
        params: IdParams,
        headers: NowHeaders,
        body: PreferencesDoc,
        response: { 200: PreferencesResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access, req.params.id);
      return ok({ reader_id: readerId, ...(await deps.verbs.setPreferences(readerId, req.body, nowMs)) });
    },
  );

  r.patch(
    '/users/:id/preferences',
    {
      schema: {
        tags: ['exclusions'],
        summary: "Edit a reader's preferences entry by entry: add or remove muted words and authors (atomic)",
        params: IdParams,
        headers: NowHeaders,
        body: PreferencesPatch,
        response: { 200: PreferencesResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access, req.params.id);
      return ok({ reader_id: readerId, ...(await deps.verbs.patchPreferences(readerId, req.body, nowMs)) });
    },
  );
}
