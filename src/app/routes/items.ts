/**
 * Items API, a Fastify plugin under `/v1`: `POST /items` (idempotent upsert of a batch, all-or-nothing,
 * published to every feed by the `publishItems` use case), `GET /items/:id`, `DELETE /items/:id` (soft
 * delete: the item leaves every feed, cached pages included; the id is never reused — publishing it
 * again is 409 / 40901 ITEM_DELETED). Writes need the service key.
 *
 * Beyond the schema, every item is checked here before anything is written: `published_at` within
 * the accepted time range (src/kernel/time-range.ts), `url` an absolute http(s) URL, `embedding`
 * normalisable (its squared length a finite positive double, so `v / ‖v‖` is a unit vector: 256 × 1e308
 * overflows to ∞, 256 × 1e-320 underflows to 0).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { fail } from '../../kernel/errors.js';
import { itemToJson, parsePublishedAt } from '../../kernel/items/item.js';
import type { ContentStore } from '../../kernel/items/content-store.js';
import { nowOf, principalOf, requireService, timeOf, type RequestAccess } from '../../kernel/http/access.js';
import { DeleteResult, ErrorEnvelope, IdParams, ItemResult, ItemsBody, NowHeaders, ok, UpsertResult, type ItemInJson } from '../../kernel/http/schemas.js';
import { normalize } from '../../discover/embedding.js';
import type { PublishInput, UseCases } from '../use-cases.js';

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope, 503: ErrorEnvelope };

/**
 * Converts a validated request item; every item is checked before anything is written.
 * @throws FreshetError `INVALID_INPUT` naming `body/<index>/<field>`: `published_at` unreadable or
 *   outside the time range, `url` not an absolute http(s) URL, `embedding` not normalisable.
 */
export function toPublishInput(json: ItemInJson, index: number, access: Pick<RequestAccess, 'clock' | 'futureSkewMs'>): PublishInput {
  const publishedAt = parsePublishedAt(json.published_at);
  if (publishedAt === null) {
    throw fail('INVALID_INPUT', `body/${index}/published_at ${JSON.stringify(json.published_at).slice(0, 60)} is not a time; send epoch seconds (e.g. 1772791200) or ISO 8601 (e.g. "2026-03-06T10:00:00Z")`);
  }
  timeOf(publishedAt, `body/${index}/published_at`, access, 's');
  if (json.url != null && !isHttpUrl(json.url)) {
    throw fail('INVALID_INPUT', `body/${index}/url ${JSON.stringify(json.url).slice(0, 60)} is not an absolute http:// or https:// URL with a host`);
  }
  if (json.embedding !== undefined && !isNormalisable(json.embedding)) {
    throw fail('INVALID_INPUT', `body/${index}/embedding cannot be normalised: its squared length overflows to infinity or underflows to 0 (components like 1e308 or 1e-320); send finite components of ordinary size, e.g. the unit vector`);
  }
  return {
    id: json.id,
    authorId: json.author_id,
    title: json.title,
    text: json.text ?? '',
    url: json.url ?? null,
    tags: json.tags ?? [],
    publishedAt,
    popularity: json.popularity ?? 0,
    embedding: json.embedding,
  };
}

/** True for an absolute http(s) URL with a host. */
function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
}

/**
 * True when the engine's own `normalize` turns `v` into a unit vector. Non-finite components and all
 * zeros fail too (the discover capability rejects those with its own message first).
 */
function isNormalisable(v: readonly number[]): boolean {
  if (!v.every(Number.isFinite) || v.every((x) => x === 0)) return true; // the embedding check names these
  const u = normalize(v);
  let s = 0;
  for (let i = 0; i < u.length; i++) s += u[i]! * u[i]!;
  return Math.abs(s - 1) < 1e-3;
}

/** What the routes call. */
export interface ItemRouteDeps {
  access: RequestAccess;
  content: ContentStore;
  useCases: Pick<UseCases, 'publishItems' | 'deleteItem'>;
}

/** Registers the items routes (see the module doc). */
export const itemRoutes: FastifyPluginAsync<{ deps: ItemRouteDeps }> = async (app, { deps }) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { access, content, useCases } = deps;

  r.post('/items', { schema: { tags: ['items'], summary: 'Upsert items (service key)', body: ItemsBody, headers: NowHeaders, response: { 200: UpsertResult, ...errors, 409: ErrorEnvelope, 413: ErrorEnvelope } } }, async (req) => {
    const p = principalOf(req);
    requireService(p);
    const nowMs = nowOf(p, req, access); // X-Freshet-Now: replays publish on virtual time
    const items = req.body.map((json, i) => toPublishInput(json, i, access));
    return ok(await useCases.publishItems(items, nowMs));
  });

  r.get('/items/:id', { schema: { tags: ['items'], summary: 'One live item', params: IdParams, response: { 200: ItemResult, ...errors } } }, async (req) => {
    principalOf(req);
    const [item] = await content.getItems([req.params.id], { fresh: true }); // the item API reads the store of record
    if (!item) throw fail('NOT_FOUND', `no item ${req.params.id}`);
    return ok(itemToJson(item));
  });

  r.delete('/items/:id', { schema: { tags: ['items'], summary: 'Soft-delete an item (service key)', params: IdParams, response: { 200: DeleteResult, ...errors } } }, async (req) => {
    requireService(principalOf(req));
    const deleted = await useCases.deleteItem(req.params.id, access.clock.now());
    if (!deleted) throw fail('NOT_FOUND', `no live item ${req.params.id}`);
    return ok({ id: req.params.id, deleted });
  });
};
