/**
 * Items API: `POST /v1/items` (idempotent upsert of a batch, all-or-nothing), `GET /v1/items/:id`,
 * `DELETE /v1/items/:id` (soft delete: the item leaves every feed, cached pages included).
 * Writes need the service key.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { fail } from '../../domain/errors.js';
import { itemToJson, parsePublishedAt } from '../../domain/item.js';
import type { ItemInput } from '../../ports/content-store.js';
import type { Freshet } from '../../container.js';
import { nowOf, principalOf, requireService } from '../access.js';
import { DeleteResult, ErrorEnvelope, IdParams, ItemResult, ItemsBody, UpsertResult, type ItemInJson } from '../schemas.js';

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope };

/** Converts a validated request item; every item is checked before anything is written. */
export function toItemInput(json: ItemInJson, index: number): ItemInput {
  const publishedAt = parsePublishedAt(json.published_at);
  if (publishedAt === null) throw fail('INVALID_INPUT', `body/${index}/published_at must be epoch seconds or ISO 8601`);
  return {
    id: json.id,
    authorId: json.author_id,
    title: json.title,
    text: json.text ?? '',
    url: json.url ?? null,
    tags: json.tags ?? [],
    publishedAt,
    popularity: json.popularity ?? 0,
  };
}

export async function itemRoutes(app: FastifyInstance, f: Freshet): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post('/v1/items', { schema: { tags: ['items'], summary: 'Upsert items (service key)', body: ItemsBody, response: { 200: UpsertResult, ...errors, 413: ErrorEnvelope } } }, async (req) => {
    const p = await principalOf(req, f.tokens);
    requireService(p);
    const items = req.body.map(toItemInput);
    const ids = new Set(items.map((i) => i.id));
    if (ids.size !== items.length) throw fail('INVALID_INPUT', 'body holds the same item id twice');
    const now = nowOf(p, req, f.clock); // X-Freshet-Now: replays publish on virtual time
    // note 3: embeddings are checked, then written before their items (an orphan row is invisible)
    await f.discover.embeddings.store(f.discover.embeddings.records(items, req.body.map((b) => b.embedding)), now);
    const result = await f.content.upsertItems(items, now);
    await f.hot.itemsChanged(items); // an edited published_at reaches the hot counters
    await f.following.timeline.publish(items.map((i) => i.id), now); // note 4: outbox + fan-out job (new items only)
    return { code: 0 as const, msg: 'success' as const, data: result };
  });

  r.get('/v1/items/:id', { schema: { tags: ['items'], summary: 'One live item', params: IdParams, response: { 200: ItemResult, ...errors } } }, async (req) => {
    await principalOf(req, f.tokens);
    const [item] = await f.content.getItems([req.params.id]);
    if (!item) throw fail('NOT_FOUND', `no item ${req.params.id}`);
    return { code: 0 as const, msg: 'success' as const, data: itemToJson(item) };
  });

  r.delete('/v1/items/:id', { schema: { tags: ['items'], summary: 'Soft-delete an item (service key)', params: IdParams, response: { 200: DeleteResult, ...errors } } }, async (req) => {
    requireService(await principalOf(req, f.tokens));
    const deleted = await f.content.deleteItem(req.params.id, f.clock.now());
    if (!deleted) throw fail('NOT_FOUND', `no live item ${req.params.id}`);
    await f.hot.itemDeleted(req.params.id); // and leaves the hot ranking
    return { code: 0 as const, msg: 'success' as const, data: { id: req.params.id, deleted } };
  });
}
