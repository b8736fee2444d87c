/**
 * JSON schemas of the hot-ranking API (TypeBox): `POST /v1/views`, `GET /v1/hot`,
 * `GET /v1/hot/items/:id`. `limit` is coerced from the query string and range-checked here; `range`
 * is checked here too, by a pattern that admits exactly 1h..30d (`RANGE_PATTERN`).
 */
import { Type, type Static } from 'typebox';
import { Envelope, Filtered, Id, ItemOut, NowHeaders } from '../kernel/http/schemas.js';
import { ID_PATTERN, ID_RULE } from '../kernel/ids.js';
import { RANGE_PATTERN } from './domain.js';

/** Largest batch of `POST /v1/views`. */
export const MAX_VIEWS_PER_REQUEST = 1000;
/** Largest `limit` of `GET /v1/hot`. */
export const MAX_HOT_LIMIT = 100;

/** One view as sent. */
export const ViewIn = Type.Object(
  {
    item_id: Id,
    visitor_id: Type.Optional(
      Type.String({
        pattern: ID_PATTERN,
        description: `service key only (a reader token views as its subject); ${ID_RULE}`,
      }),
    ),
    flagged: Type.Optional(
      Type.Boolean({ description: 'service key only: the caller judged the view suspicious; counted apart' }),
    ),
    feed: Type.Optional(
      Type.Union([Type.Literal('for-you'), Type.Literal('discover'), Type.Literal('following'), Type.Literal('hot')], {
        description: "the feed the reader opened the item from: a click of that feed's impressions (/metrics)",
      }),
    ),
    at: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1e15,
        description:
          'service key only: when the view happened, epoch ms (backfills); from 1970-01-01 to the server clock + FRESHET_FUTURE_SKEW_S (at most 2100-01-01)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ViewInJson = Static<typeof ViewIn>;

/** A single view, or a batch (service key only). */
export const ViewsBody = Type.Union([ViewIn, Type.Array(ViewIn, { minItems: 1, maxItems: MAX_VIEWS_PER_REQUEST })]);

const Verdict = Type.Union(
  [
    Type.Literal('counted'),
    Type.Literal('repeat'),
    Type.Literal('budget'),
    Type.Literal('flagged'),
    Type.Literal('expired'),
    Type.Literal('unknown'),
  ],
  {
    description:
      'counted; repeat (rate limit), budget (visitor over its per-minute budget), flagged (by the caller): suspicious, kept out; expired: item past the retention; unknown: item deleted during a batch',
  },
);

const Suspicious = Type.Object({ repeat: Type.Integer(), budget: Type.Integer(), flagged: Type.Integer() });

/** The outcome of one view. */
export const ViewOut = Type.Object({
  item_id: Type.String(),
  visitor_id: Type.String(),
  counted: Type.Boolean({ description: 'whether the view went into PV/UV/score' }),
  verdict: Verdict,
  pv: Type.Integer(),
  uv: Type.Integer(),
  score: Type.Number({ description: "the item's score in the ranking after the view" }),
});

export const ViewResult = Envelope(ViewOut);
export const ViewsResult = Envelope(
  Type.Object({
    results: Type.Array(ViewOut),
    summary: Type.Object({
      counted: Type.Integer(),
      repeat: Type.Integer(),
      budget: Type.Integer(),
      flagged: Type.Integer(),
      expired: Type.Integer(),
      unknown: Type.Integer(),
    }),
  }),
);

export const HotQuery = Type.Object(
  {
    range: Type.Optional(
      Type.String({
        pattern: RANGE_PATTERN,
        description:
          '<n>h or <n>d from 1h to 30d (720h), e.g. 72h (the default): the items published in [now − range, now] of the request time',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_HOT_LIMIT, default: 20, description: `items, 1..${MAX_HOT_LIMIT}` }),
    ),
  },
  { additionalProperties: false },
);

const HotItem = Type.Object({
  id: Type.String(),
  title: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  author_id: Type.String(),
  published_at: Type.Integer({ description: 'epoch seconds' }),
  pv: Type.Integer(),
  uv: Type.Integer(),
  score: Type.Number({ description: '(alpha*pv + beta*uv) / (hours since published_at at computed_at + base)^gamma' }),
  suspicious: Suspicious,
  filtered: Type.Optional(Filtered),
});

export const HotResult = Envelope(
  Type.Object({
    range: Type.String(),
    limit: Type.Integer(),
    computed_at: Type.Integer({ description: 'when this ranking was computed, epoch seconds' }),
    computed_at_ms: Type.Integer({ description: 'the same, epoch ms' }),
    refresh_s: Type.Integer({ description: 'rankings are recomputed at most this often' }),
    params: Type.Object({ alpha: Type.Number(), beta: Type.Number(), base: Type.Number(), gamma: Type.Number() }),
    items: Type.Array(HotItem),
    suspicious: Suspicious,
  }),
);

export const HotItemResult = Envelope(
  Type.Object({
    item: ItemOut,
    pv: Type.Integer(),
    uv: Type.Integer(),
    score: Type.Union([Type.Number(), Type.Null()], {
      description:
        'score in the ranking as last written by a view or rescore; null when the item is not in the ranking: no counted view yet (never viewed, or only suspicious views), trimmed below the top FRESHET_HOT_CAP, or past the retention',
    }),
    suspicious: Suspicious,
  }),
);

/** Headers of the hot routes: the request's virtual time (service key only). */
export const HotHeaders = NowHeaders;
