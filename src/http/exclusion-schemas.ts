/**
 * JSON schemas of the exclusion routes (note 5): engagements and "not interested" feedback.
 */
import { Type } from 'typebox';
import { ENGAGEMENT_KINDS, FEEDBACK_KINDS } from '../domain/exclusions.js';
import { Envelope, Id } from './schemas.js';

/** `POST /v1/engagements` body. */
export const EngagementBody = Type.Object(
  {
    item_id: Id,
    kind: Type.Union(ENGAGEMENT_KINDS.map((k) => Type.Literal(k)), { description: 'reply | like | share' }),
  },
  { additionalProperties: false },
);

export const EngagementResult = Envelope(
  Type.Object({ reader_id: Type.String(), item_id: Type.String(), kind: Type.String(), created: Type.Boolean() }),
);

/** `POST /v1/feedback` body. */
export const FeedbackBody = Type.Object(
  {
    item_id: Id,
    kind: Type.Union(FEEDBACK_KINDS.map((k) => Type.Literal(k)), { description: 'not_interested' }),
  },
  { additionalProperties: false },
);

export const FeedbackResult = Envelope(
  Type.Object({
    reader_id: Type.String(),
    item_id: Type.String(),
    kind: Type.String(),
    created: Type.Boolean(),
    author_id: Type.String({ description: "the item's author, down-weighted for the reader until author_penalty_until" }),
    author_penalty_until: Type.Integer({ description: 'epoch seconds' }),
  }),
);

/** `DELETE /v1/feedback/:item_id` path and query. */
export const FeedbackParams = Type.Object({ item_id: Id });
export const FeedbackQuery = Type.Object(
  { kind: Type.Optional(Type.Union(FEEDBACK_KINDS.map((k) => Type.Literal(k)), { default: 'not_interested' })) },
  { additionalProperties: false },
);

export const FeedbackDeleteResult = Envelope(
  Type.Object({ reader_id: Type.String(), item_id: Type.String(), kind: Type.String(), removed: Type.Boolean() }),
);
