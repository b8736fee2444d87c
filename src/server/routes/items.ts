/**
 * Items API, a Fastify plugin under `/v1`: `POST /items` (idempotent upsert of a batch, all-or-nothing,
 * published to every feed by the `publishItems` use case), `GET /items/:id`, `DELETE /items/:id` (soft
 * delete: the item leaves every feed, cached pages included; the id is never reused — publishing it
 * again is 409 / 40901 ITEM_DELETED). Writes need the service key.
 *
 * The schema checks the JSON shape; the items themselves are checked by the one check of published input
 * that every edge reaches through the use case (src/kernel/items/validate.ts). This route only reads
 * `published_at` (epoch seconds or ISO 8601) and names the use case's fields as the JSON body has them:
 * `items[3].authorId` becomes `body/3/author_id`, like the schema's own messages.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { fail, FreshetError } from '../../kernel/errors.js';
import { itemToJson, parsePublishedAt } from '../../kernel/items/item.js';
import type { ContentStore } from '../../kernel/items/content-store.js';
import type { PublishInput } from '../../kernel/items/validate.js';
import { assertTimeInRange, MAX_TIME_MS } from '../../kernel/time-range.js';
import { principalOf, type RequestAccess, serviceRequest, requireServiceKey } from '../../kernel/http/access.js';
import {
  DeleteResult,
  ErrorEnvelope,
  IdParams,
  ItemResult,
  ItemsBody,
  NowHeaders,
  ok,
  UpsertResult,
  type ItemInJson,
  LOOKUP_ERRORS,
  type TypedApp,
} from '../../kernel/http/schemas.js';
import type { UseCases } from '../../use-cases/verbs.js';

/**
 * Converts a schema-valid request item to the use case's input (times in ms).
 * @throws FreshetError `INVALID_INPUT` naming `body/<index>/published_at` when it is not a time.
 */
export function toPublishInput(json: ItemInJson, index: number): PublishInput {
  const publishedAt = parsePublishedAt(json.published_at);
  if (publishedAt === null) {
    throw fail(
      'INVALID_INPUT',
      `body/${index}/published_at ${JSON.stringify(json.published_at).slice(0, 60)} is not a time; send epoch seconds (e.g. 1772791200) or ISO 8601 (e.g. "2026-03-06T10:00:00Z")`,
    );
  }
  // the one unit mistake of the JSON edge (seconds expected): refused here with a hint, the range itself by the item check
  if (publishedAt > MAX_TIME_MS && publishedAt / 1000 <= MAX_TIME_MS) {
    assertTimeInRange(publishedAt, `body/${index}/published_at`, publishedAt, 0, 's');
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
    ...(json.lang === undefined ? {} : { lang: json.lang }),
    embedding: json.embedding,
  };
}

/**
 * A refusal of the one item check, with its field named as the JSON body has it (`items[3].publishedAt`
 * → `body/3/published_at`, in epoch seconds' terms); other errors unchanged.
 */
export function asBodyRefusal(err: unknown): unknown {
  if (!(err instanceof FreshetError)) return err;
  const m = /^items\[(\d+)\]\.([A-Za-z]+)/.exec(err.message);
  if (!m) return err;
  const field = m[2]!.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return new FreshetError(err.name_, `body/${m[1]}/${field}${err.message.slice(m[0].length)}`, err.details);
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
  publishRoute(r, deps);
  itemRoute(r, deps);
};

/** `POST /v1/items` (service key). */
function publishRoute(r: TypedApp, { access, useCases }: ItemRouteDeps): void {
  r.post(
    '/items',
    {
      schema: {
        tags: ['items'],
        summary: 'Upsert items (service key)',
        body: ItemsBody,
        headers: NowHeaders,
        response: { 200: UpsertResult, ...LOOKUP_ERRORS, 409: ErrorEnvelope, 413: ErrorEnvelope },
      },
    },
    async (req) => {
      const { nowMs } = serviceRequest(req, access); // X-Freshet-Now: replays publish on virtual time
      const items = req.body.map((json, i) => toPublishInput(json, i));
      try {
        return ok(await useCases.publishItems(items, nowMs));
      } catch (err) {
        throw asBodyRefusal(err);
      }
    },
  );
}

/** `GET /v1/items/:id` and `DELETE /v1/items/:id` (service key). */
function itemRoute(r: TypedApp, { access, content, useCases }: ItemRouteDeps): void {
  r.get(
    '/items/:id',
    {
      schema: {
        tags: ['items'],
        summary: 'One live item',
        params: IdParams,
        response: { 200: ItemResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      principalOf(req); // any valid token may read an item
      const [item] = await content.getItems([req.params.id], { fresh: true }); // the item API reads the store of record
      if (!item) throw fail('NOT_FOUND', `no item ${req.params.id}`);
      return ok(itemToJson(item));
    },
  );

  r.delete(
    '/items/:id',
    {
      schema: {
        tags: ['items'],
        summary: 'Soft-delete an item (service key)',
        params: IdParams,
        response: { 200: DeleteResult, ...LOOKUP_ERRORS },
      },
    },
    async (req) => {
      requireServiceKey(req);
      const deleted = await useCases.deleteItem(req.params.id, access.clock.now());
      if (!deleted) throw fail('NOT_FOUND', `no live item ${req.params.id}`);
      return ok({ id: req.params.id, deleted });
    },
  );
}
