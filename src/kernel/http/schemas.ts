/**
 * JSON schemas of the v1 HTTP API (TypeBox): every body, query, path parameter and response.
 * They drive validation at the edge, the OpenAPI document at `/docs`, and response serialization.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteOptions,
} from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { ID_PATTERN, ID_RULE } from '../ids.js';
import { ErrorCodes, type ErrorName } from '../errors.js';
import {
  MAX_EMBEDDING_DIM,
  MAX_TAG_CHARS,
  MAX_TAGS,
  MAX_TEXT_CHARS,
  MAX_TITLE_CHARS,
  MAX_URL_CHARS,
} from '../items/validate.js';

/** An id: 1–64 of `[A-Za-z0-9_.-]`, not `.` or `..`. */
export const Id = Type.String({ pattern: ID_PATTERN, description: ID_RULE });

/** The success envelope (docs/api.md) around `data`. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ code: Type.Literal(0), msg: Type.Literal('success'), data });
}

/** The error envelope: a non-zero stable code (docs/api.md "Error codes") and a readable message. */
export const ErrorEnvelope = Type.Object({
  code: Type.Integer({ description: 'stable error code, see docs/api.md "Error codes"' }),
  msg: Type.String(),
  data: Type.Null(),
});

/**
 * The error answers a `/v1` route documents itself, one map for every route: 400, 401, 403 (a reader
 * token acting for another reader) and 503. {@link documentEdgeErrors} adds what the edge answers
 * before any route (408, 413, 414, 431) and describes each status by its codes.
 */
export const ROUTE_ERRORS = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 503: ErrorEnvelope };

/** {@link ROUTE_ERRORS} and 404: the routes that name an item, a user or a record that may not exist. */
export const LOOKUP_ERRORS = { ...ROUTE_ERRORS, 404: ErrorEnvelope };

/**
 * A route plugin's app with its TypeBox schemas typing the requests (`app.withTypeProvider<TypeBoxTypeProvider>()`):
 * what a plugin hands the functions that each register a group of its routes.
 */
export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** An item in responses (times in epoch seconds). */
export const ItemOut = Type.Object({
  id: Type.String(),
  author_id: Type.String(),
  title: Type.String(),
  text: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.String()),
  published_at: Type.Integer({ description: 'epoch seconds' }),
  update_time: Type.Integer({ description: 'epoch seconds' }),
  popularity: Type.Number(),
  lang: Type.String({ description: 'BCP-47 primary language tag, or "und" when unknown' }),
});

/** Feeds only: the reader's muted phrases with action `warn` an item holds (docs/preferences.md). */
export const Filtered = Type.Array(Type.String(), {
  description:
    "the reader's muted phrases whose action is warn that this item holds (absent: none): show it collapsed behind them",
});

/** An item in a feed's responses: an item, plus `filtered` when it holds the reader's `warn` phrases. */
export const FeedItemOut = Type.Object({ ...ItemOut.properties, filtered: Type.Optional(Filtered) });

/** An absolute http(s) URL (scheme case-insensitive, no spaces); `javascript:`, `data:` and the like are refused. */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$';

/** An item as written by the application. */
export const ItemIn = Type.Object(
  {
    id: Id,
    author_id: Id,
    title: Type.String({ maxLength: MAX_TITLE_CHARS }),
    text: Type.Optional(Type.String({ maxLength: MAX_TEXT_CHARS })),
    url: Type.Optional(
      Type.Union([
        Type.String({ maxLength: MAX_URL_CHARS, pattern: HTTP_URL_PATTERN, description: 'an http:// or https:// URL' }),
        Type.Null(),
      ]),
    ),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: MAX_TAG_CHARS }), { maxItems: MAX_TAGS })),
    published_at: Type.Union([Type.Number({ minimum: 0 }), Type.String({ minLength: 1, maxLength: 40 })], {
      description:
        'epoch SECONDS (not ms), or an ISO 8601 date-time; from 1970-01-01 to the server clock + FRESHET_FUTURE_SKEW_S (at most 2100-01-01)',
    }),
    popularity: Type.Optional(Type.Number({ minimum: 0, description: 'popularity prior (points, likes)' })),
    lang: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 35,
        description:
          'BCP-47 language tag ("en", "pt-BR"; stored as its primary tag); detected from the text when absent',
      }),
    ),
    embedding: Type.Optional(
      Type.Array(Type.Number(), {
        minItems: 1,
        maxItems: MAX_EMBEDDING_DIM,
        description: 'the item embedding (length FRESHET_EMBEDDING_DIM); computed from the text when absent',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ItemInJson = Static<typeof ItemIn>;

/** Maximum items per `POST /v1/items`. */
export const MAX_ITEMS_PER_REQUEST = 1000;

export const ItemsBody = Type.Array(ItemIn, { minItems: 1, maxItems: MAX_ITEMS_PER_REQUEST });
export const UpsertResult = Envelope(Type.Object({ inserted: Type.Integer(), updated: Type.Integer() }));

export const IdParams = Type.Object({ id: Id });
export const DeleteResult = Envelope(Type.Object({ id: Type.String(), deleted: Type.Boolean() }));
export const ItemResult = Envelope(ItemOut);

/** `X-Freshet-Now`: the request's virtual time (service key only; range checked by `nowOf`). */
const XNow = Type.String({
  pattern: '^[0-9]{1,15}$',
  description:
    'virtual time of the request, epoch ms (service key only); from 1970-01-01 to the server clock + FRESHET_FUTURE_SKEW_S (at most 2100-01-01)',
});

/** Headers of routes that read both: which reader the service key acts for, and the request's virtual time. */
export const FeedHeaders = Type.Object({
  'x-freshet-reader': Type.Optional(
    Type.String({
      pattern: ID_PATTERN,
      description: `the reader the service key acts for (${ID_RULE}); a reader token may only name itself`,
    }),
  ),
  'x-freshet-now': Type.Optional(XNow),
});

/** Headers of routes that read only the virtual time (writes replayed on virtual time). */
export const NowHeaders = Type.Object({ 'x-freshet-now': Type.Optional(XNow) });

/** Headers of routes that read only the reader (no time-dependent work). */
export const ReaderHeaders = Type.Object({ 'x-freshet-reader': FeedHeaders.properties['x-freshet-reader'] });

/** Methods whose body Fastify parses (so they can answer 413 and 40003). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The error envelope for one HTTP status, described by the codes that answer with it (from src/kernel/errors.ts). */
function errorEnvelopeFor(status: number) {
  const codes = Object.entries(ErrorCodes).filter(([, c]) => c.status === status);
  return {
    ...ErrorEnvelope,
    description: codes.map(([name, c]) => `${c.code} ${name}`).join(', ') || 'an error envelope',
  };
}

/**
 * `onRoute` hook of the `/v1` routes: documents the answers every route can give whatever its
 * handler does — 400 (a header, query or body that fails its schema), 401 (no or a bad token: checked
 * first), 408 (a request too slow) and 431 (headers too large), both answered before any route, 503
 * (a store down), 413 where a body is parsed, 414 where the path has parameters — and
 * describes every error status by the codes that use it, so the OpenAPI document matches behaviour
 * by construction (test/http/openapi.test.ts walks it).
 */
export function documentEdgeErrors(route: RouteOptions): void {
  const schema = (route.schema ??= {});
  const response = (schema.response ??= {}) as Record<string, unknown>;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  // 408 and 431: a request too slow or with headers too large, answered before any route (clientErrorHandler)
  const statuses = ['400', '401', '408', '431', '503'];
  if (methods.some((m) => BODY_METHODS.has(m))) statuses.push('413');
  if (route.url.includes(':')) statuses.push('414');
  for (const status of statuses)
    if (response[status] === undefined && response[Number(status)] === undefined) response[status] = ErrorEnvelope;
  for (const status of Object.keys(response))
    if (response[status] === ErrorEnvelope) response[status] = errorEnvelopeFor(Number(status));
}

export const HealthResult = Envelope(Type.Object({ status: Type.String() }));

/** `/readyz`: which stores answer, by name. */
const Stores = Type.Record(Type.String(), Type.Boolean(), {
  description: 'store name → whether it answered (postgres, redis, …)',
});
export const ReadyResult = Envelope(Type.Object({ status: Type.Literal('ready'), stores: Stores }));
/** `/readyz` when a store does not answer: 503 with code 50301, `data` saying which. */
export const NotReadyResult = Type.Object({
  code: Type.Literal(50301),
  msg: Type.String(),
  data: Type.Object({ status: Type.Literal('unavailable'), stores: Stores }),
});

/** The success envelope around `data` (`{code: 0, msg: "success", data}`, docs/api.md). */
export function ok<T>(data: T): { code: 0; msg: 'success'; data: T } {
  return { code: 0, msg: 'success', data };
}

/**
 * The error envelope of one catalogue entry (src/kernel/errors.ts): `{code, msg, data}` with its code;
 * `data` is null unless the route documents more (`/readyz` names the stores). Sent with
 * `ErrorCodes[name].status`.
 */
export function errorBody<D = null>(
  name: ErrorName,
  msg: string,
  data: D = null as D,
): { code: number; msg: string; data: D } {
  return { code: ErrorCodes[name].code, msg, data };
}
