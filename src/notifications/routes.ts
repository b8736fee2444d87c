/**
 * Notification routes, a Fastify plugin under `/v1` (docs/notifications.md):
 * - `GET /feeds/notifications?limit=&max_id=` — the reader's grouped notifications, newest group first,
 *   with `read` per group and the unread count. The reader is the token's subject (or `X-Freshet-Reader`
 *   with the service key).
 * - `POST /notifications` (service key) — an event Freshet cannot see: `mention` or `app.<name>`.
 * - `PUT /users/:id/markers/notifications` — `{last_read_id, force?}`: the reader has read up to there
 *   (forward only unless `force`); reader token for itself, or the service key.
 * (`GET /users/:id/markers`, with the following timeline's marker too, is the app's: src/server/routes/markers.ts.)
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { readerRequest, serviceRequest, type RequestAccess } from '../kernel/http/access.js';
import {
  ErrorEnvelope,
  FeedHeaders,
  IdParams,
  NowHeaders,
  ok,
  ROUTE_ERRORS,
  type TypedApp,
} from '../kernel/http/schemas.js';
import {
  groupJson,
  HookBody,
  HookResult,
  markerJson,
  MarkerBody,
  MarkerResult,
  NotificationsQuery,
  NotificationsResult,
} from './schemas.js';
import type { Notifications } from './service.js';

/** What the routes call. */
export interface NotificationRouteDeps {
  access: RequestAccess;
  notifications: Pick<Notifications, 'page' | 'hook' | 'setMarker'>;
}

/** Registers the notification routes (see the module doc). */
export const notificationRoutes: FastifyPluginAsync<{ deps: NotificationRouteDeps }> = async (app, { deps }) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  feedRoute(r, deps);
  hookRoute(r, deps);
  markerRoute(r, deps);
};

/** `GET /v1/feeds/notifications`. */
function feedRoute(r: TypedApp, { access, notifications }: NotificationRouteDeps): void {
  r.get(
    '/feeds/notifications',
    {
      schema: {
        tags: ['notifications'],
        summary: 'Grouped notifications, newest group first',
        querystring: NotificationsQuery,
        headers: FeedHeaders,
        response: { 200: NotificationsResult, ...ROUTE_ERRORS },
      },
    },
    async (req) => {
      const { readerId } = readerRequest(req, access);
      const maxId = req.query.max_id === undefined ? undefined : Number(req.query.max_id);
      const page = await notifications.page(readerId, {
        limit: req.query.limit ?? 20,
        ...(maxId !== undefined ? { maxId } : {}),
      });
      return ok({
        groups: page.groups.map(groupJson),
        next_max_id: page.nextMaxId === null ? null : String(page.nextMaxId),
        unread_count: page.unread.count,
        unread_capped: page.unread.capped,
      });
    },
  );
}

/** `POST /v1/notifications` (service key). */
function hookRoute(r: TypedApp, { access, notifications }: NotificationRouteDeps): void {
  r.post(
    '/notifications',
    {
      schema: {
        tags: ['notifications'],
        summary: "Send a notification Freshet cannot see (service key): a mention, or the application's own type",
        body: HookBody,
        headers: NowHeaders,
        response: { 200: HookResult, ...ROUTE_ERRORS, 413: ErrorEnvelope },
      },
    },
    async (req) => {
      const { nowMs } = serviceRequest(req, access);
      const b = req.body;
      const e = await notifications.hook(
        {
          recipientId: b.recipient_id,
          type: b.type,
          actorId: b.actor_id,
          itemId: b.item_id ?? null,
          ...(b.data !== undefined ? { data: b.data } : {}),
        },
        nowMs,
      );
      return ok({ delivered: e !== null, id: e ? String(e.id) : null, group_key: e?.groupKey ?? null });
    },
  );
}

/** `PUT /v1/users/:id/markers/notifications`. */
function markerRoute(r: TypedApp, { access, notifications }: NotificationRouteDeps): void {
  r.put(
    '/users/:id/markers/notifications',
    {
      schema: {
        tags: ['notifications'],
        summary: 'Move the notifications marker (forward only unless force)',
        params: IdParams,
        body: MarkerBody,
        headers: NowHeaders,
        response: { 200: MarkerResult, ...ROUTE_ERRORS },
      },
    },
    async (req) => {
      const { readerId, nowMs } = readerRequest(req, access, req.params.id);
      const m = await notifications.setMarker(readerId, Number(req.body.last_read_id), req.body.force ?? false, nowMs);
      return ok({ moved: m.moved, ...markerJson(m) });
    },
  );
}
