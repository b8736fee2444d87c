/**
 * JSON schemas of the exclusion routes (note 5): engagements and "not interested" feedback.
 */
import { Type, type TLiteral } from 'typebox';
import { ENGAGEMENT_KINDS, FEEDBACK_KINDS } from './domain.js';
import { Envelope, Id } from '../kernel/http/schemas.js';

/**
 * A union of string literals whose static type is the union of `kinds` (TypeBox types a union over a
 * mapped array as `never`; the cast states the tuple it is, so clients typed from these schemas get
 * `'reply' | 'like' | 'share'`). The JSON schema is unchanged: `anyOf` of `const`s.
 */
function kindUnion<K extends string>(kinds: readonly K[], options: { description?: string; default?: K }) {
  return Type.Union(kinds.map((k) => Type.Literal(k)) as unknown as [TLiteral<K>], options);
}

/** `POST /v1/engagements` body. */
export const EngagementBody = Type.Object(
  {
    item_id: Id,
    kind: kindUnion(ENGAGEMENT_KINDS, { description: 'reply | like | share' }),
  },
  { additionalProperties: false },
);

export const EngagementResult = Envelope(
  Type.Object({ reader_id: Type.String(), item_id: Type.String(), kind: Type.String(), created: Type.Boolean() }),
);

/** `DELETE /v1/engagements/:item_id` path and query (`?kind=like`). */
export const EngagementParams = Type.Object({ item_id: Id });
export const EngagementQuery = Type.Object(
  { kind: kindUnion(ENGAGEMENT_KINDS, { description: 'reply | like | share' }) },
  { additionalProperties: false },
);

export const EngagementDeleteResult = Envelope(
  Type.Object({ reader_id: Type.String(), item_id: Type.String(), kind: Type.String(), removed: Type.Boolean() }),
);

/** `POST /v1/feedback` body. */
export const FeedbackBody = Type.Object(
  {
    item_id: Id,
    kind: kindUnion(FEEDBACK_KINDS, { description: 'not_interested' }),
  },
  { additionalProperties: false },
);

export const FeedbackResult = Envelope(
  Type.Object({
    reader_id: Type.String(),
    item_id: Type.String(),
    kind: Type.String(),
    created: Type.Boolean(),
    author_id: Type.String({
      description: "the item's author, down-weighted for the reader until author_penalty_until",
    }),
    author_penalty_until: Type.Integer({ description: 'epoch seconds' }),
  }),
);

/** `DELETE /v1/feedback/:item_id` path and query. */
export const FeedbackParams = Type.Object({ item_id: Id });
export const FeedbackQuery = Type.Object(
  { kind: Type.Optional(kindUnion(FEEDBACK_KINDS, { default: 'not_interested' })) },
  { additionalProperties: false },
);

export const FeedbackDeleteResult = Envelope(
  Type.Object({ reader_id: Type.String(), item_id: Type.String(), kind: Type.String(), removed: Type.Boolean() }),
);

/** `GET /v1/exclusions`: what the reader is excluded from, for inspection and undo. */
export const ExclusionListResult = Envelope(
  Type.Object({
    reader_id: Type.String(),
    recently_viewed: Type.Array(Type.String(), {
      description: 'recent counted views, newest first (at most FRESHET_RECENT_VIEWS)',
    }),
    engaged: Type.Array(Type.String(), { description: 'items replied to, liked or shared, most recent first' }),
    not_interested: Type.Array(
      Type.Object({
        item_id: Type.String(),
        author_id: Type.String(),
        at: Type.Integer({ description: 'epoch seconds' }),
      }),
      { description: '"not interested" items, most recent first (undo: DELETE /v1/feedback/:item_id)' },
    ),
    blocked_authors: Type.Array(Type.String(), { description: 'authors the reader blocks or who block the reader' }),
  }),
);
