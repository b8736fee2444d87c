/**
 * Read markers, a Fastify plugin under `/v1`: `GET /users/:id/markers` — how far the reader has read
 * each of its timelines, with the unread count of each (reader token for itself, or the service key).
 * Each marker is moved by its own room's route (`PUT /users/:id/markers/notifications`, …); this read
 * spans rooms, so it is the app's.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { readerOfRequest, type RequestAccess } from '../../kernel/http/access.js';
import { Envelope, IdParams, ok, ROUTE_ERRORS } from '../../kernel/http/schemas.js';
import { MarkerOut } from '../../notifications/schemas.js';
import { markerJson } from '../../notifications/schemas.js';
import type { Notifications } from '../../notifications/service.js';
import type { FollowingTimeline } from '../../following/service.js';
import { TimelineMarkerOut, timelineMarkerJson } from '../../following/schemas.js';

const MarkersResult = Envelope(
  Type.Object({ user_id: Type.String(), following: TimelineMarkerOut, notifications: MarkerOut }),
);
/** What the route reads. */
export interface MarkerRouteDeps {
  access: RequestAccess;
  notifications: Pick<Notifications, 'marker'>;
  timeline: Pick<FollowingTimeline, 'marker'>;
}

/** Registers `GET /users/:id/markers`. */
export const markerRoutes: FastifyPluginAsync<{ deps: MarkerRouteDeps }> = async (app, { deps }) => {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/users/:id/markers',
    {
      schema: {
        tags: ['notifications'],
        summary: "The reader's read markers, with unread counts",
        params: IdParams,
        response: { 200: MarkersResult, ...ROUTE_ERRORS },
      },
    },
    async (req) => {
      const readerId = readerOfRequest(req, req.params.id);
      const [following, notifications] = await Promise.all([
        deps.timeline.marker(readerId, deps.access.clock.now()),
        deps.notifications.marker(readerId),
      ]);
      return ok({
        user_id: readerId,
        following: timelineMarkerJson(following),
        notifications: markerJson(notifications),
      });
    },
  );
};
